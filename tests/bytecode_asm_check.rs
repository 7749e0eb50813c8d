//! ASM as a second verifier (`java-test-harness/asm-src`, compiled here with
//! Debian's libasm-java on the class path): CheckClassAdapter, ASM's
//! Analyzer with a SimpleVerifier resolving the class hierarchy from the
//! originals, and every StackMapTable frame checked against the inferred
//! types. Used for the JDK 17 runtime image, whose java.* classes the JVM
//! cannot verify in a fresh loader, and on the Debian jars.

mod common;

use common::*;
use profrj_bytecode::code::{decode_code, decode_frames, encode_frames, initial_locals, VType};
use profrj_bytecode::edit::{edit_method, Edit};
use profrj_bytecode::{parse_class, write_class};
use std::borrow::Cow;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The JDK whose runtime image is checked; its `java` runs the checker, so the
/// hierarchy it resolves is the image's own.
const JDK: &str = "/usr/lib/jvm/java-17-openjdk-amd64";
const ASM: &str = "/usr/share/java/asm.jar:/usr/share/java/asm-tree.jar:/usr/share/java/asm-analysis.jar:/usr/share/java/asm-util.jar";
const ALL_PROBES: &str = "--probes=entry,exit,catch,lines,allocations,counters";

/// The checker's class directory, compiled once per test binary.
fn checker() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        for jar in ASM.split(':') {
            assert!(
                Path::new(jar).is_file(),
                "{jar} missing: install Debian's libasm-java (.ci/run does)"
            );
        }
        let dir = temp_dir("asm-checker");
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("java-test-harness/asm-src/profrj/asmcheck/AsmCheck.java");
        let ok = Command::new(Path::new(JDK).join("bin/javac"))
            .args(["-cp", ASM, "-d"])
            .arg(&dir)
            .arg(src)
            .status()
            .unwrap()
            .success();
        assert!(ok, "javac failed on AsmCheck.java");
        dir
    })
}

struct Verdict {
    report: String,
    classes: usize,
    methods: usize,
    frames: usize,
    failures: usize,
    original_failures: usize,
}

/// Runs the checker: `source` is `jrt` or the original jar (+ dependencies).
fn check(rewritten: &Path, source: &[&str]) -> Verdict {
    let cp = format!("{}:{ASM}", checker().display());
    let o = Command::new(Path::new(JDK).join("bin/java"))
        .args(["--add-modules", "ALL-SYSTEM", "-cp", &cp])
        .arg("profrj.asmcheck.AsmCheck")
        .arg(rewritten)
        .args(source)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let field = |k: &str| -> usize {
        report
            .split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {k} in {report}"))
    };
    Verdict {
        classes: field("classes="),
        methods: field("methods="),
        frames: field("frames="),
        failures: field("failures="),
        original_failures: field("original-failures="),
        report,
    }
}

