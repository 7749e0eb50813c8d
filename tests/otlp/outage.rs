//! An outage of the real collector mid-run (issue 44): the periods that
//! could not be sent are folded into the next push, so what reaches the
//! collector over the run equals the snapshot, path by path, and the
//! pushes' time ranges tile the run without a gap or an overlap.

use super::collector::{free_port, read_requests, Collector};
use super::common::{agent, read_snapshot, temp_dir};
use super::model::{
    figures, pushes_and_dropped_samples, request, snapshot_figures, summary, Request,
};
use super::{assert_unharmed, diff, run};
use std::time::{Duration, Instant};

/// How long the program runs, the collector stays up after the first push
/// reached it, and the outage, ms. `PROFRJ_OTLP_OUTAGE=run,up,down`
/// (seconds) replaces them: the scenario by hand is `60,20,15`.
fn timeline() -> (u64, u64, u64) {
    let Ok(v) = std::env::var("PROFRJ_OTLP_OUTAGE") else {
        return (14_000, 1_500, 4_500);
    };
    let s: Vec<u64> = v
        .split(',')
        .map(|x| {
            x.trim()
                .parse::<u64>()
                .expect("PROFRJ_OTLP_OUTAGE=run,up,down (s)")
                * 1000
        })
        .collect();
    assert_eq!(s.len(), 3, "PROFRJ_OTLP_OUTAGE=run,up,down (s)");
    (s[0], s[1], s[2])
}

/// `sampling` and `alloc` pushed every 1 s; the collector is stopped
/// (SIGTERM: it finishes what it took) for several periods and a new one
/// started on the same port. Every period is sent (none dropped), fewer
/// pushes than periods carry them (the outage's periods went in one push
/// after it, with retries meanwhile), the ranges of the pushes follow one
/// another to the nanosecond, and the sum of both collectors' samples is
/// the snapshot's, path by path: the outage cost no sample.
#[test]
fn an_outage_folds_its_periods_into_the_next_push() {
    let (run_ms, up_ms, down_ms) = timeline();
    // Built first (the first test to ask builds it), so that the timeline
    // below is the program's.
    agent();
    let dir = temp_dir("otlp-outage");
    let port = free_port();
    let mut before = Collector::start(&dir, "before", port, None);
    let snap = dir.join("s.xml");
    // `ended=keep`: the snapshot keeps each ended contender thread its own
    // row, as the push names it (grouped rows are the snapshot's own).
    let options = format!(
        "sampling,alloc=64k,ended=keep,otlp=http://127.0.0.1:{port},period=1s,file={}",
        snap.display()
    );
    let (d, ms) = (dir.clone(), run_ms.to_string());
    let jvm = std::thread::spawn(move || run(&d, &options, &[], &["run", &ms]));
    // A slow start of the JVM (a loaded machine) must not put the outage
    // before the first push: it begins after one arrived.
    let until = Instant::now() + Duration::from_secs(60);
    while read_requests(&before.file).is_empty() {
        if jvm.is_finished() {
            let r = jvm.join().unwrap();
            panic!(
                "no push before the program ended:\n{}\n{}",
                r.stderr,
                before.log()
            );
        }
        assert!(Instant::now() < until, "no push in 60 s:\n{}", before.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(up_ms));
    before.stop();
    std::thread::sleep(Duration::from_millis(down_ms));
    let after = Collector::start(&dir, "after", port, None);
    let r = jvm.join().unwrap();
    assert_unharmed(&r);

    let (sent, periods, dropped, retries) = summary(&r.stderr);
    let (pushes, dropped_samples) = pushes_and_dropped_samples(&r.stderr);
    assert_eq!((dropped, dropped_samples), (0, 0), "{}", r.stderr);
    assert_eq!(sent, periods, "{}", r.stderr);
    assert!(retries >= 1, "the outage was retried: {}", r.stderr);
    // At least two periods of the outage rode with another in one push.
    assert!(pushes + 2 <= sent, "periods folded: {}", r.stderr);

    let first = read_requests(&before.file).len() as u64;
    assert!(first >= 1, "pushes before the outage: {}", r.stderr);
    let second = after.requests((pushes - first) as usize);
    assert_eq!(first + second.len() as u64, pushes, "{}", after.log());
    let got: Vec<Request> = read_requests(&before.file)
        .iter()
        .chain(&second)
        .map(request)
        .collect();

    // One time range per push, each starting where the last ended.
    let mut ranges: Vec<(u64, u64)> = got
        .iter()
        .map(|q| {
            let mut r: Vec<(u64, u64)> = q.profiles.iter().map(|p| (p.start, p.duration)).collect();
            r.dedup();
            assert_eq!(r.len(), 1, "one range for a push's profiles: {r:?}");
            r[0]
        })
        .collect();
    ranges.sort_unstable();
    for w in ranges.windows(2) {
        assert_eq!(w[0].0 + w[0].1, w[1].0, "ranges tile the run: {ranges:?}");
    }

    // In sum: the snapshot, path by path, sampling and alloc.
    let want = snapshot_figures(&read_snapshot(&snap));
    let pushed = figures(&got);
    let samples = |f: &super::model::Figures| -> i64 {
        f.iter()
            .filter(|(k, _)| k.0 == "sampler")
            .map(|(_, v)| v[0])
            .sum()
    };
    for l in r.stderr.lines().filter(|l| l.contains("otlp")) {
        eprintln!("{l}");
    }
    eprintln!(
        "outage of {down_ms} ms in {run_ms} ms: {} of the snapshot's {} samples reached the \
         collectors, {sent} periods in {pushes} pushes ({first} before the outage), {retries} retries",
        samples(&pushed),
        samples(&want),
    );
    assert!(samples(&want) > 0);
    assert_eq!(diff(&pushed, &want), "", "pushed vs snapshot");
}
