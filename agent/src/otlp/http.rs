//! One HTTP/1.1 POST with a deadline for the whole exchange (resolving,
//! connecting, TLS, writing, reading the answer), over a std `TcpStream`,
//! with rustls for https. A connection per request (`Connection: close`):
//! one request a period needs no pool. What is read back is bounded: the
//! status line and headers to [`MAX_HEAD`], the body to [`MAX_BODY`].

use super::config::{Config, Endpoint};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MAX_HEAD: usize = 16 << 10;
const MAX_BODY: usize = 64 << 10;

/// Why a request did not succeed.
#[derive(Debug)]
pub enum Failure {
    /// Name resolution, connection refused or unreachable.
    Connect(String),
    /// The deadline passed.
    Timeout,
    /// The connection broke, or the peer closed it early.
    Io(String),
    Tls(String),
    /// The answer is not HTTP.
    Malformed(String),
    /// A non-2xx answer: its status, `Retry-After` (seconds) and the start
    /// of its body.
    Status(u16, Option<u64>, String),
}

impl Failure {
    /// OTLP/HTTP's retryable answers (429, 502, 503, 504) and the
    /// network's failures; any other answer is final for that request.
    pub fn retryable(&self) -> bool {
        match self {
            Failure::Status(s, ..) => matches!(s, 429 | 502 | 503 | 504),
            Failure::Connect(_) | Failure::Timeout | Failure::Io(_) => true,
            Failure::Tls(_) | Failure::Malformed(_) => false,
        }
    }

    /// The kind, for logging each kind once.
    pub fn kind(&self) -> String {
        match self {
            Failure::Connect(_) => "connect".into(),
            Failure::Timeout => "timeout".into(),
            Failure::Io(_) => "io".into(),
            Failure::Tls(_) => "tls".into(),
            Failure::Malformed(_) => "malformed".into(),
            Failure::Status(s, ..) => format!("http {s}"),
        }
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Failure::Status(_, Some(s), _) => Some(Duration::from_secs(*s)),
            _ => None,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Connect(e) => write!(f, "cannot connect: {e}"),
            Failure::Timeout => f.write_str("no answer within the timeout"),
            Failure::Io(e) => write!(f, "connection failed: {e}"),
            Failure::Tls(e) => write!(f, "TLS: {e}"),
            Failure::Malformed(e) => write!(f, "not an HTTP answer: {e}"),
            Failure::Status(s, _, body) if body.is_empty() => write!(f, "HTTP {s}"),
            Failure::Status(s, _, body) => write!(f, "HTTP {s}: {body}"),
        }
    }
}

/// The longest one read or write blocks before the deadline is looked at
/// again (it may move closer: the JVM is exiting).
const SLICE: Duration = Duration::from_millis(200);

/// When a request must be over: `deadline()` is asked again at every
/// slice, so an exit can cut a request already waiting.
pub type Deadline<'a> = &'a dyn Fn() -> Instant;

/// The time left before `deadline`, or [`Failure::Timeout`].
fn left(deadline: Deadline) -> Result<Duration, Failure> {
    deadline()
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or(Failure::Timeout)
}

fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

fn io_failure(e: io::Error) -> Failure {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Failure::Timeout,
        _ => Failure::Io(e.to_string()),
    }
}

/// The socket, plain or under TLS.
enum Conn {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Conn {
    fn socket(&self) -> &TcpStream {
        match self {
            Conn::Plain(s) => s,
            Conn::Tls(t) => &t.sock,
        }
    }

    /// Bounds the next read or write by the deadline, a slice at a time.
    fn arm(&self, deadline: Deadline) -> Result<(), Failure> {
        let d = left(deadline)?.min(SLICE);
        let s = self.socket();
        s.set_read_timeout(Some(d)).map_err(io_failure)?;
        s.set_write_timeout(Some(d)).map_err(io_failure)
    }

