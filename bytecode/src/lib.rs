//! Java class files, read and written without a JVM.
//!
//! `read` borrows the input and builds the model; `write` turns the model back
//! into bytes. What nobody edits is kept exactly as read — the constant pool
//! (only ever appended to), unknown attributes, untouched methods — so a class
//! read and written unchanged comes back byte for byte.

#![deny(missing_docs)]

pub mod class_id;
pub mod code;
pub mod edit;
mod error;
pub mod model;
pub mod opcodes;
pub mod read;
pub mod tags;
pub mod write;

pub use class_id::class_id;
pub use error::ReadError;
pub use model::{Attribute, ClassFile, ConstantPool, Member};
pub use read::parse_class;
pub use write::write_class;
