//! What the heap sampler's events on one OS thread had last: the thread
//! object and the classes, compared by identity (JNI `IsSameObject`, tens of
//! ns) instead of asking JVMTI again (`GetTag` on the thread ~150 ns,
//! `GetClassSignature` ~300 ns with its allocations, measured per event).
//! Held by weak global references, which keep nothing alive; each is
//! deleted when it is replaced and when the OS thread ends (ThreadEnd).

use crate::methods::NameId;
use crate::threads::ThreadId;
use crate::vm::Jni;
use jni_sys::jobject;

/// How many classes an OS thread remembers (most recent first).
const CLASSES: usize = 4;

#[derive(Default)]
pub struct Recent {
    /// The thread object of the last event (a virtual thread's, when one
    /// ran on this OS thread), and its agent id.
    thread: Option<(jobject, ThreadId)>,
    /// Recorder the class names belong to (names are per session).
    recorder: u64,
    /// (class, its name in that recorder), most recent first.
    classes: Vec<(jobject, NameId)>,
}

impl Recent {
    /// The agent id of `thread` if it is the last event's thread.
    pub fn thread(&self, jni: &Jni, thread: jobject) -> Option<ThreadId> {
        let (weak, id) = self.thread?;
        jni.is_same_object(weak, thread).then_some(id)
    }

    pub fn remember_thread(&mut self, jni: &Jni, thread: jobject, id: ThreadId) {
        let weak = jni.new_weak_global_ref(thread);
        if let Some((old, _)) = self.thread.take() {
            jni.delete_weak_global_ref(old);
        }
        if !weak.is_null() {
            self.thread = Some((weak, id));
        }
    }

    /// The name of `class` in recorder `recorder`, if remembered; a hit
    /// moves to the front.
    pub fn class(&mut self, jni: &Jni, recorder: u64, class: jobject) -> Option<NameId> {
        if self.recorder != recorder {
            return None;
        }
        let at = self
            .classes
            .iter()
            .position(|&(weak, _)| jni.is_same_object(weak, class))?;
        let hit = self.classes.remove(at);
        self.classes.insert(0, hit);
        Some(hit.1)
    }

    pub fn remember_class(&mut self, jni: &Jni, recorder: u64, class: jobject, name: NameId) {
        if self.recorder != recorder {
            self.forget_classes(jni);
            self.recorder = recorder;
        }
        let weak = jni.new_weak_global_ref(class);
        if weak.is_null() {
            return;
        }
        if self.classes.len() == CLASSES {
            if let Some((old, _)) = self.classes.pop() {
                jni.delete_weak_global_ref(old);
            }
        }
        self.classes.insert(0, (weak, name));
    }

    fn forget_classes(&mut self, jni: &Jni) {
        for (weak, _) in self.classes.drain(..) {
            jni.delete_weak_global_ref(weak);
        }
    }

    /// Deletes every reference (the OS thread is ending).
    pub fn forget(&mut self, jni: &Jni) {
        self.forget_classes(jni);
        if let Some((weak, _)) = self.thread.take() {
            jni.delete_weak_global_ref(weak);
        }
    }
}
