//! One thread's `-Xprof` flat profile, built from its `<sampler>` call tree:
//! every sample lands in exactly one bucket (a method's row of a section,
//! as its code or its native ticks, or a thread-local row), so the buckets
//! add up to the thread's samples. docs/READING.md ("report --style
//! xprof") has the rules; this file is them.

use crate::error::CliError;
use crate::snapshot::{type_slot, CallThread, FrameCounts, Names, Node};
use profrj_format::frame_types::FrameType;
use std::collections::HashMap;

/// The method sections, in -Xprof's order, and profrj's for ticks whose
/// frame type the snapshot does not give.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Interpreted,
    Compiled,
    /// Java `native` methods.
    Stub,
    /// Generated code that is no Java method (the code map's names).
    RuntimeStub,
    /// Java methods whose frame type is not recorded.
    Unknown,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Interpreted,
        Kind::Compiled,
        Kind::Stub,
        Kind::RuntimeStub,
        Kind::Unknown,
    ];
}

/// A row's ticks: with the row's frame on top (`code`), and with native
/// or VM code above it (`native`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ticks {
    pub code: u64,
    pub native: u64,
}

impl Ticks {
    pub fn total(&self) -> u64 {
        self.code.saturating_add(self.native)
    }
}

/// A thread-local row: ticks that no method's row holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Local {
    /// Native code above a Java frame, in the JVM's class loading.
    ClassLoader,
    /// The template interpreter's own code, no method's.
    Interpreter,
    /// Native code with no frame below it that is a Java method, a stub or
    /// synthetic.
    NativeWithoutJava,
    /// A synthetic frame (its name's id) and what is above it.
    Synthetic(u32),
}

impl Local {
    /// The row's label (as -Xprof's where it had one).
    pub fn label(self, names: &Names) -> String {
        match self {
            Local::ClassLoader => "Class loader".into(),
            Local::Interpreter => "Interpreter".into(),
            Local::NativeWithoutJava => "Native code without a Java frame".into(),
            Local::Synthetic(name) => format!("Unknown code {}", names.get(name)),
        }
    }
}

/// One thread's flat profile.
#[derive(Debug, Default)]
pub struct Flat {
    /// Per section, per method name (a [`Names`] id).
    pub rows: HashMap<(Kind, u32), Ticks>,
    /// Thread-local rows.
    pub thread_local: HashMap<Local, u64>,
    /// Every sample of the thread.
    pub total: u64,
    /// Some node of the thread has frame types.
    pub typed: bool,
}

impl Flat {
    /// What the buckets hold together: [`Flat::total`] by construction.
    pub fn bucket_sum(&self) -> u64 {
        let rows = self.rows.values().map(Ticks::total);
        let local = self.thread_local.values().copied();
        rows.chain(local).fold(0u64, u64::saturating_add)
    }
}

/// The synthetic frames the agent and the reader make for samples without
/// a (whole) stack: failed walks (agent/src/vm/async_trace.rs
/// `failure_name`), methods without a jmethodID, threads that never
/// answered, samples without any frame. Each is a thread-local row.
const SYNTHETIC: &[&str] = &[
    "[no_Java_frame]",
    "[no_class_load]",
    "[GC_active]",
    "[unknown_not_Java]",
    "[not_walkable_not_Java]",
    "[unknown_Java]",
    "[not_walkable_Java]",
    "[unknown_state]",
    "[thread_exit]",
    "[deopt]",
    "[safepoint]",
    "[not_Java_thread]",
    "[near_stack_limit]",
    "[walk_fault]",
    "[frozen_frames]",
    "[unknown_failure]",
    "[unknown_method]",
    "[no_signal]",
    crate::snapshot::NO_JAVA_FRAME,
];
/// The root a stack deeper than `depth` hangs under: no frame of its own.
const TRUNCATED: &str = "[truncated]";
/// A stub the code map has no name for.
const UNKNOWN_STUB: &str = "[unknown_stub]";
/// The name the JVM gives the template interpreter's code
/// (DynamicCodeGenerated): xprof's "Interpreter" row.
const INTERPRETER_CODE: &str = "Interpreter";
/// The JVM's class loading, as libjvm's demangled symbols start: a sample
/// with one of these among the native frames above its Java frame is
/// "Class loader" (xprof's row for ticks spent loading classes).
const CLASS_LOADING: &[&str] = &[
    "ClassLoader::",
    "SystemDictionary::",
    "ClassFileParser::",
    "KlassFactory::",
];

/// What a node stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A Java method; `native_method`: declared `native` (named `m(native)`).
    Java { native_method: bool },
    /// Native or VM code (C, C++): its ticks are the native ticks of the
    /// frame below it that is none.
    Native,
    /// Generated code that is no Java method.
    Stub,
    /// A synthetic frame: a thread-local row of its own.
    Synthetic,
    /// `[truncated]`: stands for nothing.
    Transparent,
}

