//! A virtual thread's frames that a signal's walk cannot see. On JDK 21+
//! HotSpot thaws only the top frames of a continuation it mounts; the rest
//! stay frozen in the virtual thread's heap stack chunk, under a return
//! barrier, until the frames above return into them. AsyncGetCallTrace
//! steps from the last thawed frame straight to the continuation's parent,
//! `Continuation.enterSpecial` (HotSpot's `continuation_bottom_sender`), so
//! the stack reads as if that frame had been called by `enterSpecial`.
//!
//! Most samples of a mounted virtual thread are taken with JVMTI, which
//! walks the chunk (`wall.rs`). A signal's walk meets a virtual thread's
//! frames only when it catches the carrier in a mount or an unmount, or
//! one mounted between the tick and the signal. Such a stack gets
//! `[frozen_frames]` where frames are missing, rather than a call that
//! never happened.

use crate::vm::async_trace::{CallFrame, FROZEN_FRAMES};
use crate::vm::Jni;
use jni_sys::jmethodID;

const CONTINUATION: &str = "jdk/internal/vm/Continuation";

/// The two methods at a continuation's bottom: `enterSpecial`, its parent
/// on the carrier's stack, and `enter`, which it calls (the frame right
/// above it whenever the whole continuation is on the stack).
#[derive(Clone, Copy)]
pub(super) struct Continuations {
    enter_special: jmethodID,
    enter: jmethodID,
}

impl Continuations {
    /// The two methods (JDK 21+), or None where they are not found. The
    /// look-up initialises `Continuation` if nothing has yet (its static
    /// initialiser only checks that the VM supports continuations).
    pub fn look_up(jni: &Jni) -> Option<Self> {
        let class = jni.find_class(CONTINUATION).ok()?;
        let ids = jni
            .static_method_id(class, "enterSpecial", "(Ljdk/internal/vm/Continuation;ZZ)V")
            .and_then(|enter_special| {
                let enter =
                    jni.static_method_id(class, "enter", "(Ljdk/internal/vm/Continuation;Z)V")?;
                Ok(Continuations {
                    enter_special,
                    enter,
                })
            });
        jni.delete_local_ref(class);
        ids.ok()
    }

    /// Writes `frames` into `out` with `[frozen_frames]` above each
    /// `enterSpecial` whose callee is not `enter`; false (and `out` left
    /// as it is) when no frame is missing: use `frames` as they are.
    pub fn mark(&self, frames: &[CallFrame], out: &mut Vec<CallFrame>) -> bool {
        let cut = |pair: &[CallFrame]| {
            pair[1].method == self.enter_special && pair[0].method != self.enter
        };
        if !frames.windows(2).any(cut) {
            return false;
        }
        out.clear();
        out.extend(frames.first());
        for pair in frames.windows(2) {
            if cut(pair) {
                out.push(CallFrame::new(FROZEN_FRAMES, std::ptr::null_mut()));
            }
            out.push(pair[1]);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(m: usize) -> CallFrame {
        CallFrame::new(1, m as jmethodID)
    }

    #[test]
    fn the_mark_goes_where_frames_are_missing_only() {
        let c = Continuations {
            enter_special: 10 as jmethodID,
            enter: 20 as jmethodID,
        };
        let mut out = Vec::new();
        // Whole: task (1) <- run (2) <- enter (20) <- enterSpecial (10) <- pool (3).
        let whole = [frame(1), frame(2), frame(20), frame(10), frame(3)];
        assert!(!c.mark(&whole, &mut out));
        // Cut: task (1) straight on enterSpecial.
        let cut = [frame(1), frame(10), frame(3)];
        assert!(c.mark(&cut, &mut out));
        let codes: Vec<_> = out.iter().map(|f| (f.method as usize, f.bci)).collect();
        assert_eq!(codes, [(1, 1), (0, FROZEN_FRAMES), (10, 1), (3, 1)]);
        // enterSpecial on top (the carrier entering it): nothing missing.
        assert!(!c.mark(&[frame(10), frame(3)], &mut out));
    }
}
