//! The committed runtime class files (`agent/java/classes/`, which the agent
//! embeds so that its build needs no JDK) are what javac makes of the sources
//! today: recompiled here with the JDK at hand (CI's is 17) and compared byte
//! for byte. Needs javac (JAVA_HOME or PATH), as every JVM test does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every file below `dir`, by path relative to it.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if p.extension().is_some_and(|x| x == "class") {
                let bytes = std::fs::read(&p).unwrap();
                out.insert(p.strip_prefix(root).unwrap().to_path_buf(), bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn committed_classes_match_the_sources() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let fresh = std::env::temp_dir().join(format!("profrj-runtime-classes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&fresh);
    let out = Command::new(root.join("scripts/refresh-runtime-classes"))
        .arg(&fresh)
        .output()
        .expect("cannot run scripts/refresh-runtime-classes");
    assert!(
        out.status.success(),
        "scripts/refresh-runtime-classes failed (it needs javac):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let committed_dir = root.join("agent/java/classes");
    let (committed, compiled) = (files(&committed_dir), files(&fresh));
    let version = |dir: &Path| {
        std::fs::read_to_string(dir.join("javac-version"))
            .map_or("?".into(), |v| v.trim().to_owned())
    };
    let (was, now) = (version(&committed_dir), version(&fresh));
    let _ = std::fs::remove_dir_all(&fresh);
    assert!(!compiled.is_empty(), "javac wrote no class files");
    let names = |m: &BTreeMap<PathBuf, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&committed),
        names(&compiled),
        "agent/java/classes lists other classes than the sources make: \
         run scripts/refresh-runtime-classes and commit the result \
         (and list new classes in agent/src/instrument/probe_class.rs)"
    );
    for (name, bytes) in &committed {
        assert!(
            compiled[name] == *bytes,
            "agent/java/classes/{} differs from what javac ({now}) makes of the sources now: \
             run scripts/refresh-runtime-classes and commit the result. The committed classes \
             came from {was}; another javac version may emit other bytes (commit JDK 17's, CI's).",
            name.display()
        );
    }
}
