//! The `otlp` push and `convert --to otlp` against a real OpenTelemetry
//! Collector (v0.165.0, built from Go modules by tests/otelcol/build.sh):
//! what reaches its file exporter equals the snapshot, period by period and
//! in sum; a collector that is absent, killed and restarted, stopped for
//! several periods (`outage`: they fold into the next push), slow, refusing
//! (400), overloaded (503) or vanishing mid-request costs the program
//! nothing; https with a CA of the test's own.

#[path = "otlp/collector.rs"]
mod collector;
mod common;
#[path = "otlp/model.rs"]
mod model;
#[path = "otlp/outage.rs"]
mod outage;
#[path = "otlp/peer.rs"]
mod peer;

use collector::{free_port, Collector};
use common::{agent, harness_classes, java, read_snapshot, temp_dir};
use model::{figures, pushes_and_dropped_samples, request, snapshot_figures, summary, Request};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const MAIN: &str = "profrj.harness.OtlpPhases";

struct Run {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
    pid: u32,
    /// From the program's last line (`done …`) to the JVM's exit.
    exit_time: Duration,
}

/// Runs OtlpPhases with the agent under `options` and `env`, in `dir`.
fn run(dir: &Path, options: &str, env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut cmd = Command::new(java());
    cmd.current_dir(dir)
        .arg(format!("-agentpath:{}={options}", agent().display()))
        .args(["-Xmx256m", "-cp", harness_classes(), MAIN])
        .args(args);
    for var in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("cannot start java");
    let pid = child.id();
    // Stdout line by line, noting when the last line came.
    let out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let mut at = Instant::now();
        for line in std::io::BufRead::lines(std::io::BufReader::new(out)) {
            text.push_str(&line.unwrap());
            text.push('\n');
            at = Instant::now();
        }
        (text, at)
    });
    let mut err = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut err, &mut text).unwrap();
        text
    });
    let status = child.wait().unwrap();
    let ended = Instant::now();
    let (stdout, last_line) = reader.join().unwrap();
    Run {
        status,
        stdout,
        stderr: errors.join().unwrap(),
        pid,
        exit_time: ended.saturating_duration_since(last_line),
    }
}

/// The program ran as without the agent: exit 0, its own line on stdout,
/// nothing but `profrj:` lines on stderr.
fn assert_unharmed(r: &Run) {
    assert!(r.status.success(), "{:?}\n{}", r.status, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.stdout);
    assert!(lines[0].starts_with("done a="), "{}", r.stdout);
    for l in r.stderr.lines() {
        assert!(
            l.starts_with("profrj: "),
            "a stderr line not the agent's: {l}"
        );
    }
}

/// The calls of `method` in a request's `calls` profile.
fn calls(r: &Request, method: &str) -> i64 {
    r.profiles
        .iter()
        .filter(|p| p.ty == "calls")
        .flat_map(|p| &p.samples)
        .filter(|s| s.stack.last().map(String::as_str) == Some(method))
        .map(|s| s.value)
        .sum()
}

