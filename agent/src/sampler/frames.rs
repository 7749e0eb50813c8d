//! A stack, as JVMTI or AsyncGetCallTrace gives it (top frame first), turned
//! into the tree's path (root first) of frame keys: a frame's interned name
//! and, with `lines`, its source line.

use super::TRUNCATED;
use crate::code_map::machine_code_name;
use crate::methods::{MethodNames, NameId};
pub use crate::stack::Frame;
use crate::vm::async_trace::failure_name;
use crate::vm::{Jni, Jvmti};
use jni_sys::jmethodID;
use std::collections::HashMap;

/// Frame name of a method id AsyncGetCallTrace could not name.
const UNKNOWN_METHOD: &str = "[unknown_method]";

/// A tree node's key: a frame's name and line.
pub type FrameKey = u32;
/// The line of a frame whose line is not known or not asked for.
pub const NO_LINE: u32 = 0;

/// Frame keys: (name, line) pairs, interned.
#[derive(Default)]
pub struct FrameKeys {
    keys: Vec<(NameId, u32)>,
    ids: HashMap<(NameId, u32), FrameKey>,
}

impl FrameKeys {
    pub fn key(&mut self, name: NameId, line: u32) -> FrameKey {
        *self.ids.entry((name, line)).or_insert_with(|| {
            self.keys.push((name, line));
            (self.keys.len() - 1) as FrameKey
        })
    }

    /// The (name, line) of `key`.
    #[cfg(test)]
    pub fn get(&self, key: FrameKey) -> (NameId, u32) {
        self.keys[key as usize]
    }

    /// Every key's (name, line), in key order.
    pub fn iter(&self) -> impl Iterator<Item = (NameId, u32)> + '_ {
        self.keys.iter().copied()
    }
}

/// Each method's line number table, read once (JVMTI GetLineNumberTable).
#[derive(Default)]
pub struct LineTables {
    /// jmethodID -> (first bytecode index, line), sorted by index.
    tables: HashMap<usize, Box<[(i64, u32)]>>,
}

impl LineTables {
    /// The line of bytecode `bci` of `method`, or [`NO_LINE`].
    fn line(&mut self, jvmti: Jvmti, method: jmethodID, bci: i64) -> u32 {
        let table = self.tables.entry(method as usize).or_insert_with(|| {
            let mut t: Vec<(i64, u32)> = jvmti
                .line_number_table(method)
                .unwrap_or_default()
                .into_iter()
                .filter(|&(_, line)| line > 0)
                .map(|(start, line)| (start, line as u32))
                .collect();
            t.sort_unstable();
            t.into_boxed_slice()
        });
        line_at(table, bci)
    }
}

/// The line in effect at `bci`: that of the last entry starting at or before it.
fn line_at(table: &[(i64, u32)], bci: i64) -> u32 {
    let i = table.partition_point(|&(start, _)| start <= bci);
    i.checked_sub(1).map_or(NO_LINE, |i| table[i].1)
}

/// The tables a frame's key is made from, kept between samples: the names
/// and keys the trees refer to, and what naming a frame reads once and
/// remembers (line tables, stub and library names).
#[derive(Default)]
pub struct NameTables {
    pub names: MethodNames,
    /// What the trees' nodes are keyed by: (name, line).
    pub keys: FrameKeys,
    /// Line number tables, with `lines`.
    pub lines: LineTables,
    /// Code map name number -> interned name.
    pub stubs: HashMap<u32, NameId>,
    /// pc outside the code cache -> `[library]` name, interned.
    pub libraries: HashMap<usize, NameId>,
}

/// What turning frames into keys needs: the VM to name methods, and the
/// tables names, keys, lines and stub names are kept in.
pub struct Namer<'a> {
    jvmti: Jvmti,
    jni: &'a Jni,
    tables: &'a mut NameTables,
    /// With `lines`: each frame keyed with its line.
    lines: bool,
}

impl<'a> Namer<'a> {
    pub fn new(jvmti: Jvmti, jni: &'a Jni, tables: &'a mut NameTables, lines: bool) -> Self {
        Self {
            jvmti,
            jni,
            tables,
            lines,
        }
    }

    fn name<F: Frame>(&mut self, f: &F) -> NameId {
        let NameTables {
            names,
            stubs,
            libraries,
            ..
        } = &mut *self.tables;
        if let Some(pc) = f.native_code() {
            return *libraries.entry(pc).or_insert_with(|| {
                let name = machine_code_name(f).unwrap_or_default();
                names.intern(&name)
            });
        }
        if let Some(stub) = f.stub() {
            return *stubs.entry(stub).or_insert_with(|| {
                let name = machine_code_name(f).unwrap_or_default();
                names.intern(&name)
            });
        }
        if f.method().is_null() {
            // A synthetic top frame over a stack recovered from the caller
            // carries its failure code; otherwise a method with no jmethodID.
            return match f.failure() {
                Some(code) => names.intern(failure_name(code)),
                None => names.intern(UNKNOWN_METHOD),
            };
        }
        names.frame_name(self.jvmti, self.jni, f.method(), f.is_native())
    }

