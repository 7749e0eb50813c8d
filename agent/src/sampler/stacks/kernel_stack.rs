//! `event=wall,kernel=on`: where in the kernel a thread that is not running
//! Java code waits (a blocking system call, a sleep, a monitor's futex), as
//! the kernel itself reports it in `/proc/self/task/TID/stack`, read by the
//! sampler thread when it walks such a thread (JVMTI) and added on top of
//! its Java frames. A running thread is caught by its signal in user mode,
//! so its wall samples have no kernel frames; CPU samples get theirs from
//! perf events (`signal/perf_event.rs`).
//!
//! The kernel shows a task's stack to root only (CAP_SYS_ADMIN); elsewhere
//! the read fails, which is said once, and samples go on without.

use crate::log;
use std::io::Read;

/// The most read of one stack file: a kernel stack is at most a few dozen
/// lines of about 50 bytes.
const MAX_BYTES: u64 = 16 << 10;
/// The most kernel frames kept of one stack.
const MAX_FRAMES: usize = 64;

/// The kernel functions of thread `tid`'s kernel stack, top first, into
/// `out` (cleared): none where the thread is not in the kernel, or the
/// file cannot be read (said once).
pub(super) fn read(tid: i32, out: &mut Vec<String>) {
    out.clear();
    let path = format!("/proc/self/task/{tid}/stack");
    let mut text = String::new();
    let read = std::fs::File::open(&path).and_then(|f| f.take(MAX_BYTES).read_to_string(&mut text));
    if let Err(e) = read {
        if e.raw_os_error() != Some(libc::ENOENT) {
            log::warn_once(
                "kernel-stacks",
                &format!("sampling: kernel=on: cannot read the kernel's stacks of waiting threads ({path}: {e}; the kernel shows them to root only): their samples have no kernel frames"),
            );
        }
        return;
    }
    parse(&text, out);
}

/// `[<0>] function+0x10/0x20` lines into function names, top first.
fn parse(text: &str, out: &mut Vec<String>) {
    for line in text.lines().take(MAX_FRAMES) {
        let Some((_, rest)) = line.split_once("] ") else {
            continue;
        };
        let name = rest.split(['+', ' ']).next().unwrap_or("");
        if !name.is_empty() {
            out.push(name.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_give_the_functions_top_first() {
        let text = "[<0>] pipe_read+0x31f/0x480\n[<0>] vfs_read+0x2b5/0x320\n[<0>] ksys_read+0x6f/0xf0 [some_module]\nnonsense\n";
        let mut out = Vec::new();
        parse(text, &mut out);
        assert_eq!(out, ["pipe_read", "vfs_read", "ksys_read"]);
    }

    /// A thread asleep in the kernel: its stack names the sleep, where the
    /// kernel shows stacks to this process; nothing otherwise.
    #[test]
    fn a_sleeping_thread_s_stack_names_its_sleep() {
        let (tx, rx) = std::sync::mpsc::channel();
        let sleeper = std::thread::spawn(move || {
            tx.send(crate::vm::hotspot::current_tid()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(300));
        });
        let tid = rx.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let mut out = Vec::new();
        read(tid, &mut out);
        sleeper.join().unwrap();
        // SAFETY: geteuid takes no arguments and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            assert!(out.iter().any(|f| f.contains("sleep")), "{out:?}");
        }
    }
}
