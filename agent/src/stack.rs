//! A stack as the walkers give it (top frame first): one [`Frame`] trait
//! over JVMTI's frames and AsyncGetCallTrace's, the [`Frames`] an event
//! carries to its listeners (`sampling`'s samples, `alloc`'s objects,
//! `lock`'s waits, heard by `jfr`), and the hasher of stack keys made of
//! machine words.

use crate::vm::async_trace::{CallFrame, NATIVE_CODE_BCI, NATIVE_FRAME_BCI, STUB_FRAME_BCI};
use crate::vm::sys::JvmtiFrameInfo;
use jni_sys::jmethodID;
use profrj_format::frame_types::FrameType;
use std::hash::Hasher;

/// One frame, whichever walker produced it.
pub trait Frame {
    /// The frame's method (null for a synthetic frame).
    fn method(&self) -> jmethodID;
    /// A native method's frame.
    fn is_native(&self) -> bool;
    /// The bytecode index (-1: none; also for a synthetic frame: a stub,
    /// native code, a failed walk).
    fn bci(&self) -> i32;
    /// A synthetic frame's failure code (AsyncGetCallTrace frames only).
    fn failure(&self) -> Option<i32> {
        None
    }
    /// The code map's name number of a stub frame (signal frames only).
    fn stub(&self) -> Option<u32> {
        None
    }
    /// The pc of a frame in machine code outside the code cache (signal
    /// frames only).
    fn native_code(&self) -> Option<usize> {
        None
    }
    /// How the frame ran, where the walker knew (signal frames, typed in
    /// the handler; a JVMTI frame only when it is a native method's).
    fn kind(&self) -> Option<FrameType> {
        None
    }
}

impl Frame for JvmtiFrameInfo {
    fn method(&self) -> jmethodID {
        self.method
    }
    fn is_native(&self) -> bool {
        self.location == -1
    }
    fn bci(&self) -> i32 {
        self.location as i32
    }
    fn kind(&self) -> Option<FrameType> {
        // A native method's frame is one whatever else is known of it.
        self.is_native().then_some(FrameType::Native)
    }
}

impl Frame for CallFrame {
    fn method(&self) -> jmethodID {
        // A stub's or native code's frame keeps a name number or a pc there.
        if self.stub().is_some() || self.native_code().is_some() {
            std::ptr::null_mut()
        } else {
            self.method
        }
    }
    fn is_native(&self) -> bool {
        self.bci == NATIVE_FRAME_BCI
    }
    fn bci(&self) -> i32 {
        // Synthetic frames (stubs, native code, failures) have negative codes.
        if self.method.is_null() || self.bci < 0 {
            -1
        } else {
            self.bci
        }
    }
    fn failure(&self) -> Option<i32> {
        (self.method.is_null() && self.bci < 0 && self.bci != NATIVE_FRAME_BCI).then_some(self.bci)
    }
    fn stub(&self) -> Option<u32> {
        (self.bci == STUB_FRAME_BCI).then_some(self.method as usize as u32)
    }
    fn native_code(&self) -> Option<usize> {
        (self.bci == NATIVE_CODE_BCI).then_some(self.method as usize)
    }
    fn kind(&self) -> Option<FrameType> {
        FrameType::from_code(self.kind)
    }
}

/// A stack's frames, top first, as one walker or the other gave them (an
/// event's listener cannot be generic over the frame type).
#[derive(Clone, Copy)]
pub enum Frames<'a> {
    /// JVMTI's GetStackTrace.
    Jvmti(&'a [JvmtiFrameInfo]),
    /// AsyncGetCallTrace's, in the signal handler.
    Async(&'a [CallFrame]),
}

/// A hasher for keys of machine words (jmethodIDs, small ids): SipHash's
/// resistance to chosen keys buys nothing here and costs per word.
#[derive(Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    /// A slice of words arrives here as its bytes: a word at a time.
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in words.by_ref() {
            self.write_u64(u64::from_ne_bytes(w.try_into().expect("8 bytes")));
        }
        for &b in words.remainder() {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, w: usize) {
        self.write_u64(w as u64);
    }
}
