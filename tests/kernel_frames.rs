//! Kernel frames (`sampling,event=cpu,kernel=on`) on a real JVM, against
//! `profrj.harness.NativeFrames kernel`: a thread reading /dev/zero, whose
//! CPU is split between the kernel (the read system call) and user code by
//! construction, the split measured by the thread itself from
//! /proc/thread-self/stat. Where the kernel refuses this process perf
//! events (not root and `perf_event_paranoid` > 1, a container's seccomp
//! filter: the test asks the kernel as the agent does), the agent must say
//! so and sample on the CPU timers instead: that is what is asserted there;
//! likewise for the kernel stacks of waiting threads.

mod common;

use common::*;

const MAIN: &str = "profrj.harness.NativeFrames";
const JAVA_READ: &str = "profrj.harness.NativeFrames.readZeros()";

/// Would the kernel give this process a perf event with kernel call chains?
/// Asked of the kernel itself, as the agent asks (root, `perf_event_paranoid`
/// and a container's seccomp filter all have their say): a task-clock event
/// on this thread, kernel included, opened and closed.
fn perf_events_allowed() -> bool {
    // perf_event_attr as of PERF_ATTR_SIZE_VER0 (64 bytes) is enough to ask.
    let mut attr = [0u64; 8];
    attr[0] = 1 | (64 << 32); // type PERF_TYPE_SOFTWARE, size 64
    attr[1] = 1; // PERF_COUNT_SW_TASK_CLOCK
    attr[2] = 1_000_000; // sample period
    attr[3] = 1 << 5; // PERF_SAMPLE_CALLCHAIN
    attr[5] = 1; // disabled
                 // SAFETY: perf_event_open reads `attr`'s 64 bytes; pid 0: this thread.
    let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), 0, -1, -1, 0) };
    if fd >= 0 {
        // SAFETY: the descriptor just opened, closed once.
        unsafe { libc::close(fd as i32) };
    }
    fd >= 0
}

/// Does the kernel show this process its threads' kernel stacks?
fn kernel_stacks_allowed() -> bool {
    std::fs::read_to_string("/proc/thread-self/stack").is_ok()
}

/// The count of type `ty` in a `frameTypes`/`selfTypes` value.
fn type_count(n: roxmltree::Node, attr: &str, ty: &str) -> u64 {
    n.attribute(attr)
        .unwrap_or("")
        .split(' ')
        .filter_map(|part| part.split_once(':'))
        .filter(|(t, _)| *t == ty)
        .map(|(_, c)| c.parse::<u64>().unwrap())
        .sum()
}

/// A kernel frame of an interrupt's entry: the kernel took an interrupt
/// (a timer's, a device's) while the thread ran, in its own code or in the
/// kernel; what is below it is what the thread was doing then.
fn is_interrupt_entry(name: &str) -> bool {
    name.starts_with("asm_sysvec_") || name.starts_with("asm_common_interrupt")
}

/// Thread `thread`'s samples: how many have a kernel frame on top, of
/// those how many have a kernel frame named `*read*` under them (the system
/// call) and how many the Java method `java` that made the call, all
/// samples, and of those on top how many are in an interrupt's entry
/// outside any read.
fn kernel_samples(xml: &str, thread: &str, java: &str) -> (u64, u64, u64, u64, u64) {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let t = threads(&doc, "sampler", thread);
    assert_eq!(t.len(), 1, "one thread {thread}");
    let all = attr_u64(t[0], "cumulatedElapsed");
    let (mut top, mut in_read, mut under_java, mut interrupts) = (0, 0, 0, 0);
    for n in t[0].descendants().filter(|n| n.has_tag_name("profile")) {
        let k = type_count(n, "selfTypes", "kernel");
        if k == 0 {
            continue;
        }
        top += k;
        let path: Vec<_> = n
            .ancestors()
            .filter(|a| a.has_tag_name("profile"))
            .collect();
        let read = path.iter().any(|a| {
            type_count(*a, "frameTypes", "kernel") > 0
                && a.attribute("name").unwrap().contains("read")
        });
        let interrupt = path.iter().any(|a| {
            type_count(*a, "frameTypes", "kernel") > 0
                && is_interrupt_entry(a.attribute("name").unwrap())
        });
        if read {
            in_read += k;
        } else if interrupt {
            interrupts += k;
        }
        if path.iter().any(|a| a.attribute("name") == Some(java)) {
            under_java += k;
        }
    }
    (top, in_read, under_java, all, interrupts)
}

