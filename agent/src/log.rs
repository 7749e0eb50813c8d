//! Messages to the JVM's stderr, always prefixed `profrj:` so users can tell
//! them from the application's output.

use parking_lot::Mutex;
use std::collections::HashSet;
use std::io::Write;

pub fn error(msg: &str) {
    line(&format!("profrj: error: {msg}\n"));
}

pub fn warn(msg: &str) {
    line(&format!("profrj: warning: {msg}\n"));
}

pub fn info(msg: &str) {
    line(&format!("profrj: {msg}\n"));
}

/// Writes `text` to stderr in one `write(2)`. `eprintln!` writes its pieces
/// one by one (stderr is unbuffered), so when build tools forward several
/// forked JVMs' stderr through one stream, another fork's line could land
/// between "profrj: " and the rest (seen under Gradle: "profrj: profrj:
/// snapshot written…"). A line under PIPE_BUF written at once arrives whole.
pub fn line(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
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
