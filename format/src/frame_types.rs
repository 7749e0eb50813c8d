//! How a sampled frame ran: profrj's `frameTypes` attribute on a sampler
//! node (docs/SNAPSHOT.md), the types' names in every output, and
//! async-profiler's collapsed-stack suffixes for them.
//!
//! A node stands for one method on one path; the same node can run
//! interpreted in one sample and compiled in the next, so a node carries a
//! count per type (weighted as `cumulatedElapsed`: every sample with the
//! node on its stack), written `c2:40 inlined:5 interpreted:3`, largest
//! first. Samples whose frame type is not known are in no count, so the
//! counts add up to `cumulatedElapsed` or less. `selfTypes`, in the same
//! syntax, counts the samples with the node on top (adding up to `elapsed`
//! or less): what a flat profile such as `-Xprof`'s needs.

use std::fmt;

/// How one frame ran. The numbers are the agent's in-memory encoding (0 is
/// "not known"), never written out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum FrameType {
    /// A Java method run by the interpreter.
    Interpreted = 1,
    /// A Java method compiled by C1 (tiers 1 to 3).
    C1 = 2,
    /// A Java method compiled by C2 (tier 4).
    C2 = 3,
    /// A Java method in compiled code whose tier is not known (JVMCI, or a
    /// JVM whose compiled methods do not tell).
    Jit = 4,
    /// A Java method inlined into its caller's compiled code.
    Inlined = 5,
    /// Native code outside the JVM: a Java `native` method's frame, a JNI
    /// library's or libc's C code.
    Native = 6,
    /// The JVM's own C++ code (libjvm).
    Vm = 7,
    /// Generated code that is no Java method: a stub, an adapter, the
    /// interpreter's own code.
    Stub = 8,
    /// The kernel.
    Kernel = 9,
}

/// Every type, in encoding order.
pub const ALL: [FrameType; 9] = [
    FrameType::Interpreted,
    FrameType::C1,
    FrameType::C2,
    FrameType::Jit,
    FrameType::Inlined,
    FrameType::Native,
    FrameType::Vm,
    FrameType::Stub,
    FrameType::Kernel,
];

impl FrameType {
    /// The type's name in a snapshot and in every output.
    pub fn name(self) -> &'static str {
        match self {
            FrameType::Interpreted => "interpreted",
            FrameType::C1 => "c1",
            FrameType::C2 => "c2",
            FrameType::Jit => "jit",
            FrameType::Inlined => "inlined",
            FrameType::Native => "native",
            FrameType::Vm => "vm",
            FrameType::Stub => "stub",
            FrameType::Kernel => "kernel",
        }
    }

    /// The type named `name`.
    pub fn from_name(name: &str) -> Option<FrameType> {
        ALL.into_iter().find(|t| t.name() == name)
    }

    /// The type of encoding `code` (0 and unknown codes: none).
    pub fn from_code(code: u8) -> Option<FrameType> {
        ALL.into_iter().find(|t| *t as u8 == code)
    }

    /// async-profiler's suffix for a frame of this type in collapsed stacks
    /// (its `ann` option): none for native, VM and stub frames.
    pub fn collapsed_suffix(self) -> &'static str {
        match self {
            FrameType::Interpreted => "_[0]",
            FrameType::C1 => "_[1]",
            FrameType::C2 | FrameType::Jit => "_[j]",
            FrameType::Inlined => "_[i]",
            FrameType::Kernel => "_[k]",
            FrameType::Native | FrameType::Vm | FrameType::Stub => "",
        }
    }
}

impl fmt::Display for FrameType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `frameTypes` value that is not `type:count` pairs of known types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameTypesError(pub String);

impl fmt::Display for FrameTypesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad frameTypes {:?} (expected space-separated TYPE:COUNT, TYPE one of {})",
            self.0,
            ALL.map(FrameType::name).join(", ")
        )
    }
}

impl std::error::Error for FrameTypesError {}

/// Reads a `frameTypes` value: each type at most once, counts as written.
pub fn parse(value: &str) -> Result<Vec<(FrameType, u64)>, FrameTypesError> {
    let bad = || FrameTypesError(value.chars().take(200).collect());
    let mut out: Vec<(FrameType, u64)> = Vec::new();
    for pair in value.split_ascii_whitespace() {
        let (name, count) = pair.split_once(':').ok_or_else(bad)?;
        let t = FrameType::from_name(name).ok_or_else(bad)?;
        let n = count.parse::<u64>().map_err(|_| bad())?;
        if out.iter().any(|(u, _)| *u == t) {
            return Err(bad());
        }
        out.push((t, n));
    }
    Ok(out)
}

/// Writes counts as a `frameTypes` value: non-zero ones, largest first
/// (ties in encoding order); empty when there is none.
pub fn write(counts: &[(FrameType, u64)]) -> String {
    let mut v: Vec<(FrameType, u64)> = counts.iter().copied().filter(|(_, n)| *n > 0).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.iter()
        .map(|(t, n)| format!("{}:{n}", t.name()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The type most of `counts` have (ties: the first in encoding order).
pub fn dominant(counts: &[(FrameType, u64)]) -> Option<FrameType> {
    counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(t, _)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_values_read_back() {
        let counts = [
            (FrameType::Inlined, 5),
            (FrameType::C2, 40),
            (FrameType::Vm, 0),
        ];
        let text = write(&counts);
        assert_eq!(text, "c2:40 inlined:5");
        assert_eq!(
            parse(&text).unwrap(),
            vec![(FrameType::C2, 40), (FrameType::Inlined, 5)]
        );
        assert_eq!(parse("").unwrap(), vec![]);
        assert_eq!(dominant(&parse(&text).unwrap()), Some(FrameType::C2));
    }

    #[test]
    fn bad_values_are_refused() {
        for bad in ["c3:1", "c2", "c2:x", "c2:1 c2:2", "c2:-1"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn codes_and_names_are_one_to_one() {
        for t in ALL {
            assert_eq!(FrameType::from_code(t as u8), Some(t));
            assert_eq!(FrameType::from_name(t.name()), Some(t));
        }
        assert_eq!(FrameType::from_code(0), None);
    }
}