/// The reading thread spends almost all its CPU in the kernel (its system
/// time's share, the kernel's own accounting, which the thread prints, is
/// checked to be 90% or more): 90% of its CPU samples or more have kernel
/// frames on top, within 5 points of that share; those samples are in the
/// read system call (a kernel frame named `*read*` under the top one) and
/// under the Java method that made the calls, through the JDK's and libc's
/// frames between (`cstack=fp`), in 90% of them or more. Shares near 100%:
/// a loaded machine moves neither much. Where perf events are refused,
/// one `profrj:` warning says why and the thread is still sampled, with no
/// kernel frame.
#[test]
fn kernel_frames_take_the_system_time_s_share_of_cpu_samples() {
    let dir = temp_dir("kernel-frames");
    let run = run_java_with(
        &dir,
        &["-Xcheck:jni"],
        "sampling,event=cpu,interval=1ms,kernel=on,cstack=fp,file=s.xml",
        MAIN,
        &["kernel", "2000"],
    );
    run.assert_success();
    for line in run.stderr.lines() {
        assert!(line.starts_with("profrj:"), "foreign stderr line {line:?}");
    }
    let words: Vec<&str> = run.stdout.split_whitespace().collect();
    assert_eq!(words.len(), 4, "stdout: {}", run.stdout);
    let permille: u64 = words[3].parse().unwrap();
    let xml = read_snapshot(&dir.join("s.xml"));
    let (top, in_read, under_java, all, _) = kernel_samples(&xml, "kernel-work", JAVA_READ);
    eprintln!(
        "kernel on top in {top} of {all} samples ({} per mille; the thread's system time {permille}), {in_read} in a read, {under_java} under {JAVA_READ}",
        top * 1000 / all.max(1)
    );
    assert!(all >= 200, "too few samples: {all}");
    if !perf_events_allowed() {
        assert!(
            run.stderr
                .contains("kernel=on: the kernel refused a perf event"),
            "{}",
            run.stderr
        );
        assert_eq!(top, 0);
        return;
    }
    assert!(!run.stderr.contains("refused"), "{}", run.stderr);
    assert!(
        permille >= 900,
        "the harness's thread spent only {permille} per mille of its CPU in the kernel"
    );
    let share = top * 1000 / all;
    assert!(
        share >= 900 && share.abs_diff(permille) <= 50,
        "kernel frames on top in {share} per mille of the samples, system time {permille}"
    );
    assert!(in_read * 10 >= top * 9, "{in_read} of {top} in a read");
    assert!(
        under_java * 10 >= top * 9,
        "{under_java} of {top} under {JAVA_READ}"
    );
}

/// `event=wall,kernel=on`: a thread that waits in the kernel's read of a
/// pipe (by construction, for 1.5 s but its first instructions) has in 90%
/// of its wall samples or more the kernel's frames of that wait on top
/// (a frame named `*read*`: `anon_pipe_read` over `vfs_read` over
/// `ksys_read`…), under the harness's Java method that reads. The kernel
/// shows a task's stack to root only: elsewhere one `profrj:` warning says
/// so, and the samples have no kernel frame.
#[test]
fn a_thread_blocked_in_a_system_call_is_seen_inside_it() {
    let dir = temp_dir("kernel-frames-wall");
    let run = run_java(
        &dir,
        "sampling,kernel=on,file=s.xml",
        MAIN,
        &["blocked", "1500"],
    );
    run.assert_success();
    assert_eq!(run.stdout.trim(), "blocked-read 1");
    for line in run.stderr.lines() {
        assert!(line.starts_with("profrj:"), "foreign stderr line {line:?}");
    }
    let xml = read_snapshot(&dir.join("s.xml"));
    let (top, in_read, under_java, all, interrupts) = kernel_samples(
        &xml,
        "kernel-blocked",
        "profrj.harness.NativeFrames.blockedRead()",
    );
    eprintln!("wall: kernel on top in {top} of {all} samples, {in_read} in a read, {interrupts} in an interrupt outside it, {under_java} under blockedRead()");
    assert!(all >= 100, "too few samples: {all}");
    if !kernel_stacks_allowed() {
        assert!(
            run.stderr
                .contains("kernel=on: cannot read the kernel's stacks"),
            "{}",
            run.stderr
        );
        assert_eq!(top, 0);
        return;
    }
    assert!(
        top * 10 >= all * 9,
        "kernel frames on top in {top} of {all}"
    );
    // Every kernel-topped sample is the read's, but for an interrupt the
    // kernel took while the thread ran its own code around the read (one
    // in 152, `asm_sysvec_apic_timer_interrupt` over `Object.getClass`
    // copying the bytes read, 2026-12-07): a few at most.
    assert_eq!(
        in_read + interrupts,
        top,
        "every kernel-topped sample in the read or an interrupt"
    );
    assert!(
        interrupts * 50 <= top,
        "{interrupts} of {top} in interrupts"
    );
    assert_eq!(
        under_java, top,
        "every kernel-topped sample under blockedRead()"
    );
}

/// A bad value: one message naming the option and its valid values; and
/// beside another mode, it belongs to sampling.
#[test]
fn a_bad_kernel_value_is_one_clear_error() {
    let dir = temp_dir("kernel-frames-bad");
    let run = run_java(
        &dir,
        "sampling,event=cpu,kernel=yes",
        MAIN,
        &["kernel", "10"],
    );
    assert!(!run.success());
    assert!(
        run.stderr
            .contains("bad value for kernel: 'yes' (valid: on, off)"),
        "{}",
        run.stderr
    );
    let run = run_java(&dir, "memory,kernel=on", MAIN, &["kernel", "10"]);
    assert!(!run.success());
    assert!(
        run.stderr.contains("option 'kernel' belongs to sampling"),
        "{}",
        run.stderr
    );
}
