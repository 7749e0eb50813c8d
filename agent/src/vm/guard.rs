//! The one trampoline between the VM and Rust: a panic must never unwind into
//! C++ frames of the JVM (that is undefined behaviour and usually a crash).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

/// Runs `f`; if it panics, logs the panic (the hook below already printed where)
/// and returns `fallback`, so the VM carries on.
pub fn guard<R>(what: &'static str, fallback: R, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => {
            crate::log::error_once(
                what,
                &format!("internal error in {what}; that work is skipped, the JVM continues"),
            );
            fallback
        }
    }
}

/// Replaces the default panic message with one that says it came from profrj.
/// The hook is this library's own (the agent carries its own copy of std).
pub fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(no message)");
            let place = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            eprintln!("profrj: bug: panic at {place}: {msg}");
        }));
    });
}