fn role(name: &str, types: &FrameCounts) -> Role {
    let native_method = name.ends_with("(native)");
    if name == TRUNCATED {
        return Role::Transparent;
    }
    if SYNTHETIC.contains(&name) {
        return Role::Synthetic;
    }
    if name == UNKNOWN_STUB {
        return Role::Stub;
    }
    if types.any() && !native_method {
        let only = |set: &[FrameType]| {
            crate::snapshot::FrameCounts::pairs(&types.through)
                .chain(crate::snapshot::FrameCounts::pairs(&types.own))
                .all(|(t, _)| set.contains(&t))
        };
        if only(&[FrameType::Stub]) {
            return Role::Stub;
        }
        if only(&[FrameType::Native, FrameType::Vm, FrameType::Kernel]) {
            return Role::Native;
        }
        return Role::Java {
            native_method: false,
        };
    }
    // Without types, the sampler's names tell: a method has its
    // parameters' parentheses, a library `[libc.so.6]`, any other bracketed
    // name is synthetic, a stub is named as HotSpot names it (no `(`).
    if name.contains('(') {
        Role::Java { native_method }
    } else if name.starts_with('[') && (name.contains(".so") || name == "[native]") {
        Role::Native
    } else if name.starts_with('[') {
        Role::Synthetic
    } else {
        Role::Stub
    }
}

/// Where a frame's ticks go, and the native ticks above it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bucket {
    /// A method's (or stub's: its name's id) row of a section.
    Row(Kind, u32),
    Local(Local),
}

/// The section a Java method's native ticks go to: how its frame ran in
/// the samples where it was not on top (`frameTypes` less `selfTypes`),
/// else in those where it was; interpreted against compiled, the larger
/// (a tie: interpreted); neither known: [`Kind::Unknown`].
fn native_section(types: &FrameCounts) -> Kind {
    // Counts are the snapshot's: summed saturating, as every reader does.
    let split = |of: &dyn Fn(FrameType) -> u64| -> (u64, u64) {
        let compiled = COMPILED.iter().fold(0u64, |a, &t| a.saturating_add(of(t)));
        (of(FrameType::Interpreted), compiled)
    };
    let below = split(&|t| types.through[type_slot(t)].saturating_sub(types.own[type_slot(t)]));
    let top = split(&|t| types.own[type_slot(t)]);
    match [below, top].into_iter().find(|&(i, c)| i > 0 || c > 0) {
        Some((interpreted, compiled)) if interpreted >= compiled => Kind::Interpreted,
        Some(_) => Kind::Compiled,
        None => Kind::Unknown,
    }
}

/// The types xprof's "Compiled" section holds: an inlined frame is listed
/// as itself (the method whose code ran, inlined into its caller's).
const COMPILED: [FrameType; 4] = [
    FrameType::C1,
    FrameType::C2,
    FrameType::Jit,
    FrameType::Inlined,
];

/// A frame on the path from the root to the node being read.
struct OnPath {
    /// Where native ticks above it go (`None`: no frame below is Java, a
    /// stub or synthetic).
    anchor: Option<Bucket>,
    /// A class-loading VM frame is between the anchor and here.
    loading: bool,
}

/// Builds a thread's flat profile, walking its tree once in document
/// order (memory: the path and the rows).
pub fn flat_profile(names: &Names, t: &CallThread, elapsed: usize) -> Result<Flat, CliError> {
    let who = |name: &str| {
        format!(
            "<{}> {:?} of thread {:?}",
            profrj_format::calls::NODE,
            crate::report::shown(name),
            crate::report::shown(&t.name)
        )
    };
    let mut flat = Flat::default();
    let mut path: Vec<OnPath> = Vec::new();
    for n in t.tree.walk() {
        path.truncate((n.depth as usize).saturating_sub(1));
        let name = names.get(n.name);
        let r = role(name, &n.types);
        flat.typed |= n.types.any();
        let below = path.last();
        let (anchor, loading) = match r {
            Role::Java { native_method } => {
                let kind = if native_method {
                    Kind::Stub
                } else {
                    native_section(&n.types)
                };
                (Some(Bucket::Row(kind, n.name)), false)
            }
            Role::Stub if name == INTERPRETER_CODE => {
                (Some(Bucket::Local(Local::Interpreter)), false)
            }
            Role::Stub => (Some(Bucket::Row(Kind::RuntimeStub, n.name)), false),
            Role::Synthetic => (Some(Bucket::Local(Local::Synthetic(n.name))), false),
            Role::Native => (
                below.and_then(|p| p.anchor),
                below.is_some_and(|p| p.loading)
                    || CLASS_LOADING.iter().any(|p| name.starts_with(p)),
            ),
            Role::Transparent => (below.and_then(|p| p.anchor), false),
        };
        let own = n.v.0[elapsed];
        flat.total = flat.total.saturating_add(own);
        if own > 0 {
            own_ticks(&mut flat, &n, r, &anchor, loading, own)
                .map_err(|e| CliError::Input(format!("{}: {e}", who(name))))?;
        }
        path.push(OnPath { anchor, loading });
    }
    Ok(flat)
}

