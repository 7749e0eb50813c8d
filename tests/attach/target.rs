//! What the attach tests share: a running LongRunning (or other harness)
//! JVM stopped through its stop file, waiting for a snapshot a dump writes,
//! and running a command for its exit code and output.

use crate::common::*;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const HOT: &str = "profrj.harness.CpuSplit.heavy()";

/// A running LongRunning JVM, stopped by creating its stop file.
pub struct Target {
    pub child: Child,
    pub dir: PathBuf,
    pub pid: i32,
}

impl Target {
    pub fn start(name: &str, jvm_args: &[&str]) -> Self {
        Self::start_main(name, jvm_args, "profrj.harness.LongRunning")
    }

    pub fn start_main(name: &str, jvm_args: &[&str], main: &str) -> Self {
        let dir = temp_dir(name);
        let stderr = std::fs::File::create(dir.join("stderr.txt")).unwrap();
        let mut child = Command::new(java())
            .current_dir(&dir)
            .args(jvm_args)
            .args(["-Xmx128m", "-cp", harness_classes(), main])
            .arg(dir.join("stop"))
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("cannot start java");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "target did not start");
        let pid = child.id() as i32;
        Target { child, dir, pid }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Lets the program finish; returns its stderr. Asserts a clean exit.
    pub fn finish(&mut self) -> String {
        std::fs::write(self.dir.join("stop"), b"").unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("target did not exit");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let stderr = std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap();
        assert!(status.success(), "target failed: {status:?}\n{stderr}");
        stderr
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap()
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits (up to 20 s) for a complete snapshot at `path` and checks it holds the hot method.
pub fn wait_snapshot(path: &Path) -> String {
    let xml = wait_snapshot_any(path);
    assert!(
        xml.contains(HOT),
        "{} lacks the hot method {HOT}",
        path.display()
    );
    xml
}

/// Waits (up to 20 s) for a complete snapshot at `path`.
pub fn wait_snapshot_any(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "no snapshot at {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    read_snapshot(path)
}

pub fn run(cmd: &mut Command) -> (i32, String) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}
