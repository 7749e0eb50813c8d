//! Reading: bytes → model. Every length and count is checked against the
//! input before use, so malformed input is an error (with its offset), never a
//! panic, a loop that does not end, or an allocation larger than the input.

mod class;
mod constant_pool;
mod cursor;

pub use class::parse_class;
pub(crate) use class::read_attributes;
pub(crate) use cursor::Cursor;
