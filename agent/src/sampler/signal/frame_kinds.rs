//! How each frame of a sample ran (interpreted, C1, C2, inlined, a native
//! method, a stub), taken in the handler after the walk from the code the
//! thread's physical frames are in.
//!
//! AsyncGetCallTrace gives virtual frames, top first: one per interpreted
//! frame, one per method in a compiled frame (the inlined ones first, the
//! compiled method last). The physical frames are walked here from the
//! signal's registers (or, in the VM's or a library's code, from the
//! thread's last Java frame) with the code map and the x86-64 rules of the
//! unwinder, and matched to them: an interpreter frame types the next
//! virtual frame `interpreted`; a frame of compiled method M types the
//! virtual frames up to the next one of M `inlined` and M itself by its
//! nmethod's tier. Where the walk cannot go on (code the map does not know,
//! a stub, a method that is not where it must be), the frames left keep
//! kind 0: never a guess. Frames typed by what they are whatever the walk:
//! a native method's (`native`) and a stub's (`stub`).
//!
//! Reads: the thread's own stack words and code bytes of a blob, through
//! [`ThreadMemory`] (checked reads, as the recoveries), its own anchor, and
//! the code map (lock-free). No allocation, no lock.

use super::recover::thread_memory::{regs_of, stack_in_use, ThreadMemory};
use super::recover::WalkStart;
use super::unwind::{self, Memory, Regs};
use crate::code_map::{self, Blob, Code, StubLayout};
use crate::vm::async_trace::{CallFrame, NATIVE_CODE_BCI, NATIVE_FRAME_BCI, STUB_FRAME_BCI};
use crate::vm::hotspot;
use jni_sys::JNIEnv;
use profrj_format::frame_types::FrameType;
use std::ffi::c_void;

/// Types `frames` (a walk's, top first) as the module says; `recovered`:
/// where the walk's recovery walked from, if it did.
///
/// # Safety
/// In the signal handler, on the thread whose JNIEnv `env` is, with
/// `ucontext` the handler's (or null), after a walk wrote `frames`.
pub unsafe fn classify(
    env: *mut JNIEnv,
    frames: &mut [CallFrame],
    ucontext: *mut c_void,
    recovered: Option<WalkStart>,
) {
    for f in frames.iter_mut() {
        f.kind = match f.bci {
            STUB_FRAME_BCI => FrameType::Stub as u8,
            NATIVE_FRAME_BCI if !f.method.is_null() => FrameType::Native as u8,
            _ => 0,
        };
    }
    if ucontext.is_null() || !cfg!(target_arch = "x86_64") {
        return;
    }
    // SAFETY: the caller's promise.
    let Some((low, high)) = (unsafe { stack_in_use(env, ucontext) }) else {
        return;
    };
    let mem = ThreadMemory {
        low,
        high,
        code: None,
    };
    let uc = ucontext as *const libc::ucontext_t;
    // SAFETY: the kernel's ucontext_t for this signal (the caller's
    // promise), read only.
    let ctx = unsafe { regs_of(std::ptr::addr_of!((*uc).uc_mcontext.gregs)) };
    // Frames of machine code outside the code cache on top (a library's,
    // the VM's) are no Java frame: the Java ones start below them.
    if let Some(r) = recovered {
        // A compiled method caught at its entry or exit: the frame put on
        // top names it (its blob is the interrupted code's).
        if let (Some(top), Some(blob), true) =
            (frames.first_mut(), code_map::find(ctx.pc), r.first > 0)
        {
            if let Code::Compiled { method, info } = blob.code {
                if top.method as usize == method && top.bci != STUB_FRAME_BCI {
                    top.kind = tier(info.map(|i| i.level)) as u8;
                }
            }
        }
        let start = Start {
            regs: r.regs,
            first: r.first,
            interrupted: false,
        };
        align(frames, start, code_map::find, &mem);
        return;
    }
    let lead = frames
        .iter()
        .take_while(|f| f.bci == NATIVE_CODE_BCI)
        .count();
    let blob = code_map::find(ctx.pc);
    let start = if let (0, Some(blob)) = (lead, blob) {
        from_context(ctx, frames).or_else(|| from_guessed_caller(ctx, Some(&blob), frames, 0, &mem))
    } else if !hotspot::in_code_cache(ctx.pc) {
        // SAFETY: the caller's promise.
        unsafe { from_anchor(env, frames, lead, &mem) }
            .or_else(|| from_guessed_caller(ctx, None, frames, lead, &mem))
    } else {
        None
    };
    if let Some(start) = start {
        align(frames, start, code_map::find, &mem);
    }
}