/// Every mode pushed each period: phase A and phase B each in periods of
/// their own with their exact call counts; in sum, every path's figures
/// equal the final snapshot's, for sampling, profile, alloc and lock; the
/// resource names the service and the process. Then `convert --to otlp` of
/// that snapshot, POSTed with curl, reads back the same.
#[test]
fn pushes_equal_the_snapshot_per_period_and_in_sum_and_so_does_convert() {
    let dir = temp_dir("otlp-truth");
    let port = free_port();
    let c = Collector::start(&dir, "collector", port, None);
    let snap = dir.join("snapshot.xml");
    let options = format!(
        "sampling,profile,alloc=8k,lock,otlp=http://127.0.0.1:{port},period=1s,service=phases,file={}",
        snap.display()
    );
    let r = run(
        &dir,
        &options,
        &[(
            "OTEL_RESOURCE_ATTRIBUTES",
            "deployment.environment=ci,service.name=not-this",
        )],
        &[],
    );
    assert_unharmed(&r);
    assert_eq!(r.stdout.trim(), "done a=1000 b=2000");
    let (sent, requests, dropped, _) = summary(&r.stderr);
    assert!(
        sent >= 3 && sent == requests && dropped == 0,
        "{}",
        r.stderr
    );
    // One push a period while the collector keeps up (a push behind by a
    // whole period would fold two).
    let pushes = pushes_and_dropped_samples(&r.stderr).0;
    let got: Vec<Request> = c.requests(pushes as usize).iter().map(request).collect();
    assert_eq!(got.len() as u64, pushes, "{}", c.log());

    // The resource and the scope.
    for q in &got {
        let a = &q.resource;
        assert_eq!(a["service.name"], "phases");
        assert_eq!(a["process.pid"], r.pid.to_string());
        assert_eq!(a["deployment.environment"], "ci");
        assert_eq!(a["telemetry.sdk.name"], "profrj");
        for key in [
            "process.runtime.name",
            "process.runtime.version",
            "host.name",
        ] {
            assert!(!a[key].is_empty(), "{key}: {a:?}");
        }
        assert_eq!(q.scope.0, "profrj");
    }
    // Sample types, and what a sample stands for.
    let types: std::collections::BTreeSet<(String, String)> = got
        .iter()
        .flat_map(|q| &q.profiles)
        .map(|p| (p.ty.clone(), p.unit.clone()))
        .collect();
    for t in [
        ("samples", "count"),
        ("calls", "count"),
        ("wall", "nanoseconds"),
        ("cpu", "nanoseconds"),
        ("alloc_objects", "count"),
        ("alloc_space", "bytes"),
        ("contentions", "count"),
        ("delay", "nanoseconds"),
    ] {
        assert!(
            types.contains(&(t.0.into(), t.1.into())),
            "{t:?} in {types:?}"
        );
    }
    for p in got.iter().flat_map(|q| &q.profiles) {
        if p.ty == "samples" || p.ty == "runnable_samples" {
            let period = (p.period_type.clone(), p.period);
            assert_eq!(
                period,
                (Some(("wall".into(), "nanoseconds".into())), 10_000_000)
            );
        }
        assert!(
            p.duration > 0 && p.start > 1_600_000_000_000_000_000,
            "{p:?}"
        );
    }

    // Per period: the phases apart, each with its exact calls.
    let a = "profrj.harness.OtlpPhases.phaseA()";
    let b = "profrj.harness.OtlpPhases.phaseB()";
    let per: Vec<(i64, i64)> = got.iter().map(|q| (calls(q, a), calls(q, b))).collect();
    // A phase may straddle a period's end, but 2.5 s (two periods and a
    // half) part them: no period holds both, A's come before B's.
    assert!(
        per.iter().all(|&(x, y)| x == 0 || y == 0),
        "calls of A and B per period: {per:?}"
    );
    assert_eq!(per.iter().map(|p| p.0).sum::<i64>(), 1000, "{per:?}");
    assert_eq!(per.iter().map(|p| p.1).sum::<i64>(), 2000, "{per:?}");
    let last_a = per.iter().rposition(|p| p.0 > 0).unwrap();
    let first_b = per.iter().position(|p| p.1 > 0).unwrap();
    assert!(last_a < first_b, "{per:?}");
    let gate = "profrj.harness.OtlpPhases$Gate";
    let gate_waits: Vec<i64> = got
        .iter()
        .map(|q| {
            q.profiles
                .iter()
                .filter(|p| p.ty == "contentions")
                .flat_map(|p| &p.samples)
                .filter(|s| s.stack.last().map(String::as_str) == Some(gate))
                .map(|s| s.value)
                .sum()
        })
        .collect();
    assert!(gate_waits.iter().sum::<i64>() > 0, "{gate_waits:?}");
    assert!(
        gate_waits[first_b..].iter().all(|&w| w == 0),
        "the Gate's waits are phase A's: {gate_waits:?}, B from period {first_b}"
    );

    // In sum: the snapshot's figures, path by path.
    let text = read_snapshot(&snap);
    let want = snapshot_figures(&text);
    let pushed = figures(&got);
    assert_eq!(diff(&pushed, &want), "", "pushed vs snapshot");
    for section in ["sampler", "profile", "alloc", "lock"] {
        assert!(want.keys().any(|k| k.0 == section), "{section} has figures");
    }

    // convert --to otlp, POSTed by curl, reads back the same (times to the µs).
    let pb = dir.join("snapshot.pb");
    let out = Command::new(env!("CARGO_BIN_EXE_profrj"))
        .args(["convert", snap.to_str().unwrap(), "--to", "otlp", "-o"])
        .arg(&pb)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    collector::post(&pb, port);
    let all = c.requests(got.len() + 1);
    assert_eq!(all.len(), got.len() + 1, "{}", c.log());
    let converted = request(all.last().unwrap());
    assert!(converted.resource.contains_key("profrj.snapshot"));
    assert_eq!(
        diff(&figures(&[converted]), &want),
        "",
        "converted vs snapshot"
    );
}

