//! The frame a recovered walk puts over the callers it walked from, naming
//! the code that has no Java frame of its own: a stub, a compiled method at
//! its entry or exit, a library's code. Apart because the walk from the
//! caller and the walk of a thread in the VM both put one there.

use crate::code_map::{Blob, Code};
use crate::vm::async_trace::{CallFrame, NATIVE_CODE_BCI, STUB_FRAME_BCI};
use crate::vm::hotspot;
use jni_sys::jint;

/// `bci` of a compiled method's frame recovered at its entry or exit: no
/// bytecode index is known there.
const NO_BCI: jint = -1;

/// The frame that stands for code without a Java frame of its own (at `pc`,
/// in `blob`) over its callers.
pub(super) fn top_frame(blob: Option<&Blob>, pc: usize, code: jint) -> CallFrame {
    match blob.map(|b| b.code) {
        Some(Code::Stub { name, .. }) => {
            CallFrame::new(STUB_FRAME_BCI, name as usize as jni_sys::jmethodID)
        }
        Some(Code::Compiled { method, .. }) => CallFrame::new(NO_BCI, method as jni_sys::jmethodID),
        // The VM's or a library's own code, named by its library later.
        None if !hotspot::in_code_cache(pc) => {
            CallFrame::new(NATIVE_CODE_BCI, pc as jni_sys::jmethodID)
        }
        None => CallFrame::new(code, std::ptr::null_mut()),
    }
}