/// Where the physical walk begins: the frame's registers, the first virtual
/// frame it stands for, and whether it is the interrupted frame itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Start {
    regs: Regs,
    first: usize,
    interrupted: bool,
}

/// The walk from the signal's registers, in a compiled method or the
/// interpreter, when AsyncGetCallTrace walked from there (no recovery) and
/// the sample's top frame is a Java frame.
fn from_context(ctx: Regs, frames: &[CallFrame]) -> Option<Start> {
    let top = frames.first()?;
    if top.method.is_null() || top.bci == STUB_FRAME_BCI {
        return None;
    }
    let blob = code_map::find(ctx.pc)?;
    let regs = match blob.code {
        Code::Compiled { .. }
        | Code::Stub {
            layout: StubLayout::Interpreter,
            ..
        } => ctx,
        Code::Stub { .. } => return None,
    };
    Some(Start {
        regs,
        first: 0,
        interrupted: true,
    })
}

/// The walk from the thread's last Java frame (its anchor), for a thread in
/// the VM's or a library's code (a native method's, a runtime call's): the
/// frame the anchor names, or, in a runtime stub, its caller (under the
/// stub's frame, if the sample has one), as the in-VM recovery finds it.
///
/// # Safety
/// As [`classify`].
unsafe fn from_anchor(
    env: *mut JNIEnv,
    frames: &[CallFrame],
    lead: usize,
    mem: &ThreadMemory,
) -> Option<Start> {
    // SAFETY: `env` is the calling thread's (the caller's promise).
    let thread = unsafe { hotspot::OwnThread::of(env) }?;
    let a = thread.anchor();
    if a.sp == 0 {
        return None;
    }
    let pc = if a.pc != 0 {
        a.pc
    } else {
        mem.word(a.sp.checked_sub(8)?)?
    };
    let regs = Regs {
        pc,
        sp: a.sp,
        fp: a.fp,
    };
    let blob = code_map::find(pc)?;
    match blob.code {
        Code::Stub {
            layout: StubLayout::Interpreter,
            ..
        }
        | Code::Compiled { .. } => Some(Start {
            regs,
            first: lead,
            interrupted: false,
        }),
        Code::Stub { .. } => {
            let with_code = ThreadMemory {
                code: Some((blob.start, blob.end)),
                ..*mem
            };
            let caller = unwind::stub_caller(regs, &blob, &with_code)?;
            let under_stub = frames.get(lead).is_some_and(|f| f.bci == STUB_FRAME_BCI);
            (caller.sp > regs.sp).then_some(Start {
                regs: caller,
                first: lead + under_stub as usize,
                interrupted: false,
            })
        }
    }
}

/// The walk from the caller of code AsyncGetCallTrace walked through
/// without a frame of its own: a stub it steps over, or the VM's or a
/// library's code called without a last Java frame (a leaf call:
/// `System.nanoTime`'s clock, say, which recent JDKs walk through by frame
/// pointers). The caller the unwinder guesses for that code (`blob`; None:
/// outside the code cache), only where exactly one guess lands in compiled
/// code of a method among the sample's Java frames.
fn from_guessed_caller(
    ctx: Regs,
    blob: Option<&Blob>,
    frames: &[CallFrame],
    lead: usize,
    mem: &ThreadMemory,
) -> Option<Start> {
    let java = frames.get(lead..)?;
    let in_sample = |r: &Regs| match code_map::find(r.pc).map(|b| b.code) {
        Some(Code::Compiled { method, .. }) => java
            .iter()
            .take_while(|f| is_java(f))
            .any(|f| f.method as usize == method),
        _ => false,
    };
    if blob.is_some_and(|b| !matches!(b.code, Code::Stub { .. })) {
        return None;
    }
    let with_code = ThreadMemory {
        code: blob.map(|b| (b.start, b.end)),
        ..*mem
    };
    let guesses = unwind::callers(ctx, unwind::AdapterRegs::default(), blob, &with_code);
    let mut found: Option<Regs> = None;
    for r in guesses.retries() {
        let unwind::Retry::Caller(r) = r else {
            continue;
        };
        if r.sp > ctx.sp && in_sample(&r) {
            match found {
                Some(f) if f != r => return None,
                _ => found = Some(r),
            }
        }
    }
    Some(Start {
        regs: found?,
        first: lead,
        interrupted: false,
    })
}

