//! The JVM's opcodes by their mnemonics (JVMS §6.5, upper case, as ASM's
//! `Opcodes` names them), so code reads `ALOAD` rather than `0x19`. The
//! reserved opcodes (`breakpoint`, `impdep1`, `impdep2`) are left out: a
//! class file may not use them.
//!
//! Some editor code relies on how the JVMS numbers families of opcodes (the
//! `_0`…`_3` forms follow each other, the arithmetic ops cycle through int,
//! long, float, double); those places say so.

macro_rules! opcodes {
    ($($(#[$doc:meta])* $name:ident = $value:literal;)*) => {
        $($(#[$doc])* pub const $name: u8 = $value;)*

        /// (opcode, mnemonic) of every opcode, in opcode order from 0.
        const TABLE: &[(u8, &str)] = &[$(($value, stringify!($name)),)*];
    };
}

opcodes! {
    /// Does nothing.
    NOP = 0x00;
    /// Pushes `null`.
    ACONST_NULL = 0x01;
    /// Pushes int -1.
    ICONST_M1 = 0x02;
    /// Pushes int 0.
    ICONST_0 = 0x03;
    /// Pushes int 1.
    ICONST_1 = 0x04;
    /// Pushes int 2.
    ICONST_2 = 0x05;
    /// Pushes int 3.
    ICONST_3 = 0x06;
    /// Pushes int 4.
    ICONST_4 = 0x07;
    /// Pushes int 5.
    ICONST_5 = 0x08;
    /// Pushes long 0.
    LCONST_0 = 0x09;
    /// Pushes long 1.
    LCONST_1 = 0x0a;
    /// Pushes float 0.
    FCONST_0 = 0x0b;
    /// Pushes float 1.
    FCONST_1 = 0x0c;
    /// Pushes float 2.
    FCONST_2 = 0x0d;
    /// Pushes double 0.
    DCONST_0 = 0x0e;
    /// Pushes double 1.
    DCONST_1 = 0x0f;
    /// Pushes a signed byte operand as an int.
    BIPUSH = 0x10;
    /// Pushes a signed 16-bit operand as an int.
    SIPUSH = 0x11;
    /// Pushes a constant, one-byte pool index.
    LDC = 0x12;
    /// Pushes a constant, two-byte pool index.
    LDC_W = 0x13;
    /// Pushes a long or double constant.
    LDC2_W = 0x14;
    /// Loads an int local.
    ILOAD = 0x15;
    /// Loads a long local.
    LLOAD = 0x16;
    /// Loads a float local.
    FLOAD = 0x17;
    /// Loads a double local.
    DLOAD = 0x18;
    /// Loads a reference local.
    ALOAD = 0x19;
    /// Loads int local 0.
    ILOAD_0 = 0x1a;
    /// Loads int local 1.
    ILOAD_1 = 0x1b;
    /// Loads int local 2.
    ILOAD_2 = 0x1c;
    /// Loads int local 3.
    ILOAD_3 = 0x1d;
    /// Loads long local 0.
    LLOAD_0 = 0x1e;
    /// Loads long local 1.
    LLOAD_1 = 0x1f;
    /// Loads long local 2.
    LLOAD_2 = 0x20;
    /// Loads long local 3.
    LLOAD_3 = 0x21;
    /// Loads float local 0.
    FLOAD_0 = 0x22;
    /// Loads float local 1.
    FLOAD_1 = 0x23;
    /// Loads float local 2.
    FLOAD_2 = 0x24;
    /// Loads float local 3.
    FLOAD_3 = 0x25;
    /// Loads double local 0.
    DLOAD_0 = 0x26;
    /// Loads double local 1.
    DLOAD_1 = 0x27;
    /// Loads double local 2.
    DLOAD_2 = 0x28;
    /// Loads double local 3.
    DLOAD_3 = 0x29;
    /// Loads reference local 0 (`this` in an instance method).
    ALOAD_0 = 0x2a;
    /// Loads reference local 1.
    ALOAD_1 = 0x2b;
    /// Loads reference local 2.
    ALOAD_2 = 0x2c;
    /// Loads reference local 3.
    ALOAD_3 = 0x2d;
    /// Loads from an int array.
    IALOAD = 0x2e;
    /// Loads from a long array.
    LALOAD = 0x2f;
    /// Loads from a float array.
    FALOAD = 0x30;
    /// Loads from a double array.
    DALOAD = 0x31;
    /// Loads from a reference array.
    AALOAD = 0x32;
    /// Loads from a byte or boolean array.
    BALOAD = 0x33;
    /// Loads from a char array.
    CALOAD = 0x34;
    /// Loads from a short array.
    SALOAD = 0x35;
    /// Stores an int local.
    ISTORE = 0x36;
    /// Stores a long local.
    LSTORE = 0x37;
    /// Stores a float local.
    FSTORE = 0x38;
    /// Stores a double local.
    DSTORE = 0x39;
    /// Stores a reference (or return address) local.
    ASTORE = 0x3a;
    /// Stores int local 0.
    ISTORE_0 = 0x3b;
    /// Stores int local 1.
    ISTORE_1 = 0x3c;
    /// Stores int local 2.
    ISTORE_2 = 0x3d;
    /// Stores int local 3.
    ISTORE_3 = 0x3e;
    /// Stores long local 0.
    LSTORE_0 = 0x3f;
    /// Stores long local 1.
    LSTORE_1 = 0x40;
    /// Stores long local 2.
    LSTORE_2 = 0x41;
    /// Stores long local 3.
    LSTORE_3 = 0x42;
    /// Stores float local 0.
    FSTORE_0 = 0x43;
    /// Stores float local 1.
    FSTORE_1 = 0x44;
    /// Stores float local 2.
    FSTORE_2 = 0x45;
    /// Stores float local 3.
    FSTORE_3 = 0x46;
    /// Stores double local 0.
    DSTORE_0 = 0x47;
    /// Stores double local 1.
    DSTORE_1 = 0x48;
    /// Stores double local 2.
    DSTORE_2 = 0x49;
    /// Stores double local 3.
    DSTORE_3 = 0x4a;
    /// Stores reference local 0.
    ASTORE_0 = 0x4b;
    /// Stores reference local 1.
    ASTORE_1 = 0x4c;
    /// Stores reference local 2.
    ASTORE_2 = 0x4d;
    /// Stores reference local 3.
    ASTORE_3 = 0x4e;
    /// Stores into an int array.
    IASTORE = 0x4f;
    /// Stores into a long array.
    LASTORE = 0x50;
    /// Stores into a float array.
    FASTORE = 0x51;
    /// Stores into a double array.
    DASTORE = 0x52;
    /// Stores into a reference array.
    AASTORE = 0x53;
    /// Stores into a byte or boolean array.
    BASTORE = 0x54;
    /// Stores into a char array.
    CASTORE = 0x55;
    /// Stores into a short array.
    SASTORE = 0x56;
    /// Drops one slot.
    POP = 0x57;
    /// Drops two slots (one long or double).
    POP2 = 0x58;
    /// Duplicates the top slot.
    DUP = 0x59;
    /// Duplicates the top slot under the second.
    DUP_X1 = 0x5a;
    /// Duplicates the top slot under the third.
    DUP_X2 = 0x5b;
    /// Duplicates the top two slots.
    DUP2 = 0x5c;
    /// Duplicates the top two slots under the third.
    DUP2_X1 = 0x5d;
    /// Duplicates the top two slots under the fourth.
    DUP2_X2 = 0x5e;
    /// Swaps the top two slots.
    SWAP = 0x5f;
    /// int addition.
    IADD = 0x60;
    /// long addition.
    LADD = 0x61;
    /// float addition.
    FADD = 0x62;
    /// double addition.
    DADD = 0x63;
    /// int subtraction.
    ISUB = 0x64;
    /// long subtraction.
    LSUB = 0x65;
    /// float subtraction.
    FSUB = 0x66;
    /// double subtraction.
    DSUB = 0x67;
    /// int multiplication.
    IMUL = 0x68;
    /// long multiplication.
    LMUL = 0x69;
    /// float multiplication.
    FMUL = 0x6a;
    /// double multiplication.
    DMUL = 0x6b;
    /// int division (throws on zero).
    IDIV = 0x6c;
    /// long division (throws on zero).
    LDIV = 0x6d;
    /// float division.
    FDIV = 0x6e;
    /// double division.
    DDIV = 0x6f;
    /// int remainder (throws on zero).
    IREM = 0x70;
    /// long remainder (throws on zero).
    LREM = 0x71;
    /// float remainder.
    FREM = 0x72;
    /// double remainder.
    DREM = 0x73;
    /// int negation.
    INEG = 0x74;
    /// long negation.
    LNEG = 0x75;
    /// float negation.
    FNEG = 0x76;
    /// double negation.
    DNEG = 0x77;
    /// int shift left.
    ISHL = 0x78;
    /// long shift left (int shift count).
    LSHL = 0x79;
    /// int arithmetic shift right.
    ISHR = 0x7a;
    /// long arithmetic shift right (int shift count).
    LSHR = 0x7b;
    /// int logical shift right.
    IUSHR = 0x7c;
    /// long logical shift right (int shift count).
    LUSHR = 0x7d;
    /// int bitwise and.
    IAND = 0x7e;
    /// long bitwise and.
    LAND = 0x7f;
    /// int bitwise or.
    IOR = 0x80;
    /// long bitwise or.
    LOR = 0x81;
    /// int bitwise xor.
    IXOR = 0x82;
    /// long bitwise xor.
    LXOR = 0x83;
    /// Adds a signed constant to an int local, in place.
    IINC = 0x84;
    /// int to long.
    I2L = 0x85;
    /// int to float.
    I2F = 0x86;
    /// int to double.
    I2D = 0x87;
    /// long to int.
    L2I = 0x88;
    /// long to float.
    L2F = 0x89;
    /// long to double.
    L2D = 0x8a;
    /// float to int.
    F2I = 0x8b;
    /// float to long.
    F2L = 0x8c;
    /// float to double.
    F2D = 0x8d;
    /// double to int.
    D2I = 0x8e;
    /// double to long.
    D2L = 0x8f;
    /// double to float.
    D2F = 0x90;
    /// int truncated to byte.
    I2B = 0x91;
    /// int truncated to char.
    I2C = 0x92;
    /// int truncated to short.
    I2S = 0x93;
    /// Compares two longs: -1, 0 or 1.
    LCMP = 0x94;
    /// Compares two floats, NaN giving -1.
    FCMPL = 0x95;
    /// Compares two floats, NaN giving 1.
    FCMPG = 0x96;
    /// Compares two doubles, NaN giving -1.
    DCMPL = 0x97;
    /// Compares two doubles, NaN giving 1.
    DCMPG = 0x98;
    /// Branches if the int is 0.
    IFEQ = 0x99;
    /// Branches if the int is not 0.
    IFNE = 0x9a;
    /// Branches if the int is below 0.
    IFLT = 0x9b;
    /// Branches if the int is at least 0.
    IFGE = 0x9c;
    /// Branches if the int is above 0.
    IFGT = 0x9d;
    /// Branches if the int is at most 0.
    IFLE = 0x9e;
    /// Branches if two ints are equal.
    IF_ICMPEQ = 0x9f;
    /// Branches if two ints differ.
    IF_ICMPNE = 0xa0;
    /// Branches if the first int is below the second.
    IF_ICMPLT = 0xa1;
    /// Branches if the first int is at least the second.
    IF_ICMPGE = 0xa2;
    /// Branches if the first int is above the second.
    IF_ICMPGT = 0xa3;
    /// Branches if the first int is at most the second.
    IF_ICMPLE = 0xa4;
    /// Branches if two references are the same.
    IF_ACMPEQ = 0xa5;
    /// Branches if two references differ.
    IF_ACMPNE = 0xa6;
    /// Jumps (16-bit offset).
    GOTO = 0xa7;
    /// Jumps to a subroutine, pushing the return address (16-bit offset).
    JSR = 0xa8;
    /// Returns from a subroutine to the address in a local.
    RET = 0xa9;
    /// Jumps by index into a table of offsets.
    TABLESWITCH = 0xaa;
    /// Jumps by key through sorted (key, offset) pairs.
    LOOKUPSWITCH = 0xab;
    /// Returns an int.
    IRETURN = 0xac;
    /// Returns a long.
    LRETURN = 0xad;
    /// Returns a float.
    FRETURN = 0xae;
    /// Returns a double.
    DRETURN = 0xaf;
    /// Returns a reference.
    ARETURN = 0xb0;
    /// Returns from a `void` method.
    RETURN = 0xb1;
    /// Reads a static field.
    GETSTATIC = 0xb2;
    /// Writes a static field.
    PUTSTATIC = 0xb3;
    /// Reads an instance field.
    GETFIELD = 0xb4;
    /// Writes an instance field.
    PUTFIELD = 0xb5;
    /// Calls an instance method, dispatched on the receiver's class.
    INVOKEVIRTUAL = 0xb6;
    /// Calls a constructor, private or super method: no dispatch.
    INVOKESPECIAL = 0xb7;
    /// Calls a static method.
    INVOKESTATIC = 0xb8;
    /// Calls an interface method.
    INVOKEINTERFACE = 0xb9;
    /// Calls the call site a bootstrap method links.
    INVOKEDYNAMIC = 0xba;
    /// Allocates an object, uninitialized until its `<init>` call.
    NEW = 0xbb;
    /// Allocates an array of a primitive type (`T_*` operand).
    NEWARRAY = 0xbc;
    /// Allocates an array of references.
    ANEWARRAY = 0xbd;
    /// Pushes an array's length.
    ARRAYLENGTH = 0xbe;
    /// Throws the throwable on the stack.
    ATHROW = 0xbf;
    /// Checks a reference's type, throwing if it does not fit.
    CHECKCAST = 0xc0;
    /// Tests a reference's type: 1 or 0.
    INSTANCEOF = 0xc1;
    /// Enters an object's monitor.
    MONITORENTER = 0xc2;
    /// Leaves an object's monitor.
    MONITOREXIT = 0xc3;
    /// Gives the next load, store, `ret` or `iinc` two-byte operands.
    WIDE = 0xc4;
    /// Allocates a multi-dimensional array.
    MULTIANEWARRAY = 0xc5;
    /// Branches if the reference is null.
    IFNULL = 0xc6;
    /// Branches if the reference is not null.
    IFNONNULL = 0xc7;
    /// Jumps (32-bit offset).
    GOTO_W = 0xc8;
    /// Jumps to a subroutine (32-bit offset).
    JSR_W = 0xc9;
}

/// `newarray`'s element type codes (JVMS §6.5 `newarray`, table 6.5.newarray-A).
pub mod array_type {
    /// `boolean[]`.
    pub const T_BOOLEAN: u8 = 4;
    /// `char[]`.
    pub const T_CHAR: u8 = 5;
    /// `float[]`.
    pub const T_FLOAT: u8 = 6;
    /// `double[]`.
    pub const T_DOUBLE: u8 = 7;
    /// `byte[]`.
    pub const T_BYTE: u8 = 8;
    /// `short[]`.
    pub const T_SHORT: u8 = 9;
    /// `int[]`.
    pub const T_INT: u8 = 10;
    /// `long[]`.
    pub const T_LONG: u8 = 11;

    /// The array descriptor for an element type code (`T_INT` is `[I`).
    pub fn descriptor(atype: u8) -> Option<&'static str> {
        Some(match atype {
            T_BOOLEAN => "[Z",
            T_CHAR => "[C",
            T_FLOAT => "[F",
            T_DOUBLE => "[D",
            T_BYTE => "[B",
            T_SHORT => "[S",
            T_INT => "[I",
            T_LONG => "[J",
            _ => return None,
        })
    }
}

/// The mnemonic of `op` in upper case (`0x19` is `"ALOAD"`), for messages;
/// `None` for an opcode a class may not use.
pub fn mnemonic(op: u8) -> Option<&'static str> {
    TABLE.get(op as usize).map(|&(_, m)| m)
}

/// Is `op` a conditional branch (`if*`, `ifnull`, `ifnonnull`)?
pub fn is_conditional(op: u8) -> bool {
    matches!(op, IFEQ..=IF_ACMPNE | IFNULL | IFNONNULL)
}

/// Is `op` one of the six returns?
pub fn is_return(op: u8) -> bool {
    matches!(op, IRETURN..=RETURN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_every_opcode_in_order() {
        assert_eq!(TABLE.len(), 202);
        for (i, &(op, _)) in TABLE.iter().enumerate() {
            assert_eq!(op as usize, i, "{:?}", TABLE[i]);
        }
        assert_eq!(mnemonic(0xca), None); // breakpoint: reserved
        assert_eq!(mnemonic(0xff), None);
    }

    /// A few values checked against JVMS §7 (opcode mnemonics by opcode).
    #[test]
    fn values_agree_with_the_jvms() {
        for (op, value, name) in [
            (NOP, 0x00, "NOP"),
            (ICONST_M1, 0x02, "ICONST_M1"),
            (LDC2_W, 0x14, "LDC2_W"),
            (ALOAD, 0x19, "ALOAD"),
            (ASTORE_3, 0x4e, "ASTORE_3"),
            (DUP2_X2, 0x5e, "DUP2_X2"),
            (LXOR, 0x83, "LXOR"),
            (IINC, 0x84, "IINC"),
            (DCMPG, 0x98, "DCMPG"),
            (IF_ACMPNE, 0xa6, "IF_ACMPNE"),
            (RET, 0xa9, "RET"),
            (RETURN, 0xb1, "RETURN"),
            (INVOKEDYNAMIC, 0xba, "INVOKEDYNAMIC"),
            (MONITOREXIT, 0xc3, "MONITOREXIT"),
            (JSR_W, 0xc9, "JSR_W"),
        ] {
            assert_eq!(op, value, "{name}");
            assert_eq!(mnemonic(op), Some(name));
        }
    }

    /// The families the editor computes with: `_0` forms four apart per
    /// type, arithmetic cycling int, long, float, double.
    #[test]
    fn families_are_numbered_as_the_editor_assumes() {
        assert_eq!(ILOAD_0 + 4 * (ALOAD - ILOAD), ALOAD_0);
        assert_eq!(ISTORE_0 + 4 * (ASTORE - ISTORE), ASTORE_0);
        assert_eq!(IADD % 4, 0);
        for (i, op) in (IADD..=DREM).enumerate() {
            let suffix = mnemonic(op).unwrap().as_bytes()[0];
            assert_eq!(suffix, b"ILFD"[i % 4], "{:?}", mnemonic(op));
        }
        assert_eq!(array_type::descriptor(array_type::T_LONG), Some("[J"));
    }
}
