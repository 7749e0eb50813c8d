//! Native frames (`cstack=`) on real JVMs, against
//! `profrj.harness.NativeFrames` and its JNI library
//! (java-test-harness/native/native_frames.c, compiled here with `cc`):
//! C frames named by their symbols over the Java native method that called
//! them, the VM's own C++ frames demangled over theirs, and `cstack=no`
//! (the default) keeping Java frames only.

mod common;

use common::*;
use std::path::{Path, PathBuf};

const MAIN: &str = "profrj.harness.NativeFrames";
const JAVA_CALLER: &str = "profrj.harness.NativeFrames.callNative()";
const JAVA_NATIVE: &str = "profrj.harness.NativeFrames.spin(native)";
const C_CALLER: &str = "Java_profrj_harness_NativeFrames_spin";
const C_SPIN: &str = "profrj_spin";

/// One JVM at a time: a share of samples is asserted, and two busy JVMs on
/// a 2-core machine would starve each other's samplers.
fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The harness's JNI library built with `flags` into `dir`.
fn jni_library(dir: &Path, flags: &[&str]) -> PathBuf {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("java-test-harness/native/native_frames.c");
    let lib = dir.join("libnative_frames.so");
    let status = std::process::Command::new("cc")
        .args(["-shared", "-fPIC"])
        .args(flags)
        .arg("-o")
        .arg(&lib)
        .arg(&source)
        .status()
        .expect("cannot run cc (the C compiler: `apt-get install gcc`)");
    assert!(status.success(), "cc {flags:?} failed");
    lib
}

/// Runs the harness under `-Xcheck:jni` with `options`; asserts a clean run:
/// the program's one line on stdout, only `profrj:` lines on stderr, no
/// JNI warning. Returns the snapshot.
fn run_clean(dir: &Path, options: &str, args: &[&str], stdout_word: &str) -> String {
    // JDK 22 and later warn on stderr when an unnamed module loads a
    // library, unless native access is enabled; JDK 11 knows no such option.
    let run = run_java_with(
        dir,
        &[
            "-Xcheck:jni",
            "-XX:+IgnoreUnrecognizedVMOptions",
            "--enable-native-access=ALL-UNNAMED",
        ],
        &if options.contains("interval=") {
            format!("sampling,{options},file=s.xml")
        } else {
            format!("sampling,interval=10ms,{options},file=s.xml")
        },
        MAIN,
        args,
    );
    run.assert_success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "stdout: {}", run.stdout);
    assert!(lines[0].starts_with(stdout_word), "stdout: {}", run.stdout);
    for line in run.stderr.lines() {
        assert!(line.starts_with("profrj:"), "foreign stderr line {line:?}");
    }
    assert!(!run.stderr.contains("WARNING"), "{}", run.stderr);
    read_snapshot(&dir.join("s.xml"))
}

/// The one sampler thread named `name`.
fn sampler_thread<'a, 'i>(doc: &'a roxmltree::Document<'i>, name: &str) -> roxmltree::Node<'a, 'i> {
    let t = threads(doc, "sampler", name);
    assert_eq!(t.len(), 1, "expected one thread {name}");
    t[0]
}

/// The nodes reached from `from` (any depth) by the exact chain `names`,
/// each the child of the one before.
fn chains<'a, 'i>(from: roxmltree::Node<'a, 'i>, names: &[&str]) -> Vec<roxmltree::Node<'a, 'i>> {
    let mut at = find_nodes(from, names[0]);
    for name in &names[1..] {
        at = at
            .iter()
            .flat_map(|n| n.children())
            .filter(|c| c.has_tag_name("profile") && c.attribute("name") == Some(name))
            .collect();
    }
    at
}

/// The JNI thread's samples: `profrj_spin` on top of its C caller on top of
/// the Java native method on top of its Java caller in ≥ 90% of them. By
/// construction the thread spends all its time in `profrj_spin` but for the
/// loop's Java instructions between calls of tens of milliseconds each and
/// the C functions' few instructions around the call (a sample there has a
/// shorter native part): far under 10%.
fn check_jni_thread(xml: &str, mode: &str) {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let t = sampler_thread(&doc, "native-spin");
    let all = attr_u64(t, "cumulatedElapsed");
    let spin = sum_attr(
        &chains(t, &[JAVA_CALLER, JAVA_NATIVE, C_CALLER, C_SPIN]),
        "cumulatedElapsed",
    );
    eprintln!("cstack={mode}: {spin} of {all} samples in {C_SPIN} under its callers");
    assert!(all >= 50, "too few samples: {all}");
    assert!(
        spin * 10 >= all * 9,
        "cstack={mode}: {spin} of {all} samples with the full native stack"
    );
}

#[test]
fn c_frames_with_frame_pointers_over_their_java_caller() {
    let _one = exclusive();
    let dir = temp_dir("native-fp");
    let lib = jni_library(&dir, &["-O2", "-fno-omit-frame-pointer"]);
    let xml = run_clean(
        &dir,
        "cstack=fp",
        &["jni", lib.to_str().unwrap(), "2000"],
        "calls ",
    );
    check_jni_thread(&xml, "fp");
}