/// A Java method's frame (not a stub's, a library's or a failure's).
fn is_java(f: &CallFrame) -> bool {
    !f.method.is_null() && f.bci != STUB_FRAME_BCI && f.bci != NATIVE_CODE_BCI
}

/// The type of a compiled method's own frame, from its nmethod's tier.
fn tier(level: Option<u8>) -> FrameType {
    match level {
        Some(1..=3) => FrameType::C1,
        Some(4) => FrameType::C2,
        _ => FrameType::Jit,
    }
}

/// Matches the physical frames from `start` to the virtual ones and types
/// them (see the module's comment). Each step consumes at least one
/// virtual frame and moves sp up, so the walk is bounded by the frames.
pub(super) fn align(
    frames: &mut [CallFrame],
    start: Start,
    find: impl Fn(usize) -> Option<Blob>,
    mem: &ThreadMemory,
) {
    let mut regs = start.regs;
    let mut v = start.first;
    let mut interrupted = start.interrupted;
    while v < frames.len() && is_java(&frames[v]) {
        let Some(blob) = find(regs.pc) else {
            return;
        };
        let caller = match blob.code {
            Code::Compiled { method, info } => {
                let Some(j) = frames[v..]
                    .iter()
                    .position(|f| !is_java(f) || f.method as usize == method)
                    .map(|k| v + k)
                    .filter(|&j| is_java(&frames[j]))
                else {
                    return;
                };
                // Inlined frames are Java code; a native method is its own
                // wrapper's only frame. Where a method is inlined into
                // itself in this code, which of its frames is the compiled
                // one is not known here; where that is not known either,
                // the same method again just below (inlined into itself,
                // or called again out of line?) stops the walk.
                let native = frames[v..=j].iter().any(|f| f.bci == NATIVE_FRAME_BCI);
                let again = frames
                    .get(j + 1)
                    .is_some_and(|f| f.method as usize == method);
                let ambiguous = match info.and_then(|i| i.inlined_into_itself) {
                    Some(itself) => itself,
                    None => again,
                };
                if (native && j != v) || ambiguous {
                    return;
                }
                if !native {
                    for f in &mut frames[v..j] {
                        f.kind = FrameType::Inlined as u8;
                    }
                    frames[j].kind = tier(info.map(|i| i.level)) as u8;
                }
                v = j + 1;
                let Some(info) = info else {
                    return;
                };
                let with_code = ThreadMemory {
                    code: Some((blob.start, blob.end)),
                    ..*mem
                };
                unwind::compiled_frame_caller(
                    regs,
                    &blob,
                    info.frame_words,
                    interrupted,
                    &with_code,
                )
            }
            Code::Stub {
                layout: StubLayout::Interpreter,
                ..
            } => {
                if frames[v].bci != NATIVE_FRAME_BCI {
                    frames[v].kind = FrameType::Interpreted as u8;
                }
                v += 1;
                if regs.fp < regs.sp {
                    return;
                }
                unwind::interpreted_frame_caller(regs, mem)
            }
            Code::Stub { .. } => return,
        };
        match caller {
            Some(c) if c.sp > regs.sp => regs = c,
            _ => return,
        }
        interrupted = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::nmethod::CompiledInfo;

    const A: usize = 0xa0;
    const B: usize = 0xb0;
    const C: usize = 0xc0;
    const D: usize = 0xd0;
    const E: usize = 0xe0;

    fn frame(method: usize) -> CallFrame {
        CallFrame::new(3, method as jni_sys::jmethodID)
    }

    /// A stack laid out by hand in real memory (the handler's reader reads
    /// addresses), and code bytes (no-ops) holding compiled A's code
    /// (4-word frames, tier `level`) and the interpreter.
    struct World {
        stack: Vec<usize>,
        code: Vec<u8>,
        level: u8,
        itself: Option<bool>,
    }

    impl World {
        fn new(level: u8) -> World {
            World {
                stack: vec![0; 64],
                code: vec![0x90; 128],
                level,
                itself: None,
            }
        }
        fn at(&self, i: usize) -> usize {
            self.stack.as_ptr() as usize + 8 * i
        }
        fn compiled(&self) -> usize {
            self.code.as_ptr() as usize
        }
        fn interpreter(&self) -> usize {
            self.compiled() + 64
        }
        fn find(&self, pc: usize) -> Option<Blob> {
            let (c, i) = (self.compiled(), self.interpreter());
            let info = Some(CompiledInfo {
                frame_words: 4,
                level: self.level,
                inlined_into_itself: self.itself,
            });
            if (c..i).contains(&pc) {
                Some(Blob {
                    start: c,
                    end: i,
                    code: Code::Compiled { method: A, info },
                })
            } else {
                (i..i + 64).contains(&pc).then_some(Blob {
                    start: i,
                    end: i + 64,
                    code: Code::Stub {
                        name: 0,
                        layout: StubLayout::Interpreter,
                    },
                })
            }
        }
        /// A's frame at word 0 (returning into the interpreter), interpreted
        /// frames at words 10 and 20, the last returning into unknown code.
        fn lay_out(&mut self) {
            let (interp, w10, w12, w20, w22) = (
                self.interpreter(),
                self.at(10),
                self.at(12),
                self.at(20),
                self.at(22),
            );
            let w30 = self.at(30);
            let s = &mut self.stack;
            (s[2], s[3]) = (w10, interp + 8);
            (s[9], s[10], s[11]) = (w12, w20, interp + 16);
            (s[19], s[20], s[21]) = (w22, w30, 0x1234);
        }
        fn types(&mut self, frames: &mut [CallFrame]) -> Vec<Option<FrameType>> {
            self.lay_out();
            let mem = ThreadMemory {
                low: self.at(0),
                high: self.at(64),
                code: None,
            };
            let start = Start {
                regs: Regs {
                    pc: self.compiled() + 8,
                    sp: self.at(0),
                    fp: 0,
                },
                first: 0,
                interrupted: true,
            };
            align(frames, start, |pc| self.find(pc), &mem);
            frames
                .iter()
                .map(|f| FrameType::from_code(f.kind))
                .collect()
        }
    }

    #[test]
    fn compiled_then_interpreted_frames_are_typed_down_to_unknown_code() {
        let mut frames = [B, A, C, D, E].map(frame);
        let got = World::new(4).types(&mut frames);
        use FrameType::*;
        assert_eq!(
            got,
            [
                Some(Inlined),
                Some(C2),
                Some(Interpreted),
                Some(Interpreted),
                None
            ]
        );
        let mut frames = [A, C].map(frame);
        assert_eq!(
            World::new(2).types(&mut frames),
            [Some(C1), Some(Interpreted)]
        );
    }

    #[test]
    fn a_compiled_method_not_among_the_frames_types_nothing() {
        let mut frames = [B, C, D].map(frame);
        assert_eq!(World::new(4).types(&mut frames), [None, None, None]);
    }

    #[test]
    fn a_method_again_below_its_own_frame_is_typed_only_where_known() {
        use FrameType::*;
        // Inlined into itself, or called again out of line: not known
        // without the code's inline records.
        let mut frames = [A, A, C].map(frame);
        assert_eq!(World::new(4).types(&mut frames), [None, None, None]);
        // Never inlined into itself: the first is the compiled frame, the
        // next one its (interpreted) caller.
        let mut w = World::new(4);
        w.itself = Some(false);
        let mut frames = [A, A, C].map(frame);
        let want = [Some(C2), Some(Interpreted), Some(Interpreted)];
        assert_eq!(w.types(&mut frames), want);
        // Inlined into itself somewhere in the code: nothing is typed.
        let mut w = World::new(4);
        w.itself = Some(true);
        let mut frames = [B, A, C].map(frame);
        assert_eq!(w.types(&mut frames), [None, None, None]);
    }

    #[test]
    fn a_synthetic_frame_ends_the_walk() {
        let mut frames = [frame(A), CallFrame::new(STUB_FRAME_BCI, 1 as _), frame(C)];
        assert_eq!(
            World::new(4).types(&mut frames),
            [Some(FrameType::C2), None, None]
        );
    }
}
