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

/// Logs `msg` as an error the first time `key` is seen, and never again:
/// a failure that repeats per class or per callback must not flood stderr.
pub fn error_once(key: &str, msg: &str) {
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut seen = SEEN.lock();
    if seen.get_or_insert_with(HashSet::new).insert(key.to_owned()) {
        error(msg);
    }
}
