//! javac for the tests that read its code: JAVA_HOME's, else the PATH's.

/// The class file of class `name`, whose whole source is `source`,
/// compiled with `flags` (e.g. `-g`) for release 11.
pub fn compile(name: &str, source: &str, flags: &[&str]) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("profrj-javac-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.java"));
    std::fs::write(&file, source).unwrap();
    let javac = std::env::var("JAVA_HOME")
        .map(|h| format!("{h}/bin/javac"))
        .unwrap_or_else(|_| "javac".into());
    let ok = std::process::Command::new(&javac)
        .args(flags)
        .args(["--release", "11", "-d"])
        .arg(&dir)
        .arg(&file)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {javac}: {e}"))
        .success();
    assert!(ok, "javac failed");
    let bytes = std::fs::read(dir.join(format!("{name}.class"))).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}
