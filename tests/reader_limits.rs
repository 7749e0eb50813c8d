//! Inputs that used to hang, exhaust or corrupt the readers (issue 18,
//! findings 5 and 10). Quadratic time is caught by a bound on CPU time that
//! the kernel enforces (RLIMIT_CPU: a loaded machine stretches wall time,
//! not the CPU time a command needs): each command here needs well under a
//! second of it, the old code 30 s to 4 minutes on the first input. Their
//! times are measured in scripts/reader-bench, not asserted here.

mod common;

use common::*;
use std::process::Command;
use std::time::Duration;

/// CPU time any one command here may use: some 15 times what the slowest
/// needs (1.3 s, `scripts/reader-bench`), a fraction of what a quadratic
/// pass takes.
const CPU_LIMIT: Duration = Duration::from_secs(20);

/// Runs `profrj ARGS` under [`CPU_LIMIT`]: ok, stdout and stderr together.
fn profrj(args: &[&str]) -> (bool, String) {
    let run = profrj_measured(args, Some(CPU_LIMIT));
    run.assert_finished(&format!("profrj {}", args.join(" ")));
    eprintln!(
        "profrj {}: {:?} of CPU",
        args.join(" ").chars().take(60).collect::<String>(),
        run.cpu
    );
    let text = format!("{}{}", run.out(), String::from_utf8_lossy(&run.stderr));
    (run.code == 0, text)
}

/// Finding 5: an element with 200,000 attributes is read in linear time
/// (one pass per element; quick-xml's quadratic duplicate check is off), and
/// a known attribute given twice is refused.
#[test]
fn two_hundred_thousand_attributes_read_in_linear_time() {
    let dir = temp_dir("attrs");
    let attrs: String = (0..200_000).map(|i| format!(" a{i}=\"1\"")).collect();
    let xml = format!(
        "<doc><sampler><thread name=\"t\" cumulated=\"1\" cumulatedElapsed=\"1\"{attrs}>\
         <profile name=\"m()\" hits=\"1\" elapsed=\"1\" cumulated=\"1\" cumulatedElapsed=\"1\"{attrs}/>\
         </thread></sampler></doc>"
    );
    let path = dir.join("attrs.xml");
    std::fs::write(&path, xml).unwrap();
    let (ok, out) = profrj(&["report", &path.display().to_string()]);
    assert!(ok, "{out}");
    assert!(out.contains("m()"), "{out}");

    let dup = dir.join("dup.xml");
    std::fs::write(
        &dup,
        "<doc><sampler><thread name=\"t\"><profile name=\"m()\" hits=\"1\" hits=\"2\"/></thread></sampler></doc>",
    )
    .unwrap();
    let (ok, out) = profrj(&["report", &dup.display().to_string()]);
    assert!(!ok);
    assert!(out.contains("attribute hits twice"), "{out}");
}