fn instrument(input: &Path, out: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_profrj"))
        .args(["instrument", ALL_PROBES])
        .arg(input)
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every class of the JDK 17 runtime image (all modules), rewritten with
/// every probe kind, passes ASM's checks wherever its original does.
#[test]
fn jdk_image_rewritten_with_every_probe_kind_passes_asm_verification() {
    let dir = temp_dir("asm-jdk");
    let image = dir.join("image");
    let ok = Command::new(Path::new(JDK).join("bin/jimage"))
        .args(["extract", "--dir"])
        .arg(&image)
        .arg(Path::new(JDK).join("lib/modules"))
        .status()
        .unwrap()
        .success();
    assert!(ok, "jimage extract failed");
    let out = dir.join("jdk.jar");
    let rewrite = instrument(&image, &out);
    eprintln!("rewrite: {rewrite}");
    assert!(rewrite.contains(" 0 refused"), "{rewrite}");
    std::fs::remove_dir_all(&image).unwrap();
    let v = check(&out, &["jrt"]);
    eprintln!("ASM: {}", v.report);
    assert_eq!(v.failures, 0, "{}", v.report);
    assert!(
        v.classes > 26_000 && v.methods > 200_000 && v.frames > 500_000,
        "{}",
        v.report
    );
    // The JDK's LambdaForm $Holder classes (access flags CheckClassAdapter
    // rejects) and one method ASM's SimpleVerifier gets wrong.
    assert!(v.original_failures < 10, "{}", v.report);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Debian jars, second opinion after the JVM's (tests/bytecode_instrument.rs).
#[test]
fn debian_jars_rewritten_with_every_probe_kind_pass_asm_verification() {
    let dir = temp_dir("asm-jars");
    for jar in ["groovy-all", "clojure", "h2", "jython", "jruby-core"] {
        let original = format!("/usr/share/java/{jar}.jar");
        let out = dir.join(format!("{jar}.jar"));
        let rewrite = instrument(Path::new(&original), &out);
        assert!(rewrite.contains(" 0 refused"), "{rewrite}");
        let v = check(&out, &[&original, "/usr/share/java/spec.alpha.jar"]);
        eprintln!("{jar}: {}", v.report.lines().next().unwrap_or(""));
        assert_eq!(v.failures, 0, "{jar}: {}", v.report);
        assert!(v.methods > 10_000 && v.frames > 30_000, "{}", v.report);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The checker has teeth: H2 classes broken on purpose, one way the Analyzer
/// sees (a probe popping an empty stack) and one only the frame check sees
/// (every frame's reference locals retyped to java/lang/Integer), fail.
#[test]
fn asm_check_rejects_broken_rewrites() {
    let dir = temp_dir("asm-broken");
    let original = "/usr/share/java/h2.jar";
    let mut z = zip::ZipArchive::new(std::fs::File::open(original).unwrap()).unwrap();
    let out = dir.join("broken.jar");
    let mut w = zip::ZipWriter::new(std::fs::File::create(&out).unwrap());
    // The frame-broken classes first: the report lists the first 20 failures.
    for (written, name) in [
        "org/h2/util/Utils.class",
        "org/h2/util/IOUtils.class",
        "org/h2/util/StringUtils.class",
    ]
    .into_iter()
    .enumerate()
    {
        let mut data = Vec::new();
        z.by_name(name).unwrap().read_to_end(&mut data).unwrap();
        let broken = if written < 2 {
            retype_frames(&data)
        } else {
            pop_at_entry(&data)
        };
        w.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(&broken).unwrap();
    }
    w.finish().unwrap();
    let v = check(&out, &[original]);
    let kind = |k: &str| -> usize {
        v.report
            .split(|c: char| c.is_whitespace() || c == ')')
            .find_map(|w| w.strip_prefix(k))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {k} in {}", v.report))
    };
    // StringUtils: every method with code; Utils, IOUtils: those with a
    // reference local in a frame.
    assert!(kind("analyzer=") > 20, "{}", v.report);
    assert!(kind("frame=") > 10, "{}", v.report);
    assert_eq!(v.failures, kind("analyzer=") + kind("frame="));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every method starts with `pop` on an empty stack.
fn pop_at_entry(data: &[u8]) -> Vec<u8> {
    let mut class = parse_class(data).unwrap();
    for i in 0..class.methods.len() {
        let edit = Edit {
            entry: vec![profrj_bytecode::code::Insn::plain(0x57, &[])],
            ..Edit::default()
        };
        let _ = edit_method(&mut class, i, &edit);
    }
    write_class(&class)
}

/// Every reference local (but `this`) of every frame declared Integer.
fn retype_frames(data: &[u8]) -> Vec<u8> {
    let mut class = parse_class(data).unwrap();
    let integer = class.constant_pool.class_index("java/lang/Integer");
    let this = class
        .constant_pool
        .class_name(class.this_class)
        .unwrap_or_default();
    for m in 0..class.methods.len() {
        let cp = &mut class.constant_pool;
        let method = class.methods[m].clone();
        let desc = cp.text(method.descriptor_index).unwrap();
        let is_init = cp.utf8(method.name_index) == Some(b"<init>");
        let Some(slot) = method
            .attributes
            .iter()
            .position(|a| cp.utf8(a.name_index) == Some(b"Code"))
        else {
            continue;
        };
        let code = decode_code(&method.attributes[slot].data).unwrap();
        let is_static = method.access_flags & 0x0008 != 0;
        let initial = initial_locals(&desc, (!is_static).then_some(&this), is_init, &mut |c| {
            cp.class_index(c)
        })
        .unwrap();
        let mut new = code.clone();
        for a in &mut new.attributes {
            if cp.utf8(a.name_index) != Some(b"StackMapTable") {
                continue;
            }
            let mut frames = decode_frames(&a.data, &initial, &|o| code.index_at(o)).unwrap();
            for f in &mut frames {
                let skip = usize::from(!is_static);
                for t in f.locals.iter_mut().skip(skip) {
                    if matches!(t, VType::Object(_)) {
                        *t = VType::Object(integer);
                    }
                }
            }
            let offsets: Vec<usize> = code.offsets.iter().map(|&o| o as usize).collect();
            a.data = Cow::Owned(encode_frames(&frames, &initial, &offsets));
        }
        let (body, _) = profrj_bytecode::code::encode_code(&new).unwrap();
        class.methods[m].attributes[slot].data = Cow::Owned(body);
    }
    write_class(&class)
}
