//! The sending thread: takes what waits ([`Backlog::pop`]: every period
//! not sent yet, folded into one profile), encodes and gzips it, and posts
//! it. A retryable failure (no connection, a timeout, 429, 502-504) puts
//! the profile back, where the periods that come meanwhile fold into it,
//! and the next try, after a backoff, sends them all: an outage delays
//! data, it does not drop it. A final answer (400, 401, 404…) drops what
//! was tried, counted; so does the exit's deadline.

use super::backlog::{Backlog, Stats};
use super::config::Config;
use super::http;
use super::unsent::Unsent;
use crate::log;
use std::io::Write;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between tries (the period, if shorter: then a failing
/// collector is tried about once a period, as each period used to be).
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// What became of one try.
enum Tried {
    Sent,
    /// A final answer.
    Refused,
    /// A retryable failure, with the collector's `Retry-After`.
    Retry(Option<Duration>),
    /// Cut by the exit (or failed while closing: no retry then).
    Exit,
}

/// The sending thread's body.
pub fn run(config: &Config, backlog: &Backlog, stats: &Stats) {
    let url = config.endpoint.url();
    let longest = config.period.clamp(FIRST_BACKOFF, MAX_BACKOFF);
    let mut failing = false;
    let mut backoff = FIRST_BACKOFF;
    while let Some(unsent) = backlog.pop() {
        let cpu = super::thread_cpu_ns();
        let body = encode(config, &unsent, stats);
        stats
            .build_ns
            .fetch_add(super::thread_cpu_ns().saturating_sub(cpu), Relaxed);
        let tried = match &body {
            Some(body) => try_once(config, backlog, stats, body, &url, &mut failing),
            None => Tried::Refused,
        };
        let counted = (unsent.periods, unsent.sampled);
        match tried {
            Tried::Retry(after) => {
                stats.retries.fetch_add(1, Relaxed);
                let wait = backoff.max(after.unwrap_or_default().min(MAX_RETRY_AFTER));
                backoff = (backoff * 2).min(longest);
                backlog.put_back(unsent, stats);
                // Closing cuts the wait short; the next try, of everything
                // then, is the last.
                backlog.sleep(wait);
            }
            Tried::Sent => {
                backoff = FIRST_BACKOFF;
                if backlog.landed() {
                    stats.sent.fetch_add(unsent.periods, Relaxed);
                    stats.pushes.fetch_add(1, Relaxed);
                    let n = body.map_or(0, |b| b.len());
                    stats.sent_bytes.fetch_add(n as u64, Relaxed);
                }
            }
            Tried::Refused => {
                if backlog.landed() {
                    stats.drop(&stats.dropped_refused, counted);
                }
            }
            Tried::Exit => {
                if backlog.landed() {
                    stats.drop(&stats.dropped_exit, counted);
                }
            }
        }
    }
    backlog.set_done(stats);
}

/// `unsent`'s request, gzipped; `None` (said once) if gzip fails.
fn encode(config: &Config, unsent: &Unsent, stats: &Stats) -> Option<Vec<u8>> {
    let raw = unsent.request(&config.resource);
    stats.tries.fetch_add(1, Relaxed);
    stats.raw_bytes.fetch_add(raw.len() as u64, Relaxed);
    let mut gz = flate2::write::GzEncoder::new(
        Vec::with_capacity(raw.len() / 4),
        flate2::Compression::default(),
    );
    match gz.write_all(&raw).and_then(|()| gz.finish()) {
        Ok(b) => Some(b),
        Err(e) => {
            log::error_once("otlp gzip", &format!("otlp: gzip: {e}"));
            None
        }
    }
}

/// One try of `body`, within the request's timeout and the exit's deadline.
fn try_once(
    config: &Config,
    backlog: &Backlog,
    stats: &Stats,
    body: &[u8],
    url: &str,
    failing: &mut bool,
) -> Tried {
    let started = Instant::now();
    if backlog.closing().is_some_and(|end| end <= started) {
        return Tried::Exit;
    }
    let deadline = || backlog.deadline(started, config.timeout);
    match http::post(config, body, &deadline) {
        Ok(_) => {
            if std::mem::take(failing) {
                log::info(&format!("otlp: {url} accepts profiles again"));
            }
            Tried::Sent
        }
        Err(f) => {
            *failing = true;
            *stats.last_failure.lock() = Some(f.to_string());
            log::warn_once(
                &format!("otlp {}", f.kind()),
                &format!(
                    "otlp: {url}: {f}; {} (said once per kind of failure; `status` counts the periods dropped)",
                    if f.retryable() {
                        "retrying, the periods meanwhile folded into the next push"
                    } else {
                        "that push's periods are dropped"
                    }
                ),
            );
            if !f.retryable() {
                Tried::Refused
            } else if backlog.closing().is_some() {
                Tried::Exit
            } else {
                Tried::Retry(f.retry_after())
            }
        }
    }
}