/// Finding 10: counts near u64::MAX saturate in sums instead of wrapping to
/// a small, wrong number.
#[test]
fn counts_near_the_maximum_saturate() {
    let dir = temp_dir("wrap");
    let big = u64::MAX - 5;
    let node = |hits: u64| {
        format!(
            "<profile name=\"m()\" hits=\"{hits}\" elapsed=\"{hits}\" cumulated=\"{hits}\" cumulatedElapsed=\"{hits}\"/>"
        )
    };
    let xml = format!(
        "<doc><sampler>\
         <thread name=\"a\" cumulated=\"{big}\" cumulatedElapsed=\"{big}\">{}</thread>\
         <thread name=\"b\" cumulated=\"100\" cumulatedElapsed=\"100\">{}</thread>\
         </sampler></doc>",
        node(big),
        node(100)
    );
    let path = dir.join("wrap.xml");
    std::fs::write(&path, xml).unwrap();
    let (ok, out) = profrj(&["report", &path.display().to_string()]);
    assert!(ok, "{out}");
    assert!(
        out.contains(&u64::MAX.to_string()),
        "saturated total expected: {out}"
    );
    assert!(!out.contains("total = 94 "), "wrapped: {out}");
    // Collapsed stacks are streamed per thread: the stack comes twice, and
    // the sum a reader makes saturates; no line wrapped.
    let (ok, out) = profrj(&["convert", "--to", "collapsed", &path.display().to_string()]);
    assert!(ok, "{out}");
    let counts: Vec<u64> = out
        .lines()
        .map(|l| l.strip_prefix("m() ").unwrap().parse().unwrap())
        .collect();
    assert_eq!(counts, [big, 100], "{out}");
    assert_eq!(
        counts.iter().fold(0u64, |s, &c| s.saturating_add(c)),
        u64::MAX
    );
    let (ok, out) = profrj(&["convert", "--to", "hprof", &path.display().to_string()]);
    assert!(ok, "{out}");
    assert!(out.contains(&format!("(total = {})", u64::MAX)), "{out}");
    // -Xprof's flat profile: the received ticks saturate; frame types near
    // the maximum saturate too, and counting more than `elapsed` is refused.
    let (ok, out) = profrj(&["report", "--style", "xprof", &path.display().to_string()]);
    assert!(ok, "{out}");
    assert!(out.contains(&format!("% {} ", u64::MAX)), "{out}");
    let typed = |own: &str| {
        let xml = std::fs::read_to_string(&path).unwrap().replacen(
            "<profile name=\"m()\"",
            &format!("<profile name=\"m()\" frameTypes=\"c2:{big} interpreted:{big}\" {own}"),
            1,
        );
        let p = dir.join("wrap-typed.xml");
        std::fs::write(&p, xml).unwrap();
        profrj(&["report", "--style", "xprof", &p.display().to_string()])
    };
    let (ok, out) = typed(&format!("selfTypes=\"c2:{big}\""));
    assert!(ok, "{out}");
    assert!(out.contains("Total compiled"), "{out}");
    let (ok, out) = typed(&format!("selfTypes=\"c2:{big} c1:{big}\""));
    assert!(!ok && out.contains("more than its elapsed"), "{out}");
}

