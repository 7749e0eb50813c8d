//! An attach peer that is not a JVM (issue 29, item 1): a process of the
//! target uid that maps a file named `libjvm.so` and listens on
//! `/tmp/.java_pid<pid>` passes every identity check a root `profrj` makes
//! (its uid, the socket's owner, SO_PEERCRED), so what it answers must cost
//! `profrj` nothing: a bounded read, one deadline for the whole exchange, and
//! control characters printed escaped. The peer is a real process (a small
//! Python program run as uid 65534) on a real socket. Needs root (CI runs as
//! root): without it the tests fail and say so.

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};

/// The peer: maps `<dir>/libjvm.so`, listens on `/tmp/.java_pid<its pid>`,
/// prints "ready", then answers every connection as `mode` says:
/// - `flood`: "0\n" then 512 MiB of 'A' (the old client kept all of it);
/// - `dribble`: "0\n" then one byte a second for two minutes;
/// - `escapes`: writes a reply file full of terminal escapes (the request
///   names it), answers "0\nreturn code: 0\n"; on the second connection it
///   refuses with an escape-laden error instead.
///
/// For each connection it prints the bytes it managed to send.
const PEER: &str = r#"
import mmap, os, socket, sys, time
mode, d = sys.argv[1], sys.argv[2]
lib = os.path.join(d, "libjvm.so")
with open(lib, "wb") as f:
    f.write(b"\0" * 4096)
f = open(lib, "rb")
mapped = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
path = "/tmp/.java_pid%d" % os.getpid()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(4)
print("ready", flush=True)
ESC = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\u009b1m\u202eevil"
n = 0
try:
    while True:
        c, _ = s.accept()
        n += 1
        req = b""
        while req.count(b"\0") < 5:
            chunk = c.recv(4096)
            if not chunk:
                break
            req += chunk
        sent = 0
        try:
            if mode == "flood":
                c.sendall(b"0\n")
                block = b"A" * 65536
                for _ in range(8192):
                    c.sendall(block)
                    sent += len(block)
            elif mode == "dribble":
                c.sendall(b"0\n")
                for _ in range(120):
                    c.sendall(b"7")
                    sent += 1
                    time.sleep(1)
            elif mode == "escapes" and n == 1:
                opts = req.split(b"\0")[4].decode()
                reply = [o[6:] for o in opts.split(",") if o.startswith("reply=")][0]
                with open(reply, "w") as r:
                    r.write("ok\nline one\n" + ESC + "\tline two\n")
                c.sendall(b"0\nreturn code: 0\n")
            else:
                c.sendall(("-1\n" + ESC + "\n").encode())
        except OSError:
            pass
        print("sent %d" % sent, flush=True)
        c.close()
finally:
    os.unlink(path)
"#;

/// The escapes the peer sends, as `profrj` must print them.
const ESCAPED: &str = r"\x1b]0;pwned\x07\x1b[2J\x1b[31mred\u{9b}1m\u{202e}evil";

fn require_root() {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "these tests run a fake peer as uid 65534 and profrj as root; run them as root (CI does)"
    );
}

struct Peer {
    child: Child,
    out: BufReader<std::process::ChildStdout>,
    pid: i32,
}

impl Peer {
    fn start(mode: &str) -> Self {
        require_root();
        let dir = temp_dir(&format!("peer-{mode}"));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let python = ["/usr/bin/python3", "python3"]
            .into_iter()
            .find(|p| !p.starts_with('/') || std::path::Path::new(p).exists())
            .unwrap();
        let mut child = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .args([python, "-c", PEER, mode])
            .arg(&dir)
            .stdout(Stdio::piped())
            .spawn()
            .expect("cannot start the peer through setpriv");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready", "the peer did not start");
        let pid = child.id() as i32;
        Peer { child, out, pid }
    }

    /// How many bytes the peer sent on its next connection, once closed.
    fn sent(&mut self) -> u64 {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        line.trim()
            .strip_prefix("sent ")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("peer said {line:?}"))
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(format!("/tmp/.java_pid{}", self.pid));
    }
}

/// `profrj ARGS` to its end, with what it cost (a hang fails the test).
fn profrj(args: &[&str]) -> Measured {
    let run = profrj_measured(args, None);
    run.assert_finished(&format!("profrj {}", args.join(" ")));
    run
}

#[test]
fn an_endless_answer_is_cut_at_the_bound() {
    let mut peer = Peer::start("flood");
    let run = profrj(&["status", &peer.pid.to_string(), "--timeout", "5s"]);
    let sent = peer.sent();
    let text = run.text();
    eprintln!(
        "profrj: exit {}, peak RSS {} KiB; the peer sent {sent} bytes",
        run.code, run.max_rss_kib
    );
    assert_eq!(run.code, 1, "{text}");
    assert!(text.contains("longer than 4096 bytes"), "{text}");
    assert!(
        run.max_rss_kib < 32 * 1024,
        "peak RSS {} KiB",
        run.max_rss_kib
    );
    assert!(sent < 64 << 20, "profrj kept reading: {sent} bytes");
}

#[test]
fn the_timeout_covers_the_whole_exchange() {
    let mut peer = Peer::start("dribble");
    let run = profrj(&["status", &peer.pid.to_string(), "--timeout", "2s"]);
    let sent = peer.sent();
    let text = run.text();
    assert_eq!(run.code, 1, "{text}");
    assert!(
        text.contains("no complete answer within 2s (--timeout)"),
        "{text}"
    );
    // One byte a second: a client that waited per read would have taken all 120.
    assert!(sent < 60, "the peer kept going for {sent} bytes: {text}");
}

#[test]
fn control_characters_from_the_peer_are_printed_escaped() {
    let mut peer = Peer::start("escapes");
    let pid = peer.pid.to_string();
    // A reply file: printed on stdout, its newlines and tabs kept.
    let run = profrj(&["status", &pid]);
    peer.sent();
    let text = run.text();
    assert_eq!(run.code, 0, "{text}");
    let stdout = String::from_utf8(run.stdout.clone()).unwrap();
    assert_eq!(stdout, format!("line one\n{ESCAPED}\tline two\n"));
    assert_no_controls(&run);
    // A refusal: printed on stderr.
    let run = profrj(&["status", &pid]);
    peer.sent();
    let text = run.text();
    assert_eq!(run.code, 1, "{text}");
    let stderr = String::from_utf8(run.stderr.clone()).unwrap();
    assert!(stderr.contains(ESCAPED), "{stderr}");
    assert_no_controls(&run);
}

/// Nothing but newlines and tabs among the control characters printed.
fn assert_no_controls(run: &Measured) {
    for out in [&run.stdout, &run.stderr] {
        let raw = String::from_utf8_lossy(out);
        assert!(
            !raw.chars()
                .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{202e}'),
            "a control character reached the terminal: {raw:?}"
        );
    }
}
