// The JDK's javac, from JAVA_HOME or PATH. Shared (by include!) by the tests
// that need one: `tests/common` compiles the test harness with it, and
// `agent/tests/runtime_classes.rs` checks the committed runtime classes.
// The build itself needs no JDK.

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