    fn write_all(&mut self, mut buf: &[u8], deadline: Deadline) -> Result<(), Failure> {
        while !buf.is_empty() {
            self.arm(deadline)?;
            let n = match self {
                Conn::Plain(s) => s.write(buf),
                Conn::Tls(t) => t.write(buf),
            };
            match n {
                Ok(0) => return Err(Failure::Io("the peer closed the connection".into())),
                Ok(n) => buf = &buf[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted || timed_out(&e) => {}
                Err(e) => return Err(tls_or_io(e)),
            }
        }
        loop {
            self.arm(deadline)?;
            let r = match self {
                Conn::Plain(s) => s.flush(),
                Conn::Tls(t) => t.flush(),
            };
            match r {
                Err(e) if e.kind() == io::ErrorKind::Interrupted || timed_out(&e) => {}
                r => return r.map_err(tls_or_io),
            }
        }
    }

    fn read(&mut self, buf: &mut [u8], deadline: Deadline) -> Result<usize, Failure> {
        loop {
            self.arm(deadline)?;
            let n = match self {
                Conn::Plain(s) => s.read(buf),
                Conn::Tls(t) => t.read(buf),
            };
            match n {
                Err(e) if e.kind() == io::ErrorKind::Interrupted || timed_out(&e) => {}
                // A TLS peer that closes without close_notify: the end.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                r => return r.map_err(tls_or_io),
            }
        }
    }
}

/// rustls reports its errors as `InvalidData` I/O errors.
fn tls_or_io(e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::InvalidData {
        Failure::Tls(e.to_string())
    } else {
        io_failure(e)
    }
}

fn connect(
    e: &Endpoint,
    tls: Option<&Arc<rustls::ClientConfig>>,
    deadline: Deadline,
) -> Result<Conn, Failure> {
    let addrs: Vec<SocketAddr> = (e.host.as_str(), e.port)
        .to_socket_addrs()
        .map_err(|err| Failure::Connect(format!("{}: {err}", e.host)))?
        .collect();
    let mut last = Failure::Connect(format!("{}: no address", e.host));
    let mut socket = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, left(deadline)?) {
            Ok(s) => {
                socket = Some(s);
                break;
            }
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) =>
            {
                last = Failure::Timeout
            }
            Err(err) => last = Failure::Connect(format!("{a}: {err}")),
        }
    }
    let socket = socket.ok_or(last)?;
    let _ = socket.set_nodelay(true);
    match tls {
        None => Ok(Conn::Plain(socket)),
        Some(config) => {
            let name = rustls::pki_types::ServerName::try_from(e.host.clone())
                .map_err(|err| Failure::Tls(format!("{}: {err}", e.host)))?;
            let conn = rustls::ClientConnection::new(config.clone(), name)
                .map_err(|err| Failure::Tls(err.to_string()))?;
            Ok(Conn::Tls(Box::new(rustls::StreamOwned::new(conn, socket))))
        }
    }
}

/// POSTs `body` (gzipped protobuf) to the configured endpoint; `Ok` with
/// the 2xx status, or why not. Never longer than until `deadline()` (but
/// for name resolution, which the system's resolver bounds).
pub fn post(config: &Config, body: &[u8], deadline: Deadline) -> Result<u16, Failure> {
    let e = &config.endpoint;
    let mut conn = connect(e, config.tls.as_ref(), deadline)?;
    let host = if e.host.contains(':') {
        format!("[{}]:{}", e.host, e.port)
    } else {
        format!("{}:{}", e.host, e.port)
    };
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: profrj/{}\r\n\
         Content-Type: application/x-protobuf\r\nContent-Encoding: gzip\r\n\
         OTLP-Profiles-Development-Version: 1\r\nContent-Length: {}\r\nConnection: close\r\n",
        e.path,
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    for (k, v) in &config.headers {
        head.push_str(k);
        head.push_str(": ");
        head.push_str(v);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes(), deadline)?;
    conn.write_all(body, deadline)?;
    read_answer(&mut conn, deadline)
}

/// Reads the status line, the headers and (bounded) the body.
fn read_answer(conn: &mut Conn, deadline: Deadline) -> Result<u16, Failure> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(Failure::Malformed(format!(
                "headers longer than {MAX_HEAD} bytes"
            )));
        }
        let n = conn.read(&mut chunk, deadline)?;
        if n == 0 {
            return Err(Failure::Io(
                "the peer closed the connection before answering".into(),
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = status_line
        .strip_prefix("HTTP/1.")
        .and_then(|r| r.get(2..5))
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|s| (100..600).contains(s))
        .ok_or_else(|| Failure::Malformed(status_line.chars().take(80).collect()))?;
    let header = |name: &str| {
        head.split("\r\n").skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    };
    let length = header("content-length").and_then(|v| v.parse::<usize>().ok());
    let retry_after = header("retry-after").and_then(|v| v.parse::<u64>().ok());
    // The body, for a failure's message: what arrived, up to the bound.
    let mut body = buf[head_end + 4..].to_vec();
    let want = length.unwrap_or(MAX_BODY).min(MAX_BODY);
    while body.len() < want && !(200..300).contains(&status) {
        match conn.read(&mut chunk, deadline) {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    if (200..300).contains(&status) {
        return Ok(status);
    }
    let text: String = String::from_utf8_lossy(&body[..body.len().min(200)])
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    Err(Failure::Status(status, retry_after, text.trim().to_owned()))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
