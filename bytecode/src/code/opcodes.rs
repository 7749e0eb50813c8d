//! Instruction lengths, from the JVM specification (chapter 6).

pub const GOTO_W: u8 = 0xc8;
pub const JSR_W: u8 = 0xc9;
pub const TABLESWITCH: u8 = 0xaa;
pub const LOOKUPSWITCH: u8 = 0xab;
pub const WIDE: u8 = 0xc4;
pub const IINC: u8 = 0x84;

/// Does `op` take a 16-bit branch offset?
pub fn is_branch16(op: u8) -> bool {
    matches!(op, 0x99..=0xa8 | 0xc6 | 0xc7)
}

/// Length of a fixed-size instruction including its opcode; `None` for the
/// variable-length ones (switches, wide) and for opcodes a class may not use.
pub fn fixed_len(op: u8) -> Option<usize> {
    Some(match op {
        0x00..=0x0f => 1,
        0x10 => 2,
        0x11 => 3,
        0x12 => 2,
        0x13 | 0x14 => 3,
        0x15..=0x19 => 2,
        0x1a..=0x35 => 1,
        0x36..=0x3a => 2,
        0x3b..=0x83 => 1,
        0x84 => 3,
        0x85..=0x98 => 1,
        0x99..=0xa8 => 3,
        0xa9 => 2,
        0xac..=0xb1 => 1,
        0xb2..=0xb8 => 3,
        0xb9 | 0xba => 5,
        0xbb => 3,
        0xbc => 2,
        0xbd => 3,
        0xbe | 0xbf => 1,
        0xc0 | 0xc1 => 3,
        0xc2 | 0xc3 => 1,
        0xc5 => 4,
        0xc6 | 0xc7 => 3,
        0xc8 | 0xc9 => 5,
        _ => return None,
    })
}
