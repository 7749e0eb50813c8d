//! Hostile collectors: a small HTTP server on a free 127.0.0.1 port, on a
//! thread of the test, that answers every request the same bad way and
//! records what it was sent.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Copy, Debug)]
pub enum Behaviour {
    /// Answers this status (with `Retry-After: 1` for 429 and 503).
    Status(u16),
    /// Reads the request and never answers (holding the connection).
    Silent,
    /// Reads the request's head, then closes the connection.
    Vanish,
}

/// A request as it arrived: its head and body.
#[derive(Clone, Debug)]
pub struct Received {
    pub head: String,
    pub body: Vec<u8>,
}

pub struct Peer {
    pub port: u16,
    pub received: Arc<Mutex<Vec<Received>>>,
}

impl Peer {
    pub fn start(behaviour: Behaviour) -> Peer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let log = log.clone();
                std::thread::spawn(move || serve(conn, behaviour, &log));
            }
        });
        Peer { port, received }
    }

    pub fn count(&self) -> usize {
        self.received.lock().unwrap().len()
    }
}

fn serve(mut conn: TcpStream, behaviour: Behaviour, log: &Mutex<Vec<Received>>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if buf.len() > 1 << 20 {
            return;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    if let Behaviour::Vanish = behaviour {
        log.lock().unwrap().push(Received {
            head,
            body: Vec::new(),
        });
        return; // dropped: the connection closes mid-request
    }
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    log.lock().unwrap().push(Received { head, body });
    match behaviour {
        Behaviour::Status(s) => {
            let retry = if s == 429 || s == 503 {
                "Retry-After: 1\r\n"
            } else {
                ""
            };
            let text = "not today\n";
            let _ = write!(
                conn,
                "HTTP/1.1 {s} Nope\r\n{retry}Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
        Behaviour::Silent => std::thread::sleep(Duration::from_secs(120)),
        Behaviour::Vanish => {}
    }
}
