//! Messages to the JVM's stderr, always prefixed `profrj:` so users can tell
//! them from the application's output.

use parking_lot::Mutex;
use std::collections::HashSet;

pub fn error(msg: &str) {
    eprintln!("profrj: error: {msg}");
}

pub fn warn(msg: &str) {
    eprintln!("profrj: warning: {msg}");
}

pub fn info(msg: &str) {
    eprintln!("profrj: {msg}");
}

static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// Logs `msg` as an error the first time `key` is seen, and never again:
/// a failure that repeats per class or per callback must not flood stderr.
pub fn error_once(key: &str, msg: &str) {
    let mut seen = SEEN.lock();
    if seen.get_or_insert_with(HashSet::new).insert(key.to_owned()) {
        error(msg);
    }
}

/// Logs `msg` as a warning the first time `key` is seen, and never again.
pub fn warn_once(key: &str, msg: &str) {
    let mut seen = SEEN.lock();
    if seen.get_or_insert_with(HashSet::new).insert(key.to_owned()) {
        warn(msg);
    }
}

/// Is this the first time `key` is seen? For the panic hook, which must never
/// block: if the set is busy it answers yes (a repeated line beats a deadlock).
pub fn first_time_nonblocking(key: &str) -> bool {
    match SEEN.try_lock() {
        Some(mut seen) => seen.get_or_insert_with(HashSet::new).insert(key.to_owned()),
        None => true,
    }
}
