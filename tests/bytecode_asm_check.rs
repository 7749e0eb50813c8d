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
            entry: vec![profrj_bytecode::code::Insn::plain(
                profrj_bytecode::opcodes::POP,
                &[],
            )],
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
        .class_utf8(class.this_class)
        .unwrap_or_default();
    for m in 0..class.methods.len() {
        let cp = &mut class.constant_pool;
        let method = class.methods[m].clone();
        let desc = cp.utf8(method.descriptor_index).unwrap();
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
        let initial = initial_locals(desc, (!is_static).then_some(this), is_init, &mut |c| {
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

/// A method whose conditionals the coverage mode's line counters push past
/// ±32 KiB: 1,500 short lines inside a `do`-`while`, a `for`, an `if` and a
/// ternary whose far side is a switch expression, evaluated with a long, a
/// String, a double and an uninitialized `new Box` on the operand stack.
fn widen_source() -> String {
    let mut block = String::new();
    for k in 0..1500 {
        let line = match k % 6 {
            0 => format!("acc += arr[{k} & 7] * 3 + {k};"),
            1 => format!("d = d * 0.5 + {k};"),
            2 => format!(
                "s = s.length() > 12 ? label : s + (char) ('a' + {});",
                k % 26
            ),
            3 => format!("arr[{k} & 7] ^= (int) acc;"),
            4 => format!("o = ({k} & i) == 0 ? s : bx0;"),
            _ => "acc ^= bx0.v + (o == bx0 ? 1 : 2);".to_string(),
        };
        block.push_str("                            ");
        block.push_str(&line);
        block.push('\n');
    }
    format!(
        r#"
public class Widen {{
    static final class Box {{
        final long v; final String s;
        Box(long v, String s) {{ this.v = v; this.s = s; }}
    }}
    static long mix(String s, double d, Box b) {{ return s.length() * 31L + (long) d + b.v + b.s.length(); }}
    static long big(int n, String label) {{
        long acc = 3L;
        double d = 1.5;
        String s = label;
        int[] arr = new int[8];
        Box bx0 = new Box(7, "seven");
        Object o = s;
        int rounds = 0;
        do {{
            for (int i = 0; i < n; i++) {{
                if (i % 3 != 2) {{
                    acc += mix(s, d, new Box(i, i > 0 ? switch (i & 1) {{
                        case 0 -> {{
{block}
                            yield s;
                        }}
                        default -> "odd";
                    }} : "zero"));
                }}
                acc += o == s ? 1 : 5;
            }}
            rounds++;
        }} while (rounds < 2 && acc != 0);
        return acc ^ (long) d ^ s.hashCode() ^ java.util.Arrays.hashCode(arr);
    }}
    public static void main(String[] a) {{
        System.out.println(big(5, "x") + " " + big(0, "y") + " " + big(9, "zz"));
    }}
}}
"#
    )
}

/// The frames after widened conditionals (issue 3): `Widen.big`, 24 KB of
/// code, rewritten with every probe kind and the coverage mode's line
/// counters (a `long[]` in a new local, ten bytes per line), has its
/// conditionals widened into inverted conditions over `goto_w`. The frames
/// computed for the instructions after them (the new local in them, the
/// operand stack of the ternary included) satisfy the JVM under
/// -Xverify:all, which then prints what the original prints, and ASM.
#[test]
fn widened_conditionals_get_frames_the_jvm_and_asm_accept() {
    let dir = temp_dir("asm-widen");
    let (src, classes) = (dir.join("src"), dir.join("classes"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("Widen.java"), widen_source()).unwrap();
    let ok = Command::new(Path::new(JDK).join("bin/javac"))
        .args(["-g", "--release", "17", "-d"])
        .arg(&classes)
        .arg(src.join("Widen.java"))
        .status()
        .unwrap()
        .success();
    assert!(ok, "javac failed");
    // The checker reads the originals from a jar.
    let original = dir.join("original.jar");
    let ok = Command::new(Path::new(JDK).join("bin/jar"))
        .arg("cf")
        .arg(&original)
        .arg("-C")
        .arg(&classes)
        .arg(".")
        .status()
        .unwrap()
        .success();
    assert!(ok, "jar failed");
    let out = dir.join("widen.jar");
    let o = Command::new(env!("CARGO_BIN_EXE_profrj"))
        .args([
            "instrument",
            "--probes=entry,exit,catch,counters,allocations",
        ])
        .arg(&original)
        .arg(&out)
        .output()
        .unwrap();
    let rewrite = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && rewrite.contains(" 0 refused"),
        "{rewrite}"
    );

    // The rewritten `big`: each widened conditional jumps over the goto_w
    // right after it, and a frame stands where it lands.
    let mut z = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
    let mut data = Vec::new();
    z.by_name("Widen.class")
        .unwrap()
        .read_to_end(&mut data)
        .unwrap();
    let mut class = parse_class(&data).unwrap();
    let m = (0..class.methods.len())
        .find(|&m| class.constant_pool.utf8(class.methods[m].name_index) == Some(b"big"))
        .unwrap();
    let method = class.methods[m].clone();
    let cp = &mut class.constant_pool;
    let code_attr = method
        .attributes
        .iter()
        .find(|a| cp.utf8(a.name_index) == Some(b"Code"))
        .unwrap();
    let code = decode_code(&code_attr.data).unwrap();
    let smt = code
        .attributes
        .iter()
        .find(|a| cp.utf8(a.name_index) == Some(b"StackMapTable"))
        .unwrap();
    let initial = initial_locals(b"(ILjava/lang/String;)J", None, false, &mut |c| {
        cp.class_index(c)
    })
    .unwrap();
    let frames = decode_frames(&smt.data, &initial, &|o| code.index_at(o)).unwrap();
    use profrj_bytecode::code::Insn;
    use profrj_bytecode::opcodes::{is_conditional, GOTO_W};
    let widened: Vec<usize> = (0..code.insns.len().saturating_sub(2))
        .filter(|&i| match (&code.insns[i], &code.insns[i + 1]) {
            (Insn::Branch { op, target }, Insn::Branch { op: GOTO_W, .. }) => {
                is_conditional(*op) && code.labels[target.0 as usize] == i as u32 + 2
            }
            _ => false,
        })
        .collect();
    // do-while, for, if, the ternary (and javac's `&&` of the while).
    eprintln!("widened conditionals at {widened:?}");
    assert!(widened.len() >= 4, "{widened:?}");
    let long_array = VType::Object(cp.class_index("[J"));
    let mut stacks = Vec::new();
    for &i in &widened {
        let f = frames
            .iter()
            .find(|f| f.at == i as u32 + 2)
            .unwrap_or_else(|| panic!("no frame after the widened conditional at {i}"));
        assert!(f.locals.contains(&long_array), "{f:?}");
        eprintln!("frame after {i}: stack {:?}", f.stack);
        stacks.push(f.stack.clone());
    }
    // The ternary's: acc, s, d, the Box twice (new, dup), i as a long.
    assert!(
        stacks.iter().any(|s| s.len() == 6
            && s[0] == VType::Long
            && s[2] == VType::Double
            && matches!(s[3], VType::Uninitialized(_))
            && s[3] == s[4]
            && s[5] == VType::Long),
        "{stacks:?}"
    );

    let run = |cp: &str| {
        let o = Command::new(Path::new(JDK).join("bin/java"))
            .args(["-Xverify:all", "-cp", cp, "Widen"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{stderr}");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let expected = run(classes.to_str().unwrap());
    let got = run(&format!("{}:{}", out.display(), harness_classes()));
    assert_eq!(got, expected);

    let v = check(&out, &[original.to_str().unwrap()]);
    eprintln!("ASM: {}", v.report);
    assert_eq!(v.failures, 0, "{}", v.report);
    assert!(v.methods >= 5, "{}", v.report);
    std::fs::remove_dir_all(&dir).unwrap();
}