    fn key<F: Frame>(&mut self, f: &F, name: NameId) -> FrameKey {
        let line = if self.lines && f.bci() >= 0 {
            self.tables
                .lines
                .line(self.jvmti, f.method(), f.bci() as i64)
        } else {
            NO_LINE
        };
        self.tables.keys.key(name, line)
    }
}

/// Classes of the agent's own runtime (the probes instrumented code calls).
const AGENT_RUNTIME: &str = "profrj.runtime.";

/// Fills `path` with `frames` root first; a stack deeper than `depth` keeps
/// its top `depth` frames under a [`TRUNCATED`] root. The agent's own probe
/// frames on top (and, with `cstack=`, its native code over them) are left out, so their samples count in the instrumented
/// method that called the probe (as async-profiler hides its own frames;
/// the `<profile>` section's `overhead*` attributes give the probes' time).
pub fn to_path<F: Frame>(
    namer: &mut Namer<'_>,
    frames: &[F],
    depth: u32,
    path: &mut Vec<FrameKey>,
) {
    path.clear();
    let kept = if frames.len() > depth as usize {
        let truncated = namer.tables.names.intern(TRUNCATED);
        path.push(namer.tables.keys.key(truncated, NO_LINE));
        &frames[..depth as usize]
    } else {
        frames
    };
    // With `cstack=`, native frames top the Java ones: the agent's own
    // (a probe's code, a JVMTI callback) and what they called (libc, the
    // vDSO, the VM's JNI functions, the VM's code a probe's native call
    // runs through) are left out: all of them over a probe's Java frame,
    // else those down to the deepest of the agent's.
    let native_top = kept
        .iter()
        .take_while(|f| f.native_code().is_some())
        .count();
    let over_probe = kept.get(native_top).is_some_and(|f| {
        let id = namer.name(f);
        namer.tables.names.get(id).starts_with(AGENT_RUNTIME)
    });
    let mut own = if over_probe {
        native_top
    } else {
        kept[..native_top]
            .iter()
            .rposition(|f| f.native_code().is_some_and(crate::native::is_agent_code))
            .map_or(0, |i| i + 1)
    };
    while own < kept.len() {
        let id = namer.name(&kept[own]);
        if !namer.tables.names.get(id).starts_with(AGENT_RUNTIME) {
            break;
        }
        own += 1;
    }
    for f in kept[own..].iter().rev() {
        let name = namer.name(f);
        path.push(namer.key(f, name));
    }
}

/// The type codes (0: not known) of the frames [`to_path`] put in a path
/// of `path_len` keys from `frames` and `depth`, root first as the path
/// has them (the [`TRUNCATED`] root's is 0).
pub fn kinds_of<F: Frame>(frames: &[F], depth: u32, path_len: usize, kinds: &mut Vec<u8>) {
    kinds.clear();
    let truncated = frames.len() > depth as usize;
    let kept = &frames[..frames.len().min(depth as usize)];
    if truncated {
        kinds.push(0);
    }
    let java = path_len.saturating_sub(truncated as usize).min(kept.len());
    let own = kept.len() - java;
    kinds.extend(
        kept[own..]
            .iter()
            .rev()
            .map(|f| f.kind().map_or(0, |t| t as u8)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_the_last_entry_at_or_before_the_bci() {
        let t = [(0, 10), (4, 11), (9, 13)];
        assert_eq!(line_at(&t, 0), 10);
        assert_eq!(line_at(&t, 3), 10);
        assert_eq!(line_at(&t, 4), 11);
        assert_eq!(line_at(&t, 100), 13);
        assert_eq!(line_at(&[], 5), NO_LINE);
        assert_eq!(line_at(&[(2, 7)], 1), NO_LINE);
    }

    #[test]
    fn kinds_follow_the_path_root_first() {
        use crate::vm::async_trace::CallFrame;
        let frames: Vec<CallFrame> = (1..=5u8)
            .map(|k| CallFrame {
                kind: k,
                ..CallFrame::new(0, std::ptr::null_mut())
            })
            .collect();
        let mut kinds = Vec::new();
        // Whole: root (the last frame) first.
        kinds_of(&frames, 10, 5, &mut kinds);
        assert_eq!(kinds, [5, 4, 3, 2, 1]);
        // Truncated to the top 3 under a synthetic root of no type.
        kinds_of(&frames, 3, 4, &mut kinds);
        assert_eq!(kinds, [0, 3, 2, 1]);
        // The agent's own top frame left out of the path.
        kinds_of(&frames, 3, 3, &mut kinds);
        assert_eq!(kinds, [0, 3, 2]);
    }

    #[test]
    fn keys_tell_lines_of_one_method_apart() {
        let mut k = FrameKeys::default();
        let a = k.key(3, 10);
        assert_eq!(k.key(3, 10), a);
        let b = k.key(3, 11);
        assert_ne!(a, b);
        assert_eq!(k.get(b), (3, 11));
        let c = k.key(4, NO_LINE);
        assert_eq!(k.get(c), (4, NO_LINE));
    }
}
