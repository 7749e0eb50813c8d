//! Instruction lengths, from the JVM specification (chapter 6).

use crate::opcodes::*;

/// Does `op` take a 16-bit branch offset?
pub fn is_branch16(op: u8) -> bool {
    matches!(op, IFEQ..=JSR | IFNULL | IFNONNULL)
}

/// Length of a fixed-size instruction including its opcode; `None` for the
/// variable-length ones (switches, wide) and for opcodes a class may not use.
pub fn fixed_len(op: u8) -> Option<usize> {
    Some(match op {
        NOP..=DCONST_1 => 1,
        BIPUSH => 2,
        SIPUSH => 3,
        LDC => 2,
        LDC_W | LDC2_W => 3,
        ILOAD..=ALOAD => 2,
        ILOAD_0..=SALOAD => 1,
        ISTORE..=ASTORE => 2,
        ISTORE_0..=LXOR => 1,
        IINC => 3,
        I2L..=DCMPG => 1,
        IFEQ..=JSR => 3,
        RET => 2,
        IRETURN..=RETURN => 1,
        GETSTATIC..=INVOKESTATIC => 3,
        INVOKEINTERFACE | INVOKEDYNAMIC => 5,
        NEW => 3,
        NEWARRAY => 2,
        ANEWARRAY => 3,
        ARRAYLENGTH | ATHROW => 1,
        CHECKCAST | INSTANCEOF => 3,
        MONITORENTER | MONITOREXIT => 1,
        MULTIANEWARRAY => 4,
        IFNULL | IFNONNULL => 3,
        GOTO_W | JSR_W => 5,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opcodes::mnemonic;

    /// The named opcodes are exactly those this table (or the decoder's
    /// variable-length cases) knows.
    #[test]
    fn every_named_opcode_has_a_length_and_no_other() {
        for op in 0..=255u8 {
            let variable = matches!(op, TABLESWITCH | LOOKUPSWITCH | WIDE);
            assert_eq!(
                mnemonic(op).is_some(),
                fixed_len(op).is_some() || variable,
                "{op:#04x}"
            );
            assert!(!(variable && fixed_len(op).is_some()), "{op:#04x}");
        }
    }

    #[test]
    fn lengths_agree_with_the_jvms() {
        for (op, len) in [
            (NOP, 1),
            (BIPUSH, 2),
            (SIPUSH, 3),
            (LDC, 2),
            (LDC_W, 3),
            (ALOAD, 2),
            (ALOAD_0, 1),
            (IINC, 3),
            (GOTO, 3),
            (RET, 2),
            (INVOKEINTERFACE, 5),
            (INVOKEDYNAMIC, 5),
            (NEWARRAY, 2),
            (MULTIANEWARRAY, 4),
            (GOTO_W, 5),
        ] {
            assert_eq!(fixed_len(op), Some(len), "{:?}", mnemonic(op));
        }
        assert!(is_branch16(IFNONNULL) && is_branch16(JSR) && !is_branch16(GOTO_W));
    }
}