/// The keys and figures where two sets differ, one per line.
fn diff(got: &model::Figures, want: &model::Figures) -> String {
    let mut out = String::new();
    for (k, v) in want {
        if got.get(k) != Some(v) {
            out.push_str(&format!("{k:?}: want {v:?}, got {:?}\n", got.get(k)));
        }
    }
    for (k, v) in got {
        if !want.contains_key(k) {
            out.push_str(&format!("{k:?}: want nothing, got {v:?}\n"));
        }
    }
    out
}

/// The `profrj: warning: otlp:` lines of a run (one per kind of failure).
fn otlp_warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("profrj: warning: otlp:"))
        .collect()
}

/// A hostile peer for `ms` of the program's `run` mode: the program is
/// unharmed, every request made is accounted for (sent, or dropped and
/// counted: nothing piles up), and each kind of failure is said once.
fn against(behaviour: peer::Behaviour, ms: &str, env: &[(&str, &str)]) -> (Run, peer::Peer) {
    let p = peer::Peer::start(behaviour);
    let dir = temp_dir(&format!("otlp-peer-{}", p.port));
    let options = format!(
        "sampling,alloc=64k,otlp=http://127.0.0.1:{}/base/,period=1s,file={}",
        p.port,
        dir.join("s.xml").display()
    );
    let r = run(&dir, &options, env, &["run", ms]);
    assert_unharmed(&r);
    let (sent, requests, dropped, _) = summary(&r.stderr);
    assert_eq!(sent, 0, "{}", r.stderr);
    assert!(requests >= 2, "{}", r.stderr);
    assert_eq!(
        dropped, requests,
        "every request dropped and counted: {}",
        r.stderr
    );
    assert_eq!(otlp_warnings(&r.stderr).len(), 1, "{}", r.stderr);
    (r, p)
}

/// 400: each period's request is refused once, not retried, and dropped;
/// what was sent is the OTLP/HTTP request the issue names (path, headers,
/// gzip, the development version; OTEL_EXPORTER_OTLP_HEADERS added).
#[test]
fn a_refusing_collector_drops_periods_and_sees_well_formed_requests() {
    let env = [(
        "OTEL_EXPORTER_OTLP_HEADERS",
        "x-profrj-token=s3cret%21,x-tenant=t1",
    )];
    let (r, p) = against(peer::Behaviour::Status(400), "2500", &env);
    let (_, requests, _, retries) = summary(&r.stderr);
    assert_eq!(retries, 0, "a 400 is not retried: {}", r.stderr);
    assert!(r.stderr.contains("refused"), "{}", r.stderr);
    let got = p.received.lock().unwrap().clone();
    assert_eq!(got.len() as u64, requests);
    for q in &got {
        let head = q.head.to_ascii_lowercase();
        assert!(
            head.starts_with("post /base/v1development/profiles http/1.1\r\n"),
            "{}",
            q.head
        );
        for h in [
            "content-type: application/x-protobuf",
            "content-encoding: gzip",
            "otlp-profiles-development-version: 1",
            "x-profrj-token: s3cret!",
            "x-tenant: t1",
        ] {
            assert!(head.contains(h), "{h} in {}", q.head);
        }
        let mut raw = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&q.body[..]), &mut raw)
            .expect("a gzip body");
        assert_eq!(raw[0], 0x0a, "field 1 (resource_profiles) first");
    }
}

