//! JaCoCo's class id: a CRC64 of the class file's bytes (the ISO 3309
//! polynomial, reflected, table-driven, starting from 0 and without a final
//! xor), as `org.jacoco.core.internal.data.CRC64.classId` computes it, so
//! that a class's id in a profrj snapshot and in JaCoCo's exec file or XML
//! report are the same number for the same bytes.

/// The reflected ISO 3309 polynomial (x^64 + x^4 + x^3 + x + 1).
const POLY64REV: u64 = 0xd800_0000_0000_0000;

/// The byte-at-a-time table, built at compile time.
const TABLE: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut v = i as u64;
        let mut bit = 0;
        while bit < 8 {
            v = if v & 1 == 1 {
                (v >> 1) ^ POLY64REV
            } else {
                v >> 1
            };
            bit += 1;
        }
        table[i] = v;
        i += 1;
    }
    table
};

fn update(sum: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(sum, |sum, &b| {
        (sum >> 8) ^ TABLE[((sum as u8) ^ b) as usize]
    })
}

/// Class files of major version 53 (Java 9): JaCoCo once patched them to 52
/// to run on Java 8, and kept the id that patch gave ever since; so does
/// this.
const V9: u8 = 53;
const V1_8: u8 = 52;

/// The class id of `bytes`, a class file as the JVM handed it over.
pub fn class_id(bytes: &[u8]) -> u64 {
    if bytes.len() > 7 && bytes[6] == 0 && bytes[7] == V9 {
        let sum = update(0, &bytes[..7]);
        let sum = update(sum, &[V1_8]);
        return update(sum, &bytes[8..]);
    }
    update(0, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values Debian's JaCoCo 0.8.6 gives (`CRC64.classId` run on these
    /// bytes); the Java 9 case equals its Java 8 twin, as in JaCoCo.
    #[test]
    fn known_values() {
        assert_eq!(class_id(b""), 0);
        assert_eq!(class_id(b"JaCoCo"), 0x53fe_83fe_8bd2_e000);
        assert_eq!(class_id(b"123456789"), 0x46a5_a938_8a5b_effe);
        assert_eq!(
            class_id(&[0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 53, 1, 2, 3]),
            0xa2c3_1cf9_c000_00fd
        );
        let mut v9 = vec![0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 53, 1, 2, 3];
        let v8 = {
            let mut v = v9.clone();
            v[7] = 52;
            v
        };
        assert_eq!(class_id(&v9), class_id(&v8));
        v9[7] = 54;
        assert_ne!(class_id(&v9), class_id(&v8));
    }
}
