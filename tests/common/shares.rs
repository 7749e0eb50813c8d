//! Shares from a sampler, with a tolerance the machine's load cannot break.
//!
//! On an idle machine every wall-clock tick is one independent sample. On a
//! loaded one the sampler thread wakes late, and a late tick stands for the
//! intervals it missed: its one stack is counted that many times (the
//! totals stay right, see the agent's `Schedule`). A share computed from
//! such counts rests on fewer independent samples than it counts, so its
//! tolerance is computed from the sampler's own account of its catch-ups,
//! printed at exit, instead of being a constant tuned on an idle machine.

/// The sampler's account at exit (its last `sampling: T ticks every … (M
/// missed intervals made up, at most K at once, P in pauses not counted`
/// line): ticks taken, intervals late ticks made up for besides their own,
/// the most one tick made up for, and the intervals of gaps so long (over a
/// second) they were taken for a stopped JVM and not counted.
pub fn sampler_ticks(stderr: &str) -> SamplerTicks {
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.contains("sampling: ") && l.contains("missed intervals made up"))
        .unwrap_or_else(|| panic!("no sampler summary in:\n{stderr}"));
    let number = |before: &str, after: &str| -> f64 {
        line.split(after)
            .next()
            .and_then(|s| s.rsplit(before).next())
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no count before {after:?} in {line:?}"))
    };
    SamplerTicks {
        ticks: number("sampling: ", " ticks every"),
        made_up: number("(", " missed intervals made up"),
        largest: number("at most ", " at once"),
        paused: number("at once, ", " in pauses not counted"),
    }
}

/// See [`sampler_ticks`].
pub struct SamplerTicks {
    pub ticks: f64,
    pub made_up: f64,
    pub largest: f64,
    pub paused: f64,
}

/// How far a share sampled from `n` counted samples may be from a truth of
/// `p` percent, the sampler's catch-ups (`stderr`) considered: with weights
/// w = 1 + m adding up to n, the m adding up to at most M and none over K,
/// Σw² ≤ n + M + K·M, so the share's variance is at most that of
/// n² / (n + M·(1 + K)) independent samples. Then [`binomial_tolerance`].
pub fn share_tolerance(p: f64, n: f64, stderr: &str, floor: f64) -> f64 {
    let t = sampler_ticks(stderr);
    let independent = n * n / (n + t.made_up * (1.0 + t.largest)).max(1.0);
    binomial_tolerance(p, independent, floor)
}

/// Four standard deviations of a `p`% share over `n` independent samples,
/// in points, and never less than `floor`.
pub fn binomial_tolerance(p: f64, n: f64, floor: f64) -> f64 {
    let q = (p / 100.0).clamp(0.0, 1.0);
    (400.0 * (q * (1.0 - q) / n.max(1.0)).sqrt()).max(floor)
}

/// How far from half of a 10 ms cycle (two 5 ms slots) the kernel's timer
/// tick may put a thread's samples on a loaded machine, in points: a thread
/// waiting for the CPU is switched in at a tick, and a wall-clock sample
/// owed to it is taken then. Ticks 1/HZ apart fall on HZ / gcd(100, HZ)
/// evenly spaced points of the cycle, of which a slot holds the lower or
/// the upper half: 10 points at HZ=250 (2 of 5 points, or 3), 16.7 at 300,
/// none at 1000. HZ is read from the kernel's configuration
/// (`/boot/config-RELEASE`, else `/proc/config.gz`); unknown, 300's.
pub fn tick_bias_points() -> f64 {
    let hz = kernel_hz().unwrap_or(300);
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let points = hz / gcd(100, hz).max(1);
    match points % 2 {
        0 => 0.0,
        _ => 50.0 / points as f64,
    }
}

/// CONFIG_HZ of the running kernel, where its configuration is readable.
fn kernel_hz() -> Option<u64> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    let config = std::fs::read_to_string(format!("/boot/config-{}", release.trim()))
        .ok()
        .or_else(|| {
            let out = std::process::Command::new("zcat")
                .arg("/proc/config.gz")
                .output()
                .ok()?;
            Some(String::from_utf8_lossy(&out.stdout).into_owned())
        })?;
    config
        .lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok())
}
