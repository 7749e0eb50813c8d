//! Real third-party Java programs (Debian's groovy, jython, jruby, clojure, H2,
//! and javac itself) under the agent: same output as without it, no crash, a
//! snapshot that parses and shows the program's own code.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

/// Runs `cmd` with the agent injected through JAVA_TOOL_OPTIONS (the launchers
/// are shell scripts, so that is how a user reaches their JVM too).
fn run_with(
    program: &str,
    args: &[&str],
    agent_options: Option<&str>,
    cwd: &Path,
) -> (bool, String, String) {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .env_remove("JAVA_TOOL_OPTIONS");
    if let Some(o) = agent_options {
        // Instrumenting modes run with full verification of every class.
        let verify = if ["profile", "coverage", "memory", "trace"]
            .iter()
            .any(|m| o.contains(m))
        {
            "-Xverify:all "
        } else {
            ""
        };
        cmd.env(
            "JAVA_TOOL_OPTIONS",
            format!("{verify}-agentpath:{}={o}", agent().display()),
        );
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e} (is its Debian package installed?)"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Drops lines that report timings (H2's "(1 row, 197 ms)"), which differ run to run.
fn normalise(out: &str) -> String {
    out.lines()
        .filter(|l| !(l.starts_with('(') && l.ends_with(" ms)")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Same stdout with and without sampling, and with and without the profile
/// mode (default scope, then the JDK too); each snapshot has a frame whose
/// name starts with `package`.
fn check(name: &str, program: &str, args: &[&str], package: &str) {
    for mode in [
        "sampling,interval=1ms",
        "profile",
        "profile,include=*",
        "coverage",
        "coverage,include=*",
        "memory",
    ] {
        check_mode(name, program, args, package, mode);
    }
}

fn check_mode(name: &str, program: &str, args: &[&str], package: &str, mode: &str) {
    let dir = temp_dir(name);
    let (ok, plain, err) = run_with(program, args, None, &dir);
    assert!(ok, "{name} fails even without the agent:\n{err}");
    let snap = dir.join("snap.xml");
    let opts = format!("{mode},file={}", snap.display());
    let (ok, profiled, err) = run_with(program, args, Some(&opts), &dir);
    assert!(ok, "{name} fails under the agent ({mode}):\n{err}");
    assert!(
        !err.contains("VerifyError") && !err.contains("uninstrumented"),
        "{name} ({mode}):\n{err}"
    );
    assert_eq!(
        normalise(&plain),
        normalise(&profiled),
        "{name}: output differs under the agent ({mode})"
    );
    let xml = read_snapshot(&snap);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    if mode.starts_with("memory") {
        // The program's code allocated, and some of it is alive at exit.
        let live: u64 = doc
            .descendants()
            .filter(|n| n.has_tag_name("memory") && n.attribute("class").is_some())
            .map(|n| attr_u64(n, "count"))
            .sum();
        assert!(live > 0, "{name}: no live objects in <memory> ({mode})");
        return;
    }
    if mode.starts_with("coverage") {
        // The program's classes are listed and some of their lines ran.
        let ran = doc
            .descendants()
            .filter(|n| n.has_tag_name("class"))
            .filter(|n| n.attribute("name").is_some_and(|s| s.starts_with(package)))
            .flat_map(|c| c.children().filter(|m| m.has_tag_name("method")))
            .filter(|m| attr_u64(*m, "count") > 0)
            .count();
        assert!(ran > 0, "{name}: no {package}* method ran ({mode})");
        return;
    }
    let frames = doc
        .descendants()
        .filter(|n| n.has_tag_name("profile"))
        .filter(|n| n.attribute("name").is_some_and(|s| s.starts_with(package)))
        .count();
    assert!(
        frames > 0,
        "{name}: no {package}* frame in the snapshot ({mode})"
    );
}

#[test]
fn groovy() {
    let args = ["-e", "def f(n){ n<2?n:f(n-1)+f(n-2) }; println f(22)"];
    check("groovy", "groovy", &args, "org.codehaus.groovy");
    check_trace("groovy", "groovy", &args, "org.codehaus.groovy");
}

/// Same stdout with and without `trace` (3 million events here), and the
/// trace a well-formed document whose classes include `package`'s, with as
/// many method exits as entries.
fn check_trace(name: &str, program: &str, args: &[&str], package: &str) {
    use quick_xml::events::Event;
    let dir = temp_dir(&format!("{name}-trace"));
    let (ok, plain, err) = run_with(program, args, None, &dir);
    assert!(ok, "{name} fails even without the agent:\n{err}");
    let trace = dir.join("trace.xml");
    let opts = format!(
        "trace={},file={}",
        trace.display(),
        dir.join("s.xml").display()
    );
    let (ok, traced, err) = run_with(program, args, Some(&opts), &dir);
    assert!(ok, "{name} fails under trace:\n{err}");
    assert!(
        !err.contains("VerifyError") && !err.contains("uninstrumented"),
        "{err}"
    );
    assert_eq!(
        normalise(&plain),
        normalise(&traced),
        "{name}: output differs under trace"
    );
    let file = std::fs::File::open(&trace).unwrap();
    let mut r = quick_xml::Reader::from_reader(std::io::BufReader::new(file));
    let (mut buf, mut entries, mut exits, mut classes) = (Vec::new(), 0u64, 0u64, 0u64);
    loop {
        match r.read_event_into(&mut buf).expect("a well-formed trace") {
            Event::Eof => break,
            Event::Empty(e) => match e.name().as_ref() {
                b"methodEntry" => entries += 1,
                b"methodExit" => exits += 1,
                b"classDef" => {
                    let n = e.try_get_attribute("name").unwrap().unwrap();
                    classes += n.value.starts_with(package.as_bytes()) as u64;
                }
                _ => {}
            },
            _ => {}
        }
        buf.clear();
    }
    assert!(
        entries > 100_000 && classes > 10,
        "{entries} entries, {classes} {package} classes"
    );
    assert_eq!(
        entries, exits,
        "every call of the finished program returned"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn jython() {
    check(
        "jython",
        "jython",
        &["-c", "print(sum(i*i for i in range(200000)))"],
        "org.python",
    );
}

#[test]
fn jruby() {
    check(
        "jruby",
        "jruby",
        &["-e", "puts (1..200000).map{|i| i*i}.sum"],
        "org.jruby",
    );
}

#[test]
fn clojure() {
    check(
        "clojure",
        "clojure",
        &["-e", "(println (reduce + (map #(* % %) (range 300000))))"],
        "clojure.",
    );
}

#[test]
fn h2() {
    check("h2", &java().to_string_lossy(), &H2_SHELL, "org.h2");
}

/// 300 generated source files (classes calling each other, generics,
/// lambdas, inner classes) plus the harness: a few hundred files for javac.
fn generated_sources(dir: &Path) -> Vec<String> {
    let src = dir.join("gen/src/p");
    std::fs::create_dir_all(&src).unwrap();
    let mut files = Vec::new();
    for i in 0..300 {
        // Independent classes: a superclass chain 300 deep makes javac's
        // call paths (and the profile) grow without bound.
        let prev = if i == 0 {
            "null".to_owned()
        } else {
            format!("new C{}()", i - 1)
        };
        let body = format!(
            "package p;\nimport java.util.*;\nimport java.util.function.*;\n\
             public class C{i} {{\n\
               final Map<String, List<Integer>> m = new HashMap<>();\n\
               int f{i}(int x) {{ return x < 2 ? x : f{i}(x - 1) + {i}; }}\n\
               Object prev() {{ return {prev}; }}\n\
               <T extends Comparable<T>> T max(List<T> xs) {{ return xs.stream().max(Comparator.naturalOrder()).orElse(null); }}\n\
               Supplier<String> s() {{ return () -> \"c{i}\" + m.size(); }}\n\
               class Inner {{ int g() {{ return f{i}(3); }} }}\n\
               enum E {{ A, B, C }}\n\
               String sw(E e) {{ switch (e) {{ case A: return \"a\"; case B: return \"b\"; default: return \"c\"; }} }}\n\
             }}\n"
        );
        let f = src.join(format!("C{i}.java"));
        std::fs::write(&f, body).unwrap();
        files.push(f.to_string_lossy().into_owned());
    }
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("java-test-harness/src");
    files.extend(walk(&harness).map(|p| p.to_string_lossy().into_owned()));
    files
}

#[test]
fn javac_compiles_identical_classes() {
    let dir = temp_dir("javac");
    let files = generated_sources(&dir);
    assert!(files.len() > 300);
    let javac = jdk_tool("javac").to_string_lossy().into_owned();
    let compile = |out: &str, mode: Option<&str>| {
        let mut args = vec![
            "-g".to_owned(),
            "-d".to_owned(),
            dir.join(out).to_string_lossy().into_owned(),
        ];
        args.extend(files.iter().cloned());
        let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let snap = dir.join(format!("{out}.xml"));
        let opts = mode.map(|m| format!("{m},file={}", snap.display()));
        let (ok, _, err) = run_with(&javac, &arg_refs, opts.as_deref(), &dir);
        assert!(ok, "javac ({out}) failed:\n{err}");
        assert!(!err.contains("uninstrumented"), "javac ({out}):\n{err}");
        snap
    };
    compile("plain", None);
    let modes = [
        ("sampled", "sampling,interval=1ms"),
        ("profiled", "profile"),
        ("profiled-jdk", "profile,include=*"),
        ("covered", "coverage"),
        ("memory", "memory"),
    ];
    for (out, mode) in modes {
        let snap = compile(out, Some(mode));
        let plain: Vec<_> = walk(&dir.join("plain")).collect();
        assert!(plain.len() >= 300);
        for p in plain {
            let q = dir
                .join(out)
                .join(p.strip_prefix(dir.join("plain")).unwrap());
            assert_eq!(
                std::fs::read(&p).unwrap(),
                std::fs::read(&q).unwrap(),
                "{} differs",
                q.display()
            );
        }
        let xml = read_snapshot(&snap);
        assert!(
            xml.contains("com.sun.tools.javac."),
            "no javac frames in the snapshot ({mode})"
        );
    }
    // 2.4 GB of snapshots and classes: not left behind once they passed.
    let _ = std::fs::remove_dir_all(&dir);
}

fn walk(dir: &Path) -> impl Iterator<Item = std::path::PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    files.into_iter()
}

/// The JVM process started by `child` (a launcher script may exec it or fork it).
fn jvm_of(child: u32) -> Option<u32> {
    let is_jvm = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/maps")).is_ok_and(|m| m.contains("/libjvm.so"))
    };
    let mut family = vec![child];
    let mut i = 0;
    while i < family.len() {
        if is_jvm(family[i]) {
            return Some(family[i]);
        }
        for e in std::fs::read_dir("/proc").ok()?.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // Field 4 (after the parenthesised command) is the parent pid.
            let ppid = stat
                .rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().nth(1))
                .and_then(|p| p.parse().ok());
            if ppid == Some(family[i]) {
                family.push(pid);
            }
        }
        i += 1;
    }
    None
}

/// Attaching to a program that is already running (JRuby, mid-loop): the dump
/// shows its JIT-compiled Ruby method.
#[test]
fn attach_to_a_running_jruby_program() {
    let dir = temp_dir("jruby-attach");
    let script = "def fib(n) n < 2 ? n : fib(n-1) + fib(n-2) end; File.write('ready', ''); \
                  t = Time.now; fib(20) while Time.now - t < 8; puts 'finished'";
    let child = std::process::Command::new("jruby")
        .args(["-e", script])
        .current_dir(&dir)
        .env_remove("JAVA_TOOL_OPTIONS")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("cannot run jruby");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !dir.join("ready").exists() {
        assert!(std::time::Instant::now() < deadline, "jruby did not start");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let pid = jvm_of(child.id())
        .expect("no JVM under the jruby launcher")
        .to_string();
    let profrj = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_profrj"))
            .args(args)
            .args(["--agent", &agent().display().to_string()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "profrj {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let snap = dir.join("jr.xml");
    profrj(&[
        "attach",
        &pid,
        &format!("sampling,interval=2ms,file={}", snap.display()),
    ]);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    profrj(&["dump", &pid]);
    let xml = read_snapshot(&snap);
    assert!(
        xml.contains("RUBY$method$fib"),
        "no Ruby fib frames in the snapshot"
    );
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("finished"));
}
