use super::Cursor;
use crate::tags::*;
use crate::{ConstantPool, ReadError};

/// Reads `count - 1` entries (count as in the class file) into a pool that
/// keeps their bytes verbatim.
pub fn read_constant_pool<'a>(
    c: &mut Cursor<'a>,
    data: &'a [u8],
) -> Result<ConstantPool<'a>, ReadError> {
    let count = c.u16("constant_pool_count")?;
    if count == 0 {
        return Err(ReadError::new(c.pos() - 2, "constant_pool_count is 0"));
    }
    let start = c.pos();
    let mut entries = vec![None; count as usize];
    let mut i = 1usize;
    while i < count as usize {
        let at = c.pos();
        entries[i] = Some((at - start) as u32);
        let tag = c.u8("constant tag")?;
        let size = match tag {
            CONSTANT_UTF8 => c.u16("Utf8 length")? as usize,
            _ => body_len(tag).ok_or_else(|| {
                ReadError::new(at, format!("unknown constant tag {tag} at index {i}"))
            })?,
        };
        c.bytes(size, "constant")?;
        // Longs and doubles take two slots.
        i += slots(tag);
        if i > count as usize {
            return Err(ReadError::new(
                at,
                "a long/double constant overruns the pool",
            ));
        }
    }
    Ok(ConstantPool {
        raw: &data[start..c.pos()],
        entries,
        appended: Vec::new(),
        appended_slots: 0,
        classes: Default::default(),
        utf8_memo: Vec::new(),
        appended_classes: Vec::new(),
    })
}
