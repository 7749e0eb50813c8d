//! The one trampoline between the VM and Rust: a panic must never unwind into
//! C++ frames of the JVM (that is undefined behaviour and usually a crash).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Once, OnceLock};

/// Runs `f`; if it panics, logs the panic (the hook below already printed where)
/// and returns `fallback`, so the VM carries on.
pub fn guard<R>(what: &'static str, fallback: R, f: impl FnOnce() -> R) -> R {
    guard_hot(what, fallback, || {
        inject_fault(what);
        f()
    })
}

/// [`guard`] without the fault injection's check (a load and a compare):
/// for the `profile` probes, which run on every instrumented call.
#[inline(always)]
pub fn guard_hot<R>(what: &'static str, fallback: R, f: impl FnOnce() -> R) -> R {
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

/// Fault injection for tests: `PROFRJ_INJECT_PANIC=<callback name>` (e.g.
/// `ThreadStart`, `sampler thread`) makes that callback panic, to show the
/// guard keeps the JVM alive. Read once; costs one comparison per callback.
fn inject_fault(what: &str) {
    static TARGET: OnceLock<Option<String>> = OnceLock::new();
    let target = TARGET.get_or_init(|| std::env::var("PROFRJ_INJECT_PANIC").ok());
    if target.as_deref() == Some(what) {
        panic!("fault injected into {what} (PROFRJ_INJECT_PANIC)");
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
            // Each panic site once: a bug hit per callback must not flood stderr.
            if crate::log::first_time_nonblocking(&format!("panic at {place}")) {
                crate::log::line(&format!("profrj: bug: panic at {place}: {msg}\n"));
            }
        }));
    });
}