/// Puts the `own` samples with node `n` on top in their buckets.
fn own_ticks(
    flat: &mut Flat,
    n: &Node,
    r: Role,
    anchor: &Option<Bucket>,
    loading: bool,
    own: u64,
) -> Result<(), String> {
    let mut add = |b: Bucket, code: u64, native: u64| match b {
        Bucket::Row(k, m) => {
            let e = flat.rows.entry((k, m)).or_default();
            e.code = e.code.saturating_add(code);
            e.native = e.native.saturating_add(native);
        }
        Bucket::Local(l) => {
            let e = flat.thread_local.entry(l).or_default();
            *e = e.saturating_add(code).saturating_add(native);
        }
    };
    match r {
        Role::Java {
            native_method: false,
        } => {
            let typed =
                FrameCounts::pairs(&n.types.own).fold(0u64, |a, (_, c)| a.saturating_add(c));
            if typed > own {
                let types: Vec<_> = FrameCounts::pairs(&n.types.own).collect();
                return Err(format!(
                    "{} {:?} counts {typed} samples, more than its {} {own}",
                    profrj_format::sampler::node::SELF_TYPES,
                    profrj_format::frame_types::write(&types),
                    profrj_format::sampler::node::ELAPSED,
                ));
            }
            for (t, c) in FrameCounts::pairs(&n.types.own) {
                let kind = match t {
                    FrameType::Interpreted => Kind::Interpreted,
                    t if COMPILED.contains(&t) => Kind::Compiled,
                    FrameType::Native => Kind::Stub,
                    _ => Kind::Unknown,
                };
                add(Bucket::Row(kind, n.name), c, 0);
            }
            if own > typed {
                add(Bucket::Row(Kind::Unknown, n.name), own - typed, 0);
            }
        }
        Role::Native => match anchor {
            _ if loading => add(Bucket::Local(Local::ClassLoader), 0, own),
            Some(b) => add(*b, 0, own),
            None => add(Bucket::Local(Local::NativeWithoutJava), 0, own),
        },
        // A `native` method, a stub, a synthetic frame: its own bucket.
        _ => match anchor {
            Some(b) => add(*b, own, 0),
            None => add(Bucket::Local(Local::NativeWithoutJava), own, 0),
        },
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(through: &str, own: &str) -> FrameCounts {
        let mut c = FrameCounts::default();
        FrameCounts::read(&mut c.through, through).unwrap();
        FrameCounts::read(&mut c.own, own).unwrap();
        c
    }

    /// Types first, names where there are none.
    #[test]
    fn roles_by_type_then_by_name() {
        let none = FrameCounts::default();
        let java = Role::Java {
            native_method: false,
        };
        let native_method = Role::Java {
            native_method: true,
        };
        let cases = [
            ("p.A.f()", counts("c2:3", ""), java),
            ("p.A.f()", none, java),
            (
                "p.A.g(native)",
                counts("native:3", "native:1"),
                native_method,
            ),
            ("p.A.g(native)", none, native_method),
            ("JVM_ArrayCopy", counts("vm:2", "vm:1"), Role::Native),
            ("[libjvm.so]", counts("vm:2", ""), Role::Native),
            ("[libjvm.so]", none, Role::Native),
            ("[libc.so.6]", none, Role::Native),
            (
                "do_syscall_64",
                counts("kernel:1", "kernel:1"),
                Role::Native,
            ),
            ("vtable stub", counts("stub:1", "stub:1"), Role::Stub),
            ("vtable stub", none, Role::Stub),
            ("[unknown_stub]", none, Role::Stub),
            ("[unknown_Java]", none, Role::Synthetic),
            ("[no Java frame]", none, Role::Synthetic),
            ("[truncated]", none, Role::Transparent),
        ];
        for (name, types, want) in cases {
            assert_eq!(role(name, &types), want, "{name} {types:?}");
        }
    }

    /// Below others first, then on top; the larger side; a tie interpreted.
    #[test]
    fn a_methods_native_ticks_go_where_its_frame_ran() {
        let cases = [
            (("c2:10 interpreted:4", "interpreted:4"), Kind::Compiled),
            (("c2:10 interpreted:4", "c2:10"), Kind::Interpreted),
            (("c1:2 interpreted:2", ""), Kind::Interpreted),
            (("inlined:3", ""), Kind::Compiled),
            (("c2:5", "c2:5"), Kind::Compiled),
            (("", ""), Kind::Unknown),
            (("native:2", ""), Kind::Unknown),
        ];
        for ((through, own), want) in cases {
            assert_eq!(
                native_section(&counts(through, own)),
                want,
                "{through} / {own}"
            );
        }
    }
}