/// Finding 6: a device is refused at once; an endless stream through a pipe
/// is refused once one event passes 64 MiB, instead of growing until memory
/// runs out.
#[test]
fn endless_inputs_are_refused() {
    let (ok, out) = profrj(&["report", "/dev/zero"]);
    assert!(!ok);
    assert!(out.contains("not a snapshot file"), "{out}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_profrj"))
        .args(["report", "/dev/stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        let zeros = vec![b'a'; 1 << 20];
        let _ = stdin.write_all(b"<doc><sampler><thread name=\"");
        // Far more than the limit, unless the reader gives up first.
        for _ in 0..1024 {
            if stdin.write_all(&zeros).is_err() {
                break;
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    let _ = feeder.join();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("over 64 MiB"), "{err}");
}

/// Finding 6: a 100,000-deep chain with weight at every level: the formats
/// that spell out each stack keep its top 2,048 frames under `[truncated]`
/// (the agent's own default depth), so their output stays bounded.
#[test]
fn a_hundred_thousand_deep_chain_converts_in_bounded_output() {
    let dir = temp_dir("deep");
    let n = 100_000;
    let mut xml =
        String::from("<doc><sampler><thread name=\"t\" cumulated=\"1\" cumulatedElapsed=\"1\">");
    for i in 0..n {
        xml.push_str(&format!(
            "<profile name=\"m{}()\" hits=\"1\" elapsed=\"1\" cumulated=\"{}\" cumulatedElapsed=\"{}\">",
            i % 50,
            n - i,
            n - i
        ));
    }
    for _ in 0..n {
        xml.push_str("</profile>");
    }
    xml.push_str("</thread></sampler></doc>");
    let path = dir.join("deep.xml");
    std::fs::write(&path, xml).unwrap();
    let p = path.display().to_string();
    let (ok, out) = profrj(&["convert", "--to", "collapsed", &p]);
    assert!(ok, "{}", &out[..out.len().min(300)]);
    assert!(out.contains("[truncated];"), "deep stacks are cut");
    let total: u64 = out
        .lines()
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum();
    assert_eq!(total, n, "every node's weight is still counted");
    assert!(out.len() < 64 << 20, "output of {} bytes", out.len());
    let pb = dir.join("deep.pb").display().to_string();
    let (ok, out) = profrj(&["convert", "--to", "pprof", &p, "-o", &pb]);
    assert!(ok, "{out}");
    assert!(std::fs::metadata(&pb).unwrap().len() < 64 << 20);
    // HPROF: traces of at most --depth frames (2048 at most), every node's
    // samples in a row, in linear time.
    for depth in ["4", "2048", "100000"] {
        let (ok, out) = profrj(&["convert", "--to", "hprof", "--depth", depth, &p]);
        assert!(ok, "{}", &out[..out.len().min(300)]);
        // About 2,100 distinct traces (the 50 names repeat), each of at most
        // 2,048 frames of ~33 bytes (`m7(<Unknown Source>:Unknown line)`):
        // 79 MB, where one trace per node would be 6.7 GB.
        assert!(out.len() < 128 << 20, "output of {} bytes", out.len());
        let block = out.split("CPU SAMPLES BEGIN (total = ").nth(1).unwrap();
        assert!(block.starts_with(&format!("{n})")), "{}", &block[..40]);
        let longest = out
            .split("TRACE ")
            .skip(1)
            .map(|t| {
                t.lines()
                    .skip(1)
                    .take_while(|l| l.starts_with('\t'))
                    .count()
            })
            .max()
            .unwrap();
        let want: usize = depth.parse::<usize>().unwrap().min(2048);
        assert_eq!(longest, want, "--depth {depth}");
    }
    for cmd in [
        vec!["report", &p],
        vec!["flame", &p, "-o", &format!("{p}.html")],
        vec!["diff", &p, &p],
    ] {
        let (ok, out) = profrj(&cmd);
        assert!(ok, "{cmd:?}: {out}");
    }
}

/// The same bounds hold for `<alloc>`: a 100,000-deep chain ending in a
/// class frame, with figures near u64::MAX on two threads, goes through
/// every reader in bounded time and output, its sums saturated.
#[test]
fn a_deep_alloc_chain_with_huge_figures_stays_bounded() {
    let dir = temp_dir("deep-alloc");
    let n = 100_000;
    let big = u64::MAX - 5;
    let mut xml = String::from("<doc><alloc interval=\"1024\" live=\"false\">");
    for t in ["a", "b"] {
        xml.push_str(&format!("<thread name=\"{t}\">"));
        for i in 0..n {
            xml.push_str(&format!("<profile name=\"m{}()\">", i % 50));
        }
        xml.push_str(&format!(
            "<profile name=\"byte[]\" class=\"true\" bytes=\"{big}\" objects=\"{big}\" samples=\"1\"/>"
        ));
        for _ in 0..n {
            xml.push_str("</profile>");
        }
        xml.push_str("</thread>");
    }
    xml.push_str("</alloc></doc>");
    let path = dir.join("deep-alloc.xml");
    std::fs::write(&path, xml).unwrap();
    let p = path.display().to_string();
    let (ok, out) = profrj(&["report", &p]);
    assert!(ok, "{}", &out[..out.len().min(300)]);
    assert!(
        out.contains(&format!("{} bytes", u64::MAX)),
        "saturated: {out}"
    );
    let (ok, out) = profrj(&["convert", "--to", "collapsed", &p]);
    assert!(ok);
    assert!(
        out.contains("[truncated];") && out.contains(";byte[] "),
        "deep stacks are cut"
    );
    assert!(out.len() < 64 << 20, "output of {} bytes", out.len());
    let pb = dir.join("deep.pb").display().to_string();
    for cmd in [
        vec!["convert", "--to", "pprof", &p, "-o", &pb],
        vec!["convert", "--to", "hprof", "--depth", "2048", &p],
        vec!["flame", &p, "-o", &format!("{p}.html")],
        vec!["diff", &p, &p],
    ] {
        let (ok, out) = profrj(&cmd);
        assert!(ok, "{cmd:?}: {out}");
    }
}

/// Coverage formats: counts near u64::MAX on a line two methods share
/// saturate, and footprints running past the last line number a class file
/// can hold are dropped rather than wrapping to line 0.
#[test]
fn coverage_formats_saturate_and_stay_in_range() {
    let dir = temp_dir("coverage-limits");
    // Footprints are i64: three of i64::MAX on one line pass u64::MAX.
    let big = i64::MAX;
    let method = |name: &str, first: u64, prints: &str| {
        format!(
            "<method name=\"{name}\" signature=\"()V\" firstline=\"{first}\" count=\"1\">\
             <footprints>{prints}</footprints></method>"
        )
    };
    let xml = format!(
        "<doc><coverage><class name=\"p.A\" source=\"A.java\">{}{}{}{}</class></coverage></doc>",
        method("a", 10, &format!("{big} 1")),
        method("b", 10, &big.to_string()),
        method("d", 10, &big.to_string()),
        method("c", 4_294_967_294, "1 2 3 4"),
    );
    let path = dir.join("cov.xml");
    std::fs::write(&path, xml).unwrap();
    let p = path.display().to_string();
    let (ok, out) = profrj(&["convert", "--to", "lcov", &p]);
    assert!(ok, "{out}");
    assert!(out.contains(&format!("DA:10,{}\n", u64::MAX)), "{out}");
    assert!(out.contains("DA:4294967295,2\n"), "{out}");
    let wrapped = |l: &str| l.starts_with("DA:0,") || l.starts_with("DA:1,");
    assert!(!out.lines().any(wrapped), "{out}");
    let (ok, out) = profrj(&["convert", "--to", "cobertura", &p]);
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!("<line number=\"10\" hits=\"{}\"", u64::MAX)),
        "{out}"
    );
}