/// 503 with Retry-After: retried with backoff, the periods meanwhile
/// folded into the next try; never sent, so dropped at the exit.
#[test]
fn an_overloaded_collector_is_retried_then_dropped() {
    let (r, p) = against(peer::Behaviour::Status(503), "4000", &[]);
    let (_, requests, _, retries) = summary(&r.stderr);
    assert!(retries >= 1, "{}", r.stderr);
    assert!(p.count() >= 2, "retried: {} tries", p.count());
    let (pushes, dropped_samples) = pushes_and_dropped_samples(&r.stderr);
    assert_eq!(pushes, 0, "{}", r.stderr);
    assert!(
        dropped_samples > 0,
        "the samples dropped are said: {}",
        r.stderr
    );
    assert!(requests >= 2, "{}", r.stderr);
}

/// A collector that reads and never answers: the JVM still exits on
/// time (the last push gets 2 s, not the 30 s timeout); while the first
/// request hangs, every later period folds behind it (one connection in
/// all, nothing piled up), and at the exit all of them are dropped and
/// counted.
#[test]
fn a_silent_collector_costs_the_exit_two_seconds_at_most() {
    let env = [("OTEL_EXPORTER_OTLP_TIMEOUT", "30000")];
    let (r, p) = against(peer::Behaviour::Silent, "7000", &env);
    let text = &r.stderr;
    assert_eq!(p.count(), 1, "one request, the rest folded: {text}");
    assert!(text.contains("at exit "), "{text}");
    // The exit: 2 s for the last push and the JVM's own shutdown, on a
    // loaded machine; far from the 30 s a wait for the answer would take.
    assert!(r.exit_time < Duration::from_secs(15), "{:?}", r.exit_time);
}

/// A collector that closes the connection mid-request: retried, dropped.
#[test]
fn a_vanishing_collector_is_retried_then_dropped() {
    let (r, _) = against(peer::Behaviour::Vanish, "3000", &[]);
    assert!(summary(&r.stderr).3 >= 1, "{}", r.stderr);
}

/// The real collector absent when the program starts, then started,
/// killed (SIGKILL) and restarted: the program is unharmed; pushes reach
/// the first and, after the restart, the second.
#[test]
fn pushes_resume_after_the_collector_comes_back() {
    let dir = temp_dir("otlp-restart");
    let port = free_port();
    let options = format!(
        "sampling,alloc=64k,otlp=http://127.0.0.1:{port},period=1s,file={}",
        dir.join("s.xml").display()
    );
    let d = dir.clone();
    let jvm = std::thread::spawn(move || run(&d, &options, &[], &["run", "11000"]));
    std::thread::sleep(Duration::from_millis(2500));
    let mut first = Collector::start(&dir, "first", port, None);
    std::thread::sleep(Duration::from_millis(2500));
    let before_kill = collector::read_requests(&first.file).len();
    first.kill();
    std::thread::sleep(Duration::from_millis(1500));
    let second = Collector::start(&dir, "second", port, None);
    let r = jvm.join().unwrap();
    assert_unharmed(&r);
    let (sent, requests, dropped, retries) = summary(&r.stderr);
    assert!(
        retries >= 1,
        "the absent collector was retried: {}",
        r.stderr
    );
    assert_eq!(sent + dropped, requests, "{}", r.stderr);
    assert!(
        before_kill >= 1,
        "the first collector got pushes: {}",
        r.stderr
    );
    let after = second.requests(1).len();
    assert!(
        after >= 1,
        "pushes resumed after the restart: {}\n{}",
        r.stderr,
        second.log()
    );
}

