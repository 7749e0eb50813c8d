// Shared by the build scripts of the root package (the test harness) and the
// agent (its Java runtime classes): the JDK's javac, from JAVA_HOME or PATH.

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
