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

/// A JNI weak global reference, as the number the VM gave. Any number makes
/// a `WeakHandle` (`from_bits`); what reads or frees the reference it names
/// is an `unsafe fn` whose caller vouches that `new` made it and it is not
/// deleted yet.
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
    /// The VM must be HotSpot (where [`self_test`] passes), and the handle
    /// one [`WeakHandle::new`] made (perhaps through
    /// `to_bits` and `from_bits`), not deleted yet. The answer is stable
    /// between two collections that clear weak references only in their
    /// pauses (serial, parallel, G1): read at a safepoint (the GC events), or
    /// between GCs while the next GC's start waits for the reader.
    pub unsafe fn is_cleared(self) -> bool {
        let slot = (self.0 - WEAK_TAG) as *const usize;
        // SAFETY: a handle `new` made on HotSpot (the caller's promise) is the
        // address of its slot + WEAK_TAG (the tag checked at `new`); the slot stays
        // allocated until the handle is deleted, which it is not (the
        // caller's promise). The volatile read keeps the compiler from
        // caching it across GCs; the GC writes it only in a pause, while no
        // reader runs (the caller's promise).
        unsafe { std::ptr::read_volatile(slot) == 0 }
    }

    /// The address of the referent (0 once cleared): the object's id in a
    /// heap dump HotSpot writes, as long as no GC moves it.
    ///
    /// # Safety
    /// As [`WeakHandle::is_cleared`]; and the address means something only
    /// while no GC runs: read it in a pause, after the GC's work.
    pub unsafe fn referent_address(self) -> usize {
        let slot = (self.0 - WEAK_TAG) as *const usize;
        // SAFETY: as in `is_cleared` (the caller's promise).
        unsafe { std::ptr::read_volatile(slot) }
    }

    /// Asks the CPU to fetch the reference's slot soon: the scan reads the
    /// slots of many references in no particular order.
    pub fn prefetch(self) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint; it never faults and reads nothing
        // the program sees, whatever the address (SSE, part of x86-64).
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>((self.0 - WEAK_TAG) as *const i8)
        }
    }

    /// Frees the reference.
    ///
    /// # Safety
    /// The handle must be one [`WeakHandle::new`] made, not deleted yet, and
    /// no copy of it may be used after this.
    pub unsafe fn delete(self, jni: &Jni) {
        jni.delete_weak_global_ref(self.0 as jobject);
    }
}

/// Does this VM's weak global reference look like HotSpot's (a tagged
/// slot that holds the object while it lives)? Checked once before the
/// memory mode reads handles itself. `live` must be a live, non-null reference.
///
/// # Safety
/// The VM must be HotSpot: the test reads the reference's slot as HotSpot
/// lays it out (what it checks is that the tag and the slot's content are
/// as expected, i.e. that HotSpot did not change them).
pub unsafe fn self_test(jni: &Jni, live: jobject) -> bool {
    let Some(w) = WeakHandle::new(jni, live) else {
        return false;
    };
    // SAFETY: the VM is HotSpot (the caller's promise) and `w` was just made
    // by `new`, deleted only below.
    let ok = unsafe { !w.is_cleared() };
    // SAFETY: made by `new` above, deleted once; `w` is not used after.
    unsafe { w.delete(jni) };
    ok
}