/// Runs `profrj ARGS` with its address space limited to `limit` bytes
/// (RLIMIT_AS: an allocation past it fails, and profrj aborts) and its
/// standard output counted, not kept: (success, bytes written). A limit, not
/// a measure of the child's peak: wait4's `ru_maxrss` counts the test
/// process's own peak too (posix_spawn shares its memory until exec).
fn capped(args: &[&str], limit: u64) -> (bool, u64) {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_profrj"));
    cmd.args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    // SAFETY: setrlimit is async-signal-safe and the closure touches only
    // its own copies of the limits.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit as libc::rlim_t,
                rlim_max: limit as libc::rlim_t,
            };
            // An old converter aborts: no core file for it.
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0
                || libc::setrlimit(libc::RLIMIT_CORE, &none) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        match stdout.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n as u64,
        }
    }
    (child.wait().unwrap().success(), total)
}

/// Issue 29, item 6: converters stream. 20 threads, each a 1,600-deep chain
/// of its own methods with a sample at every level (a 2 MB snapshot, a
/// 32,000-node model), spell out 240 MB of collapsed stacks, 120 MB of
/// HPROF traces, 62 MB of OTLP stacks and 550 MB of JFR stack traces; each
/// converter runs in 64 MiB of address space, whatever its output. The old
/// ones held their output, and pprof every stack twice: 540, 490, 115 and
/// (OTLP) 560 MB of resident memory here.
#[test]
fn converters_stream_their_output_in_bounded_memory() {
    let dir = temp_dir("streaming");
    let (threads, depth) = (20, 1600);
    let mut xml = String::from("<doc><sampler>");
    for t in 0..threads {
        xml.push_str(&format!(
            "<thread name=\"t{t}\" cumulated=\"{depth}\" cumulatedElapsed=\"{depth}\">"
        ));
        for i in 0..depth {
            xml.push_str(&format!(
                "<profile name=\"m{i}_{t}()\" hits=\"1\" elapsed=\"1\">"
            ));
        }
        xml.push_str(&"</profile>".repeat(depth));
        xml.push_str("</thread>");
    }
    xml.push_str("</sampler></doc>");
    let path = dir.join("wide-deep.xml");
    std::fs::write(&path, xml).unwrap();
    let p = path.display().to_string();
    let jfr = dir.join("wide-deep.jfr");
    let j = jfr.display().to_string();
    // The new converters run in 24 MiB of address space here; the old ones
    // aborted under 64 MiB.
    const LIMIT: u64 = 64 << 20;
    for (args, least_output) in [
        (
            vec!["convert", "--to", "collapsed", "--thread-frames", &p],
            100u64 << 20,
        ),
        (vec!["convert", "--to", "pprof", &p], 1 << 10),
        (
            vec!["convert", "--to", "hprof", "--depth", "100", &p],
            100 << 20,
        ),
        // Its stack table spells out every path (62 MB).
        (vec!["convert", "--to", "otlp", &p], 50 << 20),
        // Its stack-trace pool spells out every path (2,048 frames at most
        // each: 550 MB), written to the file, not to stdout.
        (vec!["convert", "--to", "jfr", "-o", &j, &p], 100 << 20),
    ] {
        let (ok, mut bytes) = capped(&args, LIMIT);
        assert!(ok, "{args:?} failed in {} MiB", LIMIT >> 20);
        if args.contains(&"-o") {
            bytes = std::fs::metadata(&jfr).map_or(0, |m| m.len());
            std::fs::remove_file(&jfr).unwrap();
        }
        assert!(bytes >= least_output, "{args:?}: only {bytes} bytes out");
    }
}
