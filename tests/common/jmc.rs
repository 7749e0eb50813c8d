//! JMC's JFR parser (Maven Central's `flightrecorder`, as `scripts/test-all`
//! fetches it) behind the small Java readers in `java-test-harness/jmc/`.

use super::{host_java, m2_class_path, stdout_of, temp_dir};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// JMC's parser and what it needs.
pub const JMC_JARS: [&str; 4] = [
    "org/openjdk/jmc/flightrecorder/9.1.1/flightrecorder-9.1.1.jar",
    "org/openjdk/jmc/common/9.1.1/common-9.1.1.jar",
    "org/owasp/encoder/encoder/1.2.3/encoder-1.2.3.jar",
    "org/lz4/lz4-java/1.8.0/lz4-java-1.8.0.jar",
];

/// `java-test-harness/jmc/READER.java` compiled against JMC's jars, once
/// per reader per test binary: the directory of its class.
fn compiled(reader: &str) -> PathBuf {
    static DIRS: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);
    let mut dirs = DIRS.lock().unwrap();
    let dirs = dirs.get_or_insert_with(HashMap::new);
    if let Some(d) = dirs.get(reader) {
        return d.clone();
    }
    let dir = temp_dir(&format!("jmc-{reader}"));
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("java-test-harness/jmc")
        .join(format!("{reader}.java"));
    let ok = Command::new(host_java().with_file_name("javac"))
        .args(["-nowarn", "-d"])
        .arg(&dir)
        .args(["-cp", &m2_class_path(&JMC_JARS)])
        .arg(&src)
        .status()
        .unwrap()
        .success();
    assert!(ok, "javac {reader} failed");
    dirs.insert(reader.to_owned(), dir.clone());
    dir
}

/// Runs JMC reader `reader` (`JmcRead`, `JmcFrameTypes`) on `recording`:
/// its standard output; it must succeed.
pub fn run_jmc_reader(reader: &str, recording: &Path) -> String {
    let cp = format!(
        "{}:{}",
        compiled(reader).display(),
        m2_class_path(&JMC_JARS)
    );
    stdout_of(
        Command::new(host_java())
            .args(["-cp", &cp, reader])
            .arg(recording),
    )
}
