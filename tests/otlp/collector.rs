//! The real OpenTelemetry Collector of the otlp tests (built by
//! `tests/otelcol/build.sh`, which `scripts/test-all --install-only` runs),
//! started on a free 127.0.0.1 port with the OTLP/HTTP receiver and a
//! `file` exporter whose JSON lines the tests read back.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The collector binary; the test fails (never skips) without it.
pub fn binary() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("tests/otelcol/build.sh"))
        .arg("--path")
        .output()
        .expect("cannot run tests/otelcol/build.sh");
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(
        path.is_file(),
        "the test collector is not built ({}): run scripts/test-all --install-only \
         (or tests/otelcol/build.sh), which builds it from Go modules",
        path.display()
    );
    path
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct Collector {
    child: Child,
    /// The file exporter's output (JSON, a line per request).
    pub file: PathBuf,
    log: PathBuf,
}

/// TLS for the receiver: (certificate, key) PEM files.
pub type Tls<'a> = Option<(&'a Path, &'a Path)>;

impl Collector {
    /// Starts one on `port`, writing to `dir/name.json`; waits until it listens.
    pub fn start(dir: &Path, name: &str, port: u16, tls: Tls) -> Collector {
        let file = dir.join(format!("{name}.json"));
        let log = dir.join(format!("{name}.log"));
        let tls = match tls {
            Some((cert, key)) => format!(
                "\n        tls:\n          cert_file: {}\n          key_file: {}",
                cert.display(),
                key.display()
            ),
            None => String::new(),
        };
        let config = format!(
            "receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{port}{tls}
exporters:
  file:
    path: {}
    flush_interval: 100ms
  debug:
    verbosity: basic
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [otlp]
      exporters: [file, debug]
",
            file.display()
        );
        let config_path = dir.join(format!("{name}.yaml"));
        std::fs::write(&config_path, config).unwrap();
        let child = Command::new(binary())
            .arg(format!("--config=file:{}", config_path.display()))
            .arg("--feature-gates=service.profilesSupport")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("cannot start the collector");
        let mut c = Collector { child, file, log };
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let text = std::fs::read_to_string(&c.log).unwrap_or_default();
            if text.contains("Everything is ready") {
                break;
            }
            if let Ok(Some(status)) = c.child.try_wait() {
                panic!("the collector exited ({status}):\n{text}");
            }
            assert!(
                Instant::now() < until,
                "the collector did not start:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        c
    }

    /// Stops it as an operator does (SIGTERM): it finishes the requests it
    /// took, flushes its exporters and exits; then it is waited for.
    pub fn stop(&mut self) {
        // SAFETY: kill(2) on our own child's pid, not yet waited for.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let _ = self.child.wait();
    }

    /// Kills it at once (SIGKILL: a collector that vanishes).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The requests it wrote, waiting (at most 20 s) until there are `n`.
    pub fn requests(&self, n: usize) -> Vec<serde_json::Value> {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let got = read_requests(&self.file);
            if got.len() >= n || Instant::now() > until {
                return got;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.kill();
    }
}

/// POSTs the request in file `pb` (`convert --to otlp`'s) to the collector
/// on `port` with curl, as a user would; its HTTP status must be 200.
pub fn post(pb: &Path, port: u16) {
    let curl = Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST"])
        .args([
            "-H",
            "Content-Type: application/x-protobuf",
            "--data-binary",
        ])
        .arg(format!("@{}", pb.display()))
        .arg(format!("http://127.0.0.1:{port}/v1development/profiles"))
        .output()
        .expect("curl (scripts/test-all installs it)");
    assert_eq!(String::from_utf8_lossy(&curl.stdout), "200", "{curl:?}");
}

/// Every complete JSON line of a file exporter's output.
pub fn read_requests(file: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