/// https: the collector's certificate is signed by a CA the test makes;
/// with `cafile=` it is trusted and pushes arrive; with the system's roots
/// only, TLS fails (said once) and the program is unharmed.
#[test]
fn https_with_a_ca_of_ones_own() {
    let dir = temp_dir("otlp-https");
    let sh = |script: &str| {
        let out = Command::new("bash")
            .args(["-ec", script])
            .current_dir(&dir)
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    sh(
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key \
        -out ca.pem -subj /CN=profrj-test-ca -days 2 \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key \
        -out srv.csr -subj /CN=localhost 2>/dev/null
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > ext
        openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem \
        -days 2 -extfile ext 2>/dev/null",
    );
    let port = free_port();
    let c = Collector::start(
        &dir,
        "tls",
        port,
        Some((&dir.join("srv.pem"), &dir.join("srv.key"))),
    );
    let options = format!(
        "sampling,otlp=https://localhost:{port},cafile={},period=1s,file={}",
        dir.join("ca.pem").display(),
        dir.join("s.xml").display()
    );
    let r = run(&dir, &options, &[], &["run", "1500"]);
    assert_unharmed(&r);
    let (sent, requests, ..) = summary(&r.stderr);
    assert!(sent >= 1 && sent == requests, "{}", r.stderr);
    let pushes = pushes_and_dropped_samples(&r.stderr).0;
    assert_eq!(
        c.requests(pushes as usize).len() as u64,
        pushes,
        "{}",
        c.log()
    );
    // Without the CA: the system's roots do not know it.
    let options = format!(
        "sampling,otlp=https://localhost:{port},period=1s,file={}",
        dir.join("s2.xml").display()
    );
    let r = run(&dir, &options, &[], &["run", "1500"]);
    assert_unharmed(&r);
    let w = otlp_warnings(&r.stderr);
    assert_eq!(w.len(), 1, "{}", r.stderr);
    assert!(w[0].contains("TLS"), "{}", w[0]);
    assert_eq!(summary(&r.stderr).0, 0);
}

/// A bad `otlp=` stops the JVM at start with the option named; a bad
/// variable refuses the session (named) and the program runs unprofiled.
#[test]
fn bad_settings_are_refused_by_name() {
    let dir = temp_dir("otlp-bad");
    let r = run(&dir, "otlp=ftp://collector", &[], &["run", "100"]);
    assert!(!r.status.success());
    assert!(
        r.stderr.contains("bad value for otlp: 'ftp://collector'"),
        "{}",
        r.stderr
    );
    let env = [("OTEL_EXPORTER_OTLP_HEADERS", "x-token")];
    let r = run(&dir, "sampling,otlp", &env, &["run", "100"]);
    assert_unharmed(&r);
    assert!(
        r.stderr
            .contains("OTEL_EXPORTER_OTLP_HEADERS: 'x-token' is not header=value")
            && r.stderr.contains("profiling is off"),
        "{}",
        r.stderr
    );
}

/// Attached to a running JVM: `status` counts the pushes, `stop` pushes at
/// once, and the service is named after the main class.
#[test]
fn an_attached_push_shows_in_status_and_names_the_main_class() {
    let dir = temp_dir("otlp-attach");
    let port = free_port();
    let c = Collector::start(&dir, "collector", port, None);
    let mut target = Command::new(java())
        .current_dir(&dir)
        .args(["-cp", harness_classes(), MAIN, "run", "8000", "ready"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(target.stdout.take().unwrap()));
    assert_eq!(lines.next().unwrap().unwrap(), "ready");
    let pid = target.id().to_string();
    let profrj = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_profrj"))
            .args(args)
            .env("PROFRJ_AGENT", agent())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    let opts = format!(
        "sampling,otlp=http://127.0.0.1:{port},period=1s,file={}",
        dir.join("s.xml").display()
    );
    let started = profrj(&["attach", &pid, &opts]);
    assert!(started.0 && started.1.contains("otlp to"), "{}", started.1);
    std::thread::sleep(Duration::from_millis(2500));
    let (ok, status) = profrj(&["attach", &pid, "status"]);
    assert!(ok && status.contains("periods sent of"), "{status}");
    let (ok, stopped) = profrj(&["attach", &pid, "stop"]);
    assert!(ok, "{stopped}");
    let got: Vec<Request> = c.requests(2).iter().map(request).collect();
    assert!(got.len() >= 2, "{status}\n{}", c.log());
    assert_eq!(got[0].resource["service.name"], MAIN);
    assert!(target.wait().unwrap().success());
    assert!(lines.next().unwrap().unwrap().starts_with("done a="));
}