/// With `event=cpu` (the thread's CPU timer signals it wherever it runs;
/// `event=wall` signals a thread in native code only with `cstack=`, which
/// the test above covers). Every 2 ms of its CPU: on 2 cores at load 10 the
/// thread gets a fifth of one, ~400 ms of its 2 s, still ~200 samples.
#[test]
fn c_frames_without_frame_pointers_by_dwarf() {
    let _one = exclusive();
    let dir = temp_dir("native-dwarf");
    let lib = jni_library(
        &dir,
        &[
            "-O2",
            "-fomit-frame-pointer",
            "-fasynchronous-unwind-tables",
        ],
    );
    let xml = run_clean(
        &dir,
        "event=cpu,interval=2ms,cstack=dwarf",
        &["jni", lib.to_str().unwrap(), "2000"],
        "calls ",
    );
    check_jni_thread(&xml, "dwarf");
}

/// A thread busy in the VM's own code (filling in Throwables' stack traces):
/// its samples show the VM's C++ frames, demangled without parameters, over
/// the Java native method that called into the VM: the chain
/// `Throwable.fillInStackTrace(native)` → libjava's JNI function →
/// `JVM_FillInStackTrace` → `java_lang_Throwable::fill_in_stack_trace` is
/// there with both walks, and no name is left mangled. With `dwarf`, most
/// samples (all but those in the loop's Java code and the Throwable's
/// constructor, short next to a 200-frame walk) are under
/// `JVM_FillInStackTrace`, whatever the VM does there: on JDK 11 the thread
/// mostly waits at the safepoints the JVMTI sampler of the other threads
/// makes (its GetStackTrace is a VM operation there), inside libc's
/// pthread functions, which `fp` cannot walk through (no frame pointers):
/// with `fp` only the chain's presence is asserted.
#[test]
fn vm_frames_are_demangled_over_their_java_caller() {
    let _one = exclusive();
    let into_vm = [
        "java.lang.Throwable.fillInStackTrace(native)",
        "Java_java_lang_Throwable_fillInStackTrace",
        "JVM_FillInStackTrace",
    ];
    let filling = [
        into_vm.as_slice(),
        &["java_lang_Throwable::fill_in_stack_trace"],
    ]
    .concat();
    for mode in ["fp", "dwarf"] {
        let dir = temp_dir(&format!("native-vm-{mode}"));
        let xml = run_clean(
            &dir,
            &format!("cstack={mode}"),
            &["vm", "2000"],
            "throwables ",
        );
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let t = sampler_thread(&doc, "vm-work");
        let all = attr_u64(t, "cumulatedElapsed");
        let in_vm = sum_attr(&chains(t, &into_vm), "cumulatedElapsed");
        let in_fill = sum_attr(&chains(t, &filling), "cumulatedElapsed");
        eprintln!(
            "cstack={mode}: {in_vm} of {all} samples in JVM_FillInStackTrace, {in_fill} filling in"
        );
        assert!(all >= 50, "too few samples: {all}");
        assert!(
            in_fill > 0,
            "cstack={mode}: no sample in fill_in_stack_trace"
        );
        if mode == "dwarf" {
            assert!(in_vm * 2 >= all, "cstack={mode}: {in_vm} of {all}");
        }
        let mangled: Vec<&str> = t
            .descendants()
            .filter_map(|n| n.attribute("name"))
            .filter(|n| n.contains("_ZN"))
            .collect();
        assert!(mangled.is_empty(), "mangled names: {mangled:?}");
    }
}

/// `cstack=no`, given or by default: the stacks end at the Java native
/// method, as without the option (no native frame under any thread).
#[test]
fn cstack_no_keeps_java_frames_only() {
    let _one = exclusive();
    for options in ["cstack=no", ""] {
        let dir = temp_dir("native-no");
        let lib = jni_library(&dir, &["-O2"]);
        let xml = run_clean(
            &dir,
            options,
            &["jni", lib.to_str().unwrap(), "1000"],
            "calls ",
        );
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let t = sampler_thread(&doc, "native-spin");
        let natives = find_nodes(t, JAVA_NATIVE);
        assert!(!natives.is_empty(), "{options}: no {JAVA_NATIVE}");
        for n in natives {
            let above: Vec<_> = n.children().filter(|c| c.has_tag_name("profile")).collect();
            assert!(above.is_empty(), "{options}: frames over the native method");
        }
        let sampler = doc
            .root_element()
            .children()
            .find(|n| n.has_tag_name("sampler"))
            .unwrap();
        let c_names: Vec<&str> = sampler
            .descendants()
            .filter_map(|n| n.attribute("name"))
            .filter(|n| *n == C_SPIN || *n == C_CALLER || n.contains("::"))
            .collect();
        assert!(c_names.is_empty(), "{options}: native frames {c_names:?}");
    }
}

/// A bad value: one message naming the option and its valid values.
#[test]
fn a_bad_cstack_value_is_one_clear_error() {
    let dir = temp_dir("native-bad");
    let run = run_java(&dir, "sampling,cstack=lbr", MAIN, &["vm", "10"]);
    assert!(!run.success());
    assert!(
        run.stderr
            .contains("bad value for cstack: 'lbr' (valid: no, fp, dwarf)"),
        "{}",
        run.stderr
    );
}
