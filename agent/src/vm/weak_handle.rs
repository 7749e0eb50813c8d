//! HotSpot's JNI weak global references, read without JNI.
//!
//! The memory mode learns which tracked objects died by reading millions of
//! weak references after each GC, sometimes inside the next GC's start
//! event, where JNI may not be called (and `IsSameObject` would cost ~39 ns
//! each). HotSpot makes a weak global reference the address of a slot in its
//! "JNI Weak" storage plus 1 (the weak tag, JDK 11 to 25 at least), and the
//! serial, parallel and G1 collectors store null in that slot, during a
//! pause, when the referent dies. The memory mode only reads handles this
//! way after `self_test` passed and on those collectors
//! (`memory::mechanism`); anything else uses JVMTI tags.

use super::Jni;
use jni_sys::jobject;

/// HotSpot's tag on a weak global reference (`JNIHandles::TypeTag::weak_global`).
const WEAK_TAG: usize = 1;
const TAG_MASK: usize = 3;

/// A JNI weak global reference, as the number the VM gave.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct WeakHandle(usize);

impl WeakHandle {
    /// A weak reference to `object` (a live reference). `None` when the VM
    /// has no room, or hands out a reference of another layout.
    pub fn new(jni: &Jni, object: jobject) -> Option<Self> {
        let w = jni.new_weak_global_ref(object) as usize;
        if w & TAG_MASK == WEAK_TAG {
            Some(Self(w))
        } else {
            if w != 0 {
                jni.delete_weak_global_ref(w as jobject);
            }
            None
        }
    }

    pub fn to_bits(self) -> usize {
        self.0
    }

    /// Back from `to_bits`; 0 is no handle.
    pub fn from_bits(bits: usize) -> Option<Self> {
        (bits != 0).then_some(Self(bits))
    }

    /// Has the GC cleared the reference (its object died)?
    ///
    /// # Safety
    /// The handle must not be deleted yet. The answer is stable between two
    /// collections that clear weak references only in their pauses (serial,
    /// parallel, G1): read at a safepoint (the GC events), or between GCs
    /// while the next GC's start waits for the reader.
    pub unsafe fn is_cleared(self) -> bool {
        let slot = (self.0 - WEAK_TAG) as *const usize;
        // SAFETY: a live HotSpot weak handle is a slot address + WEAK_TAG (checked
        // at `new`); the slot stays allocated until the handle is deleted. The
        // volatile read keeps the compiler from caching it across GCs.
        unsafe { std::ptr::read_volatile(slot) == 0 }
    }

    /// Asks the CPU to fetch the reference's slot soon: the scan reads the
    /// slots of many references in no particular order.
    pub fn prefetch(self) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint; it never faults, whatever the address.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>((self.0 - WEAK_TAG) as *const i8)
        }
    }

    /// Frees the reference.
    pub fn delete(self, jni: &Jni) {
        jni.delete_weak_global_ref(self.0 as jobject);
    }
}

/// Does this VM's weak global reference look like HotSpot's (a tagged
/// slot that holds the object while it lives)? Checked once before the
/// memory mode reads handles itself.
pub fn self_test(jni: &Jni, live: jobject) -> bool {
    let Some(w) = WeakHandle::new(jni, live) else {
        return false;
    };
    // SAFETY: `w` was just made and is deleted below; `live` is held by the
    // caller, so the slot holds a non-null object.
    let ok = unsafe { !w.is_cleared() };
    w.delete(jni);
    ok
}
