//! One counter per (allocating thread, type): objects alive and the most
//! ever alive. A tracked object's JVMTI tag names its counter, so the
//! ObjectFree event (posted by the VM from another thread) finds it without
//! a lookup: `MEMORY_TAG | index`. The agent's other tags (threads) are small
//! or negative numbers, never with that bit.
//!
//! Counters live in chunks that never move, found by index without a lock;
//! each thread keeps its own type → index cache, so the allocation path
//! takes no lock either once a thread has met a type.

use crate::agent::Agent;
use crate::vm::Jni;
use parking_lot::Mutex;
use std::cell::RefCell;
use std::sync::atomic::{AtomicI64, Ordering::Relaxed};
use std::sync::OnceLock;

const MEMORY_TAG: i64 = 1 << 62;
const CHUNK: usize = 4096;
const CHUNKS: usize = 1024;

#[derive(Default)]
pub struct Counter {
    live: AtomicI64,
    max: AtomicI64,
    index: usize,
}

impl Counter {
    pub fn tag(&self) -> i64 {
        MEMORY_TAG | self.index as i64
    }

    /// One more object alive (on its allocating thread).
    pub fn allocated(&self) {
        let now = self.live.fetch_add(1, Relaxed) + 1;
        self.max.fetch_max(now, Relaxed);
    }
}

static TABLE: [OnceLock<Box<[Counter]>>; CHUNKS] = [const { OnceLock::new() }; CHUNKS];
/// (thread, type) of each counter made so far, by index.
static OWNERS: Mutex<Vec<(i64, u32)>> = Mutex::new(Vec::new());

fn counter(index: usize) -> Option<&'static Counter> {
    let chunk = TABLE.get(index / CHUNK)?.get()?;
    chunk.get(index % CHUNK)
}

fn new_counter(thread: i64, ty: u32) -> Option<&'static Counter> {
    let mut owners = OWNERS.lock();
    let index = owners.len();
    let chunk = TABLE.get(index / CHUNK)?.get_or_init(|| {
        (0..CHUNK)
            .map(|i| Counter {
                index: index / CHUNK * CHUNK + i,
                ..Counter::default()
            })
            .collect()
    });
    owners.push((thread, ty));
    chunk.get(index % CHUNK)
}

/// This thread's agent id and its counter index (+1, 0 for none) by type.
struct ThreadCache {
    thread: Option<i64>,
    by_type: Vec<usize>,
}

thread_local! {
    static CACHE: RefCell<ThreadCache> = const {
        RefCell::new(ThreadCache { thread: None, by_type: Vec::new() })
    };
}

/// The calling thread's counter for type `ty`, made on first use.
pub fn for_current_thread(a: &Agent, jni: &Jni, ty: u32) -> Option<&'static Counter> {
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(&i) = c.by_type.get(ty as usize).filter(|&&i| i > 0) {
            return counter(i - 1);
        }
        let thread = match c.thread {
            Some(t) => t,
            None => {
                let t = a.jvmti.current_thread().ok()?;
                let id = a.threads.identify(a.jvmti, jni, t, 0);
                jni.delete_local_ref(t);
                let id = match id? {
                    crate::threads::Identity::Java(id) => id.0 as i64,
                    crate::threads::Identity::Agent => return None,
                };
                c.thread = Some(id);
                id
            }
        };
        let counter = new_counter(thread, ty)?;
        if c.by_type.len() <= ty as usize {
            c.by_type.resize(ty as usize + 1, 0);
        }
        c.by_type[ty as usize] = counter.index + 1;
        Some(counter)
    })
}

pub fn is_memory_tag(tag: i64) -> bool {
    tag & MEMORY_TAG != 0 && tag > 0
}

/// The ObjectFree event of a tagged object.
pub fn object_freed(tag: i64) {
    if is_memory_tag(tag) {
        if let Some(c) = counter((tag & !MEMORY_TAG) as usize) {
            c.live.fetch_sub(1, Relaxed);
        }
    }
}

/// (thread, type, live, max) of every counter.
pub fn all() -> Vec<(i64, u32, i64, i64)> {
    let owners = OWNERS.lock().clone();
    owners
        .into_iter()
        .enumerate()
        .filter_map(|(i, (thread, ty))| {
            let c = counter(i)?;
            Some((thread, ty, c.live.load(Relaxed), c.max.load(Relaxed)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_their_counters_and_frees_come_back() {
        let a = new_counter(7, 3).unwrap();
        let b = new_counter(7, 4).unwrap();
        assert!(is_memory_tag(a.tag()) && is_memory_tag(b.tag()));
        assert!(
            !is_memory_tag(5) && !is_memory_tag(-1),
            "thread tags are not ours"
        );
        for _ in 0..3 {
            a.allocated();
        }
        object_freed(a.tag());
        a.allocated();
        object_freed(5); // a thread's tag: ignored
        let rows = all();
        let row = rows.iter().find(|r| r.0 == 7 && r.1 == 3).unwrap();
        assert_eq!((row.2, row.3), (3, 3));
        assert_eq!(counter(b.index).unwrap().live.load(Relaxed), 0);
    }
}
