//! The Java test harness, compiled by the tests themselves (the build needs
//! no JDK): once per state of `java-test-harness/src`, shared by every test
//! binary and thread.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The harness programs compiled, as a class path: compiled on first use
/// into `<target>/harness-classes-<hash of the sources>`.
pub fn harness_classes() -> &'static str {
    static DIR: OnceLock<String> = OnceLock::new();
    DIR.get_or_init(|| compile_harness().display().to_string())
}

/// -g: full debug info (line numbers, local variables), as a real build has;
/// --release 11 keeps the classes runnable on every JDK the tests use.
const HARNESS_JAVAC_FLAGS: [&str; 5] = ["-g", "-encoding", "UTF-8", "--release", "11"];

fn compile_harness() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = Vec::new();
    collect_java(&root.join("java-test-harness/src"), &mut sources);
    sources.sort();
    // FNV-1a over the flags and every source's path and bytes: any change
    // (an edit, a file added or removed) gives a new directory.
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes.iter().chain(&[0]) {
            hash = (hash ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(HARNESS_JAVAC_FLAGS.join(" ").as_bytes());
    for s in &sources {
        eat(s.strip_prefix(root).unwrap().as_os_str().as_encoded_bytes());
        eat(&std::fs::read(s).unwrap_or_else(|e| panic!("{}: {e}", s.display())));
    }
    let target = super::profile_dir().parent().unwrap().to_path_buf();
    let dir = target.join(format!("harness-classes-{hash:016x}"));
    if dir.is_dir() {
        return dir; // complete: it only ever appears by a rename
    }
    let javac = find_javac().unwrap_or_else(|| {
        panic!(
            "no `javac` found: the tests compile java-test-harness/src and need a JDK \
             (17 or newer; Debian: `apt-get install openjdk-17-jdk-headless`) on PATH or in JAVA_HOME"
        )
    });
    // Test binaries may race here: each compiles into a directory of its
    // own and renames it into place; the first rename wins, the others'
    // (the same classes) are dropped.
    let tmp = target.join(format!(
        ".harness-classes-{hash:016x}.{}.tmp",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let out = Command::new(&javac)
        .args(HARNESS_JAVAC_FLAGS)
        .arg("-d")
        .arg(&tmp)
        .args(&sources)
        .output();
    if !out.as_ref().is_ok_and(|o| o.status.success()) {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    let out = out.unwrap_or_else(|e| panic!("cannot run {}: {e}", javac.display()));
    assert!(
        out.status.success(),
        "{} failed on java-test-harness/src:\n{}",
        javac.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    if let Err(e) = std::fs::rename(&tmp, &dir) {
        let _ = std::fs::remove_dir_all(&tmp);
        assert!(dir.is_dir(), "cannot rename into {}: {e}", dir.display());
    }
    dir
}

fn collect_java(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect_java(&p, out);
        } else if p.extension().is_some_and(|x| x == "java") {
            out.push(p);
        }
    }
}

/// The JDK's javac: $JAVA_HOME/bin/javac, else the first on PATH.
fn find_javac() -> Option<PathBuf> {
    if let Ok(home) = std::env::var("JAVA_HOME") {
        let p = Path::new(&home).join("bin/javac");
        if p.is_file() {
            return Some(p);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("javac"))
        .find(|p| p.is_file())
}

/// The 1-based number of the line of harness program `class`'s source
/// (`java-test-harness/src/profrj/harness/CLASS.java`) that holds `text`,
/// which must be on one line only: expected lines follow the source.
pub fn harness_line(class: &str, text: &str) -> u32 {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("java-test-harness/src/profrj/harness")
        .join(format!("{class}.java"));
    let source = std::fs::read_to_string(&path).unwrap();
    let found: Vec<usize> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(text))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(found.len(), 1, "{text:?} in {}: {found:?}", path.display());
    found[0] as u32
}
