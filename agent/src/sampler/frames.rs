//! A stack, as JVMTI or AsyncGetCallTrace gives it (top frame first), turned
//! into the tree's path (root first) of interned frame names.

use super::TRUNCATED;
use crate::methods::{MethodNames, NameId};
pub use crate::stack::Frame;
use crate::vm::async_trace::failure_name;
use crate::vm::{Jni, Jvmti};

/// Frame name of a method id AsyncGetCallTrace could not name.
const UNKNOWN_METHOD: &str = "[unknown_method]";

/// Classes of the agent's own runtime (the probes instrumented code calls).
const AGENT_RUNTIME: &str = "profrj.runtime.";

/// Fills `path` with `frames` root first; a stack deeper than `depth` keeps
/// its top `depth` frames under a [`TRUNCATED`] root. The agent's own probe
/// frames on top are left out, so their samples count in the instrumented
/// method that called the probe (as async-profiler hides its own frames;
/// the `<profile>` section's `overhead*` attributes give the probes' time).
pub fn to_path<F: Frame>(
    names: &mut MethodNames,
    jvmti: Jvmti,
    jni: &Jni,
    frames: &[F],
    depth: u32,
    path: &mut Vec<NameId>,
) {
    path.clear();
    let kept = if frames.len() > depth as usize {
        path.push(names.intern(TRUNCATED));
        &frames[..depth as usize]
    } else {
        frames
    };
    let name = |names: &mut MethodNames, f: &F| {
        if f.method().is_null() {
            // A synthetic top frame over a stack recovered from the caller
            // carries its failure code; otherwise a method with no jmethodID.
            match f.failure() {
                Some(code) => names.intern(failure_name(code)),
                None => names.intern(UNKNOWN_METHOD),
            }
        } else {
            names.frame_name(jvmti, jni, f.method(), f.is_native())
        }
    };
    let mut own = 0;
    while own < kept.len() {
        let id = name(names, &kept[own]);
        if !names.get(id).starts_with(AGENT_RUNTIME) {
            break;
        }
        own += 1;
    }
    for f in kept[own..].iter().rev() {
        let id = name(names, f);
        path.push(id);
    }
}
