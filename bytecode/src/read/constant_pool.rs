use super::Cursor;
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
            1 => c.u16("Utf8 length")? as usize,
            3 | 4 => 4,
            5 | 6 => 8,
            7 | 8 | 16 | 19 | 20 => 2,
            9 | 10 | 11 | 12 | 17 | 18 => 4,
            15 => 3,
            _ => {
                return Err(ReadError::new(
                    at,
                    format!("unknown constant tag {tag} at index {i}"),
                ))
            }
        };
        c.bytes(size, "constant")?;
        // Longs and doubles take two slots.
        i += if tag == 5 || tag == 6 { 2 } else { 1 };
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
