//! The agent's option string: `key[=value]` items separated by commas, as given
//! after `-agentpath:libprofrj.so=` or to an attach client. One parser, one
//! table of options; the help text and every error message come from the table.
//!
//! A string may name one command (`start` when none is named): the first load
//! of the agent starts profiling; each later load of the same library in the
//! same JVM is a command to the running agent.

pub mod scope;

use scope::{Glob, Scope};
use std::fmt;
use std::time::Duration;

/// One option: how it is written, its default, which commands take it, what it does.
struct Opt {
    syntax: &'static str,
    default: &'static str,
    takes: Takes,
    meaning: &'static str,
}

/// Which command strings an option may appear in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Takes {
    /// It is the command (`stop`, `dump`, …).
    Command,
    /// `start` only (profiling settings).
    Start,
    /// `start` and `dump` (`file=`).
    StartOrDump,
    /// Every command (`reply`, `help`).
    Any,
}

impl Opt {
    /// The key: the syntax up to `=`.
    fn key(&self) -> &'static str {
        self.syntax.split(['=', '[']).next().unwrap_or(self.syntax)
    }
}

/// Every option, the one list the parser, its checks, the error messages and
/// `help` all read.
const OPTIONS: &[Opt] = &[
    Opt {
        syntax: "start",
        default: "",
        takes: Takes::Command,
        meaning: "command: start profiling with the options given (the default command)",
    },
    Opt {
        syntax: "stop",
        default: "",
        takes: Takes::Command,
        meaning: "command: stop profiling and write a snapshot (data is kept for resume)",
    },
    Opt {
        syntax: "resume",
        default: "",
        takes: Takes::Command,
        meaning: "command: continue a stopped profile with its options",
    },
    Opt {
        syntax: "dump",
        default: "",
        takes: Takes::Command,
        meaning: "command: write a snapshot now and keep profiling (file= names a one-off path)",
    },
    Opt {
        syntax: "status",
        default: "",
        takes: Takes::Command,
        meaning: "command: report what the agent is doing",
    },
    Opt {
        syntax: "sampling",
        default: "on if no mode is named",
        takes: Takes::Start,
        meaning: "stack sampling (the <sampler> section)",
    },
    Opt {
        syntax: "profile",
        default: "",
        takes: Takes::Start,
        meaning: "instrumented method timing: exact call counts and times per call path (the <profile> section)",
    },
    Opt {
        syntax: "coverage",
        default: "",
        takes: Takes::Start,
        meaning: "per-line execution counts of the classes in scope (the <coverage> section)",
    },
    Opt {
        syntax: "memory",
        default: "",
        takes: Takes::Start,
        meaning: "live objects per allocating thread and class, and the most ever alive (the <memory> section)",
    },
    Opt {
        syntax: "alloc[=SIZE]",
        default: "512k",
        takes: Takes::Start,
        meaning: "allocation sites by call path: JVMTI samples an object about every SIZE bytes a thread allocates (k, m suffixes; 0 samples every object), each weighted to estimate all bytes and objects (the <alloc> section)",
    },
    Opt {
        syntax: "lock[=DURATION]",
        default: "0",
        takes: Takes::Start,
        meaning: "where threads wait for each other: contended synchronized entries by call path and monitor class, with counts and nanoseconds waited, waits shorter than DURATION (ns, us, ms or s; 0 records every one) left out, and a monitor dump at every snapshot (the <lock> section)",
    },
    Opt {
        syntax: "trace[=PATH]",
        default: "profrj-%p-trace.xml",
        takes: Takes::Start,
        meaning: "every call, return, throw and catch of the classes in scope as it happens, written as a TPTP trace-event XML document to PATH (placeholders as for file=; each dump ends the current file and the next events start the next, %n numbering them, else .2, .3... appended)",
    },
    Opt {
        syntax: "jfr[=PATH]",
        default: "profrj-%p.jfr",
        takes: Takes::Start,
        meaning: "also write the running modes' events as they happen to a JDK Flight Recorder file at PATH (samples as jdk.ExecutionSample, alloc's as jdk.ObjectAllocationSample, lock's as jdk.JavaMonitorEnter/jdk.ThreadPark), for JDK Mission Control and IntelliJ; placeholders as for file=; each dump ends the file, the next events start the next (%n numbers them, else .2, .3... before .jfr); sampling is on if no mode is named",
    },
    Opt {
        syntax: "overflow=wait|drop",
        default: "wait",
        takes: Takes::Start,
        meaning: "trace: when a thread's event buffer is full because the disk cannot keep up, wait for the writer (a complete trace, a slower program) or drop the events and count them (the trace marks each gap)",
    },
    Opt {
        syntax: "live",
        default: "",
        takes: Takes::Start,
        meaning: "alloc: only the sampled objects still reachable at the snapshot (a snapshot runs a GC): who allocated what is alive",
    },
    Opt {
        syntax: "include=GLOB",
        default: "all but the JDK's classes",
        takes: Takes::Start,
        meaning: "classes to instrument (repeatable; * and ? wildcards, e.g. com.acme.*; include=* takes the JDK too)",
    },
    Opt {
        syntax: "exclude=GLOB",
        default: "",
        takes: Takes::Start,
        meaning: "classes never to instrument (repeatable; wins over include)",
    },
    Opt {
        syntax: "file=PATH",
        default: "profrj-%p.xml",
        takes: Takes::StartOrDump,
        meaning: "snapshot path; %p pid, %t time (yyyy_MM_dd_HH_mm_ss), %n dump number, %% a %",
    },
    Opt {
        syntax: "interval=DURATION",
        default: "10ms",
        takes: Takes::Start,
        meaning: "sampling interval, with unit us, ms or s (100us to 10s)",
    },
    Opt {
        syntax: "depth=N",
        default: "2048",
        takes: Takes::Start,
        meaning: "deepest stack recorded; deeper stacks keep their top N frames under [truncated]",
    },
    Opt {
        syntax: "event=wall|cpu",
        default: "wall",
        takes: Takes::Start,
        meaning: "sampling: wall counts every live thread once per interval; cpu samples each thread once per interval of CPU time it uses",
    },
    Opt {
        syntax: "stacks=async|jvmti",
        default: "async",
        takes: Takes::Start,
        meaning: "sampling: async takes each stack in its thread from a signal (AsyncGetCallTrace, no safepoint bias); jvmti uses JVMTI handshakes",
    },
    Opt {
        syntax: "lines",
        default: "",
        takes: Takes::Start,
        meaning: "sampling: each frame with its source line (a node per method and line, the line in a line attribute), as async-profiler's lines option",
    },
    Opt {
        syntax: "vthreads=on|off",
        default: "on",
        takes: Takes::Start,
        meaning: "JDK 21+: a carrier thread's samples show the virtual thread mounted on it (fixed when the agent loads)",
    },
    Opt {
        syntax: "derive=on|off",
        default: "on",
        takes: Takes::Start,
        meaning: "coverage: lines reached only through code that cannot throw or call take their counts from other lines' counters (exact, fewer increments); off: a counter per line entry",
    },
    Opt {
        syntax: "timing=all|sampled",
        default: "all",
        takes: Takes::Start,
        meaning: "profile: all times every call (two clock reads); sampled counts every call exactly but times one call in 32 per thread, a node's times the timed calls' scaled to its count (self time: its total less its children's, at least 0): the cheapest profile, times approximate. Fixed by the first profile session",
    },
    Opt {
        syntax: "stripes=N",
        default: "CPUs, a power of two, at most 16",
        takes: Takes::Start,
        meaning: "coverage: copies of each method's counters (a power of two, 1 to 64), each on cache lines of its own; a call counts in the copy of its thread (thread id mod N), so threads on other cores do not contend; the snapshot sums them. 1: one copy (least memory). Fixed by the first coverage session",
    },
    Opt {
        syntax: "tracker=auto|weak|tags",
        default: "auto",
        takes: Takes::Start,
        meaning: "memory: how object deaths are seen; weak: a JNI weak reference per object, checked after each GC (serial, parallel and G1 collectors, which clear them in their pauses; the cheapest); tags: JVMTI tags and ObjectFree (any collector); auto: weak where it works",
    },
    Opt {
        syntax: "otlp[=URL]",
        default: "http://127.0.0.1:4318, or OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT",
        takes: Takes::Start,
        meaning: "push every period's profile to an OpenTelemetry Collector (OTLP profiles, protobuf over HTTP(S) to URL/v1development/profiles, gzipped); headers from OTEL_EXPORTER_OTLP_HEADERS; snapshots go on as before (docs/OTLP.md)",
    },
    Opt {
        syntax: "period=DURATION",
        default: "60s",
        takes: Takes::Start,
        meaning: "otlp: how often a profile is pushed (ms or s; at least 1s)",
    },
    Opt {
        syntax: "service=NAME",
        default: "OTEL_SERVICE_NAME, else the main class or jar",
        takes: Takes::Start,
        meaning: "otlp: the resource's service.name",
    },
    Opt {
        syntax: "cafile=PATH",
        default: "OTEL_EXPORTER_OTLP_CERTIFICATE, else the system's roots",
        takes: Takes::Start,
        meaning: "otlp: the PEM file of the CA(s) an https collector's certificate must chain to",
    },
    Opt {
        syntax: "signal=NAME",
        default: "USR1",
        takes: Takes::Start,
        meaning: "signal that writes a snapshot: USR1, RTMIN+N (0-8) or off",
    },
    Opt {
        syntax: "reply=PATH",
        default: "",
        takes: Takes::Any,
        meaning: "file the command's result is written to (used by the profrj client)",
    },
    Opt {
        syntax: "help",
        default: "",
        takes: Takes::Any,
        meaning: "print this table to stderr and continue",
    },
];

/// The table entry of `key`, if it is an option at all.
fn spec(key: &str) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.key() == key)
}

/// Does `command` take option `key`?
fn allowed(command: Command, key: &str) -> bool {
    match spec(key).map(|o| o.takes) {
        Some(Takes::Any | Takes::Command) => true,
        Some(Takes::Start) => command == Command::Start,
        Some(Takes::StartOrDump) => matches!(command, Command::Start | Command::Dump),
        None => false,
    }
}

const MIN_INTERVAL: Duration = Duration::from_micros(100);
const MAX_INTERVAL: Duration = Duration::from_secs(10);
const MAX_DEPTH: u32 = 65_535;
const MAX_THRESHOLD: Duration = Duration::from_secs(3600);
const DEFAULT_FILE: &str = "profrj-%p.xml";
const DEFAULT_TRACE: &str = "profrj-%p-trace.xml";
const DEFAULT_JFR: &str = "profrj-%p.jfr";
const DEFAULT_ALLOC: u32 = 512 * 1024;
const DEFAULT_PERIOD: Duration = Duration::from_secs(60);
const MIN_PERIOD: Duration = Duration::from_secs(1);
const MAX_PERIOD: Duration = Duration::from_secs(24 * 3600);
/// JVMTI takes the sampling interval as a jint.
const MAX_ALLOC: u64 = i32::MAX as u64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Start,
    Stop,
    Resume,
    Dump,
    Status,
}

impl Command {
    fn from_word(w: &str) -> Option<Self> {
        Some(match w {
            "start" => Self::Start,
            "stop" => Self::Stop,
            "resume" => Self::Resume,
            "dump" => Self::Dump,
            "status" => Self::Status,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Stop => "stop",
            Self::Resume => "resume",
            Self::Dump => "dump",
            Self::Status => "status",
        }
    }
}

/// How the memory mode learns that a tracked object died.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracker {
    /// Weak references where the collector allows, else tags.
    Auto,
    /// JNI weak global references, checked after each GC.
    Weak,
    /// JVMTI tags and the ObjectFree event.
    Tags,
}

/// Where sampled stacks come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stacks {
    /// From a signal, in the thread itself (AsyncGetCallTrace).
    Async,
    /// JVMTI GetStackTrace handshakes.
    Jvmti,
}

fn parse_event(v: &str) -> Result<Event, OptionError> {
    match v {
        "wall" => Ok(Event::Wall),
        "cpu" => Ok(Event::Cpu),
        _ => Err(bad(format!(
            "bad value for event: '{v}' (valid: wall, cpu)"
        ))),
    }
}

fn parse_stacks(v: &str) -> Result<Stacks, OptionError> {
    match v {
        "async" => Ok(Stacks::Async),
        "jvmti" => Ok(Stacks::Jvmti),
        _ => Err(bad(format!(
            "bad value for stacks: '{v}' (valid: async, jvmti)"
        ))),
    }
}

fn parse_tracker(v: &str) -> Result<Tracker, OptionError> {
    match v {
        "auto" => Ok(Tracker::Auto),
        "weak" => Ok(Tracker::Weak),
        "tags" => Ok(Tracker::Tags),
        _ => Err(bad(format!(
            "bad value for tracker: '{v}' (valid: auto, weak, tags)"
        ))),
    }
}

/// What a sample measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Every live thread, once per interval, whatever it does.
    Wall,
    /// Each thread once per `interval` of CPU time it uses.
    Cpu,
}

impl Event {
    pub fn name(self) -> &'static str {
        match self {
            Event::Wall => "event=wall",
            Event::Cpu => "event=cpu",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub command: Command,
    pub sampling: bool,
    pub profile: bool,
    pub coverage: bool,
    pub memory: bool,
    /// `alloc`: the mean bytes between sampled allocations (`None`: off).
    pub alloc: Option<u32>,
    /// `alloc`: only objects still reachable at the snapshot.
    pub live: bool,
    /// `lock`: the shortest wait recorded (`None`: off).
    pub lock: Option<Duration>,
    /// `trace`: the trace files' path template.
    pub trace: Option<String>,
    /// `jfr`: the recording files' path template.
    pub jfr: Option<String>,
    /// `overflow=drop`.
    pub overflow_drop: bool,
    /// Which classes the instrumenting modes rewrite.
    pub scope: Scope,
    /// Snapshot path template (placeholders not yet expanded).
    pub file: String,
    /// Was `file=` given (for `dump`: a one-off path)?
    pub file_given: bool,
    pub interval: Duration,
    pub depth: u32,
    /// Signal number that requests a dump, and its name; `None` = off.
    pub signal: Option<(i32, String)>,
    /// Sample virtual threads on their carriers (JDK 21+).
    pub vthreads: bool,
    /// Coverage: derive counts where they follow from other counters.
    pub derive: bool,
    /// Profile: time one call in `SAMPLE_EVERY` only.
    pub timing_sampled: bool,
    /// Coverage: copies of the counters (`None`: from the CPU count).
    pub stripes: Option<u32>,
    /// Sampling: what a sample measures.
    pub event: Event,
    /// Sampling: where stacks come from.
    pub stacks: Stacks,
    /// Sampling: a node per method and source line.
    pub lines: bool,
    /// Memory: how deaths of tracked objects are seen.
    pub tracker: Tracker,
    /// `otlp`: push to a collector; `Some(None)`: the URL from the
    /// environment or the default.
    pub otlp: Option<Option<String>>,
    /// `otlp`: how often.
    pub period: Duration,
    /// `otlp`: `service.name`.
    pub service: Option<String>,
    /// `otlp`: the CA file for https.
    pub cafile: Option<String>,
    pub reply: Option<String>,
    pub help: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            command: Command::Start,
            sampling: false,
            profile: false,
            coverage: false,
            memory: false,
            alloc: None,
            live: false,
            lock: None,
            trace: None,
            jfr: None,
            overflow_drop: false,
            scope: Scope::default(),
            file: DEFAULT_FILE.to_owned(),
            file_given: false,
            interval: Duration::from_millis(10),
            depth: 2048,
            signal: Some((libc::SIGUSR1, "USR1".to_owned())),
            vthreads: true,
            derive: true,
            stripes: None,
            timing_sampled: false,
            event: Event::Wall,
            stacks: Stacks::Async,
            lines: false,
            tracker: Tracker::Auto,
            otlp: None,
            period: DEFAULT_PERIOD,
            service: None,
            cafile: None,
            reply: None,
            help: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError(pub String);

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn valid_list() -> String {
    OPTIONS
        .iter()
        .map(|o| o.syntax)
        .collect::<Vec<_>>()
        .join(", ")
}

fn bad(msg: String) -> OptionError {
    OptionError(format!("{msg} (valid options: {})", valid_list()))
}

impl Options {
    /// Parses the option string. `None` or empty means all defaults.
    pub fn parse(input: Option<&str>) -> Result<Self, OptionError> {
        let mut o = Options::default();
        let mut seen: Vec<&str> = Vec::new();
        let mut command: Option<Command> = None;
        for item in input.unwrap_or("").split(',').map(str::trim) {
            if item.is_empty() {
                continue;
            }
            let (key, value) = match item.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (item, None),
            };
            if spec(key).is_none() {
                return Err(bad(format!("unknown option '{key}'")));
            }
            if seen.contains(&key) && !matches!(key, "include" | "exclude") {
                return Err(bad(format!("option '{key}' is given twice")));
            }
            seen.push(key);
            if let Some(c) = Command::from_word(key) {
                flag(key, value)?;
                if let Some(first) = command {
                    return Err(bad(format!(
                        "two commands given: '{}' and '{key}'",
                        first.name()
                    )));
                }
                command = Some(c);
                continue;
            }
            match key {
                "sampling" => o.sampling = flag(key, value)?,
                "profile" => o.profile = flag(key, value)?,
                "coverage" => o.coverage = flag(key, value)?,
                "memory" => o.memory = flag(key, value)?,
                "alloc" => o.alloc = Some(value.map_or(Ok(DEFAULT_ALLOC), parse_size)?),
                "live" => o.live = flag(key, value)?,
                "lines" => o.lines = flag(key, value)?,
                "lock" => o.lock = Some(value.map_or(Ok(Duration::ZERO), parse_threshold)?),
                "trace" => {
                    o.trace = Some(match value {
                        Some(v) => parse_file(key, v)?,
                        None => DEFAULT_TRACE.to_owned(),
                    })
                }
                "jfr" => {
                    o.jfr = Some(match value {
                        Some(v) => parse_file(key, v)?,
                        None => DEFAULT_JFR.to_owned(),
                    })
                }
                "overflow" => {
                    o.overflow_drop = match required(key, value)? {
                        "wait" => false,
                        "drop" => true,
                        v => {
                            return Err(bad(format!(
                                "bad value for overflow: '{v}' (wait or drop)"
                            )))
                        }
                    }
                }
                "include" | "exclude" => {
                    let v = required(key, value)?;
                    let glob = Glob::new(v)
                        .map_err(|why| bad(format!("bad value for {key}: '{v}': {why}")))?;
                    if key == "include" {
                        o.scope.include.push(glob);
                    } else {
                        o.scope.exclude.push(glob);
                    }
                }
                "help" => o.help = flag(key, value)?,
                "file" => {
                    o.file = parse_file(key, required(key, value)?)?;
                    o.file_given = true;
                }
                "interval" => o.interval = parse_interval(required(key, value)?)?,
                "depth" => o.depth = parse_depth(required(key, value)?)?,
                "signal" => o.signal = parse_signal(required(key, value)?)?,
                "vthreads" => o.vthreads = parse_on_off(key, required(key, value)?)?,
                "derive" => o.derive = parse_on_off(key, required(key, value)?)?,
                "timing" => {
                    o.timing_sampled = match required(key, value)? {
                        "all" => false,
                        "sampled" => true,
                        v => {
                            return Err(bad(format!(
                                "bad value for timing: '{v}' (all or sampled)"
                            )))
                        }
                    }
                }
                "stripes" => o.stripes = Some(parse_stripes(required(key, value)?)?),
                "event" => o.event = parse_event(required(key, value)?)?,
                "stacks" => o.stacks = parse_stacks(required(key, value)?)?,
                "tracker" => o.tracker = parse_tracker(required(key, value)?)?,
                "otlp" => {
                    o.otlp = Some(match value {
                        Some(v) => Some(parse_url(v)?),
                        None => None,
                    })
                }
                "period" => o.period = parse_period(required(key, value)?)?,
                "service" => o.service = Some(required(key, value)?.to_owned()),
                "cafile" => o.cafile = Some(required(key, value)?.to_owned()),
                "reply" => o.reply = Some(required(key, value)?.to_owned()),
                // In the table but not parsed here: a bug the unit tests catch.
                _ => return Err(bad(format!("option '{key}' is not handled"))),
            }
        }
        o.command = command.unwrap_or(Command::Start);
        for key in &seen {
            if !allowed(o.command, key) {
                return Err(bad(format!(
                    "option '{key}' does not apply to the '{}' command",
                    o.command.name()
                )));
            }
        }
        if o.live && o.alloc.is_none() {
            return Err(bad(
                "option 'live' belongs to alloc: give alloc,live".to_owned()
            ));
        }
        for key in ["period", "service", "cafile"] {
            if seen.contains(&key) && o.otlp.is_none() {
                return Err(bad(format!(
                    "option '{key}' belongs to otlp: give otlp,{key}=..."
                )));
            }
        }
        if seen.contains(&"overflow") && o.trace.is_none() {
            return Err(bad(
                "option 'overflow' belongs to trace: give trace,overflow=drop".to_owned(),
            ));
        }
        // Starting with no mode named: sample. `help` alone only prints the table.
        let help_only = o.help && seen.iter().all(|k| matches!(*k, "help" | "reply"));
        let mode_named = o.any_mode();
        if o.command == Command::Start && !(mode_named || help_only) {
            o.sampling = true;
        }
        if o.lines && !o.sampling {
            return Err(bad(
                "option 'lines' belongs to sampling: give sampling,lines".to_owned(),
            ));
        }
        Ok(o)
    }

    /// Is any profiling mode on?
    pub fn any_mode(&self) -> bool {
        self.sampling || self.instruments() || self.alloc.is_some() || self.lock.is_some()
    }

    /// Does a mode rewrite classes (so the agent needs the class-file hook)?
    pub fn instruments(&self) -> bool {
        self.profile || self.coverage || self.memory || self.trace.is_some()
    }

    /// Does the session rewrite any class: the instrumenting modes' scope,
    /// or `lock`'s probes in `LockSupport`?
    pub fn rewrites(&self) -> bool {
        self.instruments() || self.lock.is_some()
    }

    /// The table `help` prints.
    pub fn help_text() -> String {
        let mut s = String::from("profrj agent options (comma-separated, e.g. -agentpath:libprofrj.so=sampling,interval=5ms):\n");
        for o in OPTIONS {
            let default = if o.default.is_empty() {
                String::new()
            } else {
                format!(" [default: {}]", o.default)
            };
            s.push_str(&format!("  {:<20} {}{default}\n", o.syntax, o.meaning));
        }
        s
    }
}

/// The `reply=` path of an option string, even one that does not parse, so
/// the attach client hears about the error in it.
pub fn reply_path(input: Option<&str>) -> Option<String> {
    input?
        .split(',')
        .filter_map(|item| item.trim().strip_prefix("reply="))
        .map(|v| v.trim().to_owned())
        .find(|v| !v.is_empty())
}

fn flag(key: &str, value: Option<&str>) -> Result<bool, OptionError> {
    match value {
        None => Ok(true),
        Some(v) => Err(bad(format!(
            "option '{key}' takes no value, got '{key}={v}'"
        ))),
    }
}

fn required<'a>(key: &str, value: Option<&'a str>) -> Result<&'a str, OptionError> {
    match value {
        Some(v) if !v.is_empty() => Ok(v),
        Some(_) => Err(bad(format!("option '{key}=' needs a value"))),
        // jcmd splits its arguments at '=', so an unquoted `file=x` arrives as `file`.
        None if key == "file" => Err(bad(
            "option 'file' needs a value (file=PATH); with jcmd, quote the whole option string: \
             jcmd PID JVMTI.agent_load /path/libprofrj.so '\"sampling,file=/tmp/x.xml\"'"
                .to_owned(),
        )),
        None => Err(bad(format!("option '{key}' needs a value ({key}=...)"))),
    }
}

fn parse_file(key: &str, v: &str) -> Result<String, OptionError> {
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            match chars.next() {
                Some('p' | 't' | 'n' | '%') => {}
                Some(x) => {
                    return Err(bad(format!(
                        "bad value for {key}: unknown placeholder '%{x}' in '{v}' (placeholders: %p %t %n %%)"
                    )))
                }
                None => {
                    return Err(bad(format!(
                        "bad value for {key}: '{v}' ends with a lone '%' (write %% for %)"
                    )))
                }
            }
        }
    }
    Ok(v.to_owned())
}

fn parse_on_off(key: &str, v: &str) -> Result<bool, OptionError> {
    match v {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(bad(format!("bad value for {key}: '{v}' (on or off)"))),
    }
}

fn parse_signal(v: &str) -> Result<Option<(i32, String)>, OptionError> {
    let err = |why: &str| bad(format!("bad value for signal: '{v}' ({why})"));
    let name = v.strip_prefix("SIG").unwrap_or(v).to_ascii_uppercase();
    match name.as_str() {
        "OFF" => Ok(None),
        "USR1" => Ok(Some((libc::SIGUSR1, name))),
        "USR2" => Err(err("HotSpot uses SIGUSR2 to suspend threads")),
        "QUIT" => Err(err(
            "SIGQUIT already writes a snapshot (kill -3), as a thread dump does",
        )),
        "HUP" | "INT" | "TERM" => Err(err("the JVM runs shutdown hooks on it")),
        _ => {
            let n = name
                .strip_prefix("RTMIN+")
                .or_else(|| (name == "RTMIN").then_some("0"))
                .and_then(|n| n.parse::<i32>().ok())
                .filter(|n| (0..=8).contains(n))
                .ok_or_else(|| err("use USR1, RTMIN+N with N from 0 to 8, or off"))?;
            Ok(Some((libc::SIGRTMIN() + n, format!("RTMIN+{n}"))))
        }
    }
}

/// A duration: a whole number with unit `ns`, `us`, `ms` or `s` (`0` may
/// go without one); `key` names the option in the message.
fn parse_duration(key: &str, v: &str, example: &str) -> Result<Duration, OptionError> {
    let err = |why: &str| bad(format!("bad value for {key}: '{v}' ({why})"));
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().map_err(|_| {
        err(&format!(
            "expected a whole number with unit us, ms or s, e.g. {example}"
        ))
    })?;
    Ok(match unit {
        "ns" => Duration::from_nanos(n),
        "us" => Duration::from_micros(n),
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "" if n == 0 => Duration::ZERO,
        "" => return Err(err("missing unit: us, ms or s")),
        _ => return Err(err("unknown unit; use us, ms or s")),
    })
}

/// `period=`: 1s to a day.
fn parse_period(v: &str) -> Result<Duration, OptionError> {
    let d = parse_duration("period", v, "60s")?;
    if d < MIN_PERIOD || d > MAX_PERIOD {
        return Err(bad(format!(
            "bad value for period: '{v}' (between 1s and 86400s, e.g. 60s)"
        )));
    }
    Ok(d)
}

/// `otlp=URL`: http:// or https://, a host, an optional port and path.
fn parse_url(v: &str) -> Result<String, OptionError> {
    crate::otlp::config::Endpoint::parse(v, true)
        .map(|_| v.to_owned())
        .map_err(|why| bad(format!("bad value for otlp: '{v}' ({why})")))
}

fn parse_interval(v: &str) -> Result<Duration, OptionError> {
    let d = parse_duration("interval", v, "10ms")?;
    if d < MIN_INTERVAL || d > MAX_INTERVAL {
        return Err(bad(format!(
            "bad value for interval: '{v}' (must be between 100us and 10s)"
        )));
    }
    Ok(d)
}

/// `lock=`: the shortest wait recorded, at most an hour.
fn parse_threshold(v: &str) -> Result<Duration, OptionError> {
    let d = parse_duration("lock", v, "1ms")?;
    if d > MAX_THRESHOLD {
        return Err(bad(format!(
            "bad value for lock: '{v}' (the shortest wait recorded, at most 3600s)"
        )));
    }
    Ok(d)
}

/// A byte count: digits with an optional k, m or g (binary multiples).
fn parse_size(v: &str) -> Result<u32, OptionError> {
    let lower = v.to_ascii_lowercase();
    let (digits, unit) = match lower.strip_suffix(['k', 'm', 'g']) {
        Some(d) => (d, &lower[d.len()..]),
        None => (lower.as_str(), ""),
    };
    let shift = match unit {
        "k" => 10,
        "m" => 20,
        "g" => 30,
        _ => 0,
    };
    match digits.parse::<u64>() {
        Ok(n) if n.checked_shl(shift).is_some_and(|b| b >> shift == n && b <= MAX_ALLOC) => {
            Ok((n << shift) as u32)
        }
        _ => Err(bad(format!(
            "bad value for alloc: '{v}' (bytes between samples, e.g. 512k, 64k, 1m; 0 for every object; at most 2g-1)"
        ))),
    }
}

fn parse_depth(v: &str) -> Result<u32, OptionError> {
    match v.parse::<u32>() {
        Ok(n) if (1..=MAX_DEPTH).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "bad value for depth: '{v}' (a whole number from 1 to {MAX_DEPTH})"
        ))),
    }
}

/// Most stripes `stripes=` takes (memory: each method's counters N times).
pub const MAX_STRIPES: u32 = 64;

fn parse_stripes(v: &str) -> Result<u32, OptionError> {
    match v.parse::<u32>() {
        Ok(n) if n.is_power_of_two() && n <= MAX_STRIPES => Ok(n),
        _ => Err(bad(format!(
            "bad value for stripes: '{v}' (a power of two from 1 to {MAX_STRIPES})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Options, OptionError> {
        Options::parse(Some(s))
    }

    #[test]
    fn defaults_when_empty_or_absent() {
        let o = Options::parse(None).unwrap();
        assert!(o.sampling);
        assert_eq!(o.file, "profrj-%p.xml");
        assert_eq!(o.interval, Duration::from_millis(10));
        assert_eq!(o.depth, 2048);
        assert_eq!(parse("").unwrap(), o);
    }

    #[test]
    fn jfr_records_beside_the_modes() {
        let o = parse("jfr").unwrap();
        assert_eq!(o.jfr.as_deref(), Some("profrj-%p.jfr"));
        assert!(o.sampling, "jfr alone samples");
        let o = parse("alloc,jfr=/tmp/r-%n.jfr").unwrap();
        assert_eq!(o.jfr.as_deref(), Some("/tmp/r-%n.jfr"));
        assert!(!o.sampling);
        assert!(parse("jfr=/tmp/%q.jfr").is_err());
    }

    #[test]
    fn full_option_string() {
        let o = parse("sampling,file=/tmp/out-%p-%t.xml,interval=5ms,depth=64").unwrap();
        assert!(o.sampling && !o.help);
        assert_eq!(o.file, "/tmp/out-%p-%t.xml");
        assert_eq!(o.interval, Duration::from_millis(5));
        assert_eq!(o.depth, 64);
    }

    #[test]
    fn profile_with_scope() {
        let o =
            parse("profile,include=com.acme.*,include=java.util.*,exclude=com.acme.gen.*").unwrap();
        assert!(
            o.profile && !o.sampling,
            "naming profile turns sampling off"
        );
        assert_eq!(o.scope.include.len(), 2);
        assert_eq!(o.scope.exclude.len(), 1);
        assert!(o.scope.contains("java.util.HashMap", true));
        assert!(!o.scope.contains("com.acme.gen.A", false));
        let both = parse("sampling,profile").unwrap();
        assert!(both.sampling && both.profile && both.instruments());
        let e = parse("profile,include=com/acme").unwrap_err().0;
        assert!(e.contains("include") && e.contains("'/'"), "{e}");
        assert!(e.contains("valid options"), "{e}");
        let e = parse("dump,include=x.*").unwrap_err().0;
        assert!(e.contains("does not apply"), "{e}");
        assert!(parse("profile,profile").is_err());
        let c = parse("coverage,include=com.acme.*").unwrap();
        assert!(c.coverage && !c.sampling && !c.profile && c.instruments());
        assert!(c.derive && !c.memory);
        let m = parse("memory,profile").unwrap();
        assert!(m.memory && m.profile && !m.coverage && !m.sampling);
    }

    #[test]
    fn interval_units() {
        assert_eq!(
            parse("interval=250us").unwrap().interval,
            Duration::from_micros(250)
        );
        assert_eq!(
            parse("interval=2s").unwrap().interval,
            Duration::from_secs(2)
        );
        for bad in [
            "interval=10",
            "interval=10min",
            "interval=ms",
            "interval=50us",
            "interval=11s",
            "interval=-1ms",
        ] {
            let e = parse(bad).unwrap_err().0;
            assert!(e.contains("interval"), "{bad}: {e}");
        }
    }

    #[test]
    fn depth_range() {
        assert_eq!(parse("depth=1").unwrap().depth, 1);
        for bad in ["depth=0", "depth=x", "depth=70000", "depth=-3"] {
            assert!(
                parse(bad).unwrap_err().0.contains("bad value for depth"),
                "{bad}"
            );
        }
    }

    #[test]
    fn unknown_option_names_it_and_lists_valid_ones() {
        let e = parse("sampling,bogus=1").unwrap_err().0;
        assert!(e.contains("unknown option 'bogus'"), "{e}");
        for o in OPTIONS {
            assert!(e.contains(o.syntax), "{e} should list {}", o.syntax);
        }
    }

    #[test]
    fn lock_takes_an_optional_shortest_wait() {
        assert_eq!(parse("lock").unwrap().lock, Some(Duration::ZERO));
        assert_eq!(
            parse("lock=1ms").unwrap().lock,
            Some(Duration::from_millis(1))
        );
        assert_eq!(
            parse("lock=100us").unwrap().lock,
            Some(Duration::from_micros(100))
        );
        assert_eq!(
            parse("lock=250ns").unwrap().lock,
            Some(Duration::from_nanos(250))
        );
        assert_eq!(parse("lock=0").unwrap().lock, Some(Duration::ZERO));
        assert_eq!(parse("lock=2s").unwrap().lock, Some(Duration::from_secs(2)));
        for bad in [
            "lock=",
            "lock=5",
            "lock=1min",
            "lock=ms",
            "lock=-1ms",
            "lock=3601s",
        ] {
            let e = parse(bad).unwrap_err().0;
            assert!(e.contains("lock"), "{bad}: {e}");
        }
        let o = parse("lock").unwrap();
        assert!(o.any_mode() && !o.sampling, "lock alone is a mode");
        let o = parse("sampling,alloc,lock=10us").unwrap();
        assert!(o.sampling && o.alloc.is_some());
        assert_eq!(o.lock, Some(Duration::from_micros(10)));
        assert!(parse("lock,lock=1ms").unwrap_err().0.contains("twice"));
    }

    #[test]
    fn alloc_takes_an_optional_size_and_live_needs_it() {
        assert_eq!(parse("alloc").unwrap().alloc, Some(512 * 1024));
        assert_eq!(parse("alloc=64k").unwrap().alloc, Some(64 * 1024));
        assert_eq!(parse("alloc=1M").unwrap().alloc, Some(1 << 20));
        assert_eq!(parse("alloc=0").unwrap().alloc, Some(0));
        assert_eq!(parse("alloc=1000").unwrap().alloc, Some(1000));
        for bad_size in [
            "alloc=",
            "alloc=x",
            "alloc=-1",
            "alloc=2g",
            "alloc=1k5",
            "alloc=99999999999g",
        ] {
            let e = parse(bad_size).unwrap_err().0;
            assert!(e.contains("alloc"), "{bad_size}: {e}");
        }
        let a = parse("alloc,live").unwrap();
        assert!(
            a.live && a.any_mode() && !a.sampling,
            "alloc alone is a mode"
        );
        assert!(parse("live").unwrap_err().0.contains("alloc,live"));
        assert!(parse("sampling,alloc=64k,live").is_ok());
    }

    #[test]
    fn lines_belong_to_sampling() {
        assert!(
            parse("lines").unwrap().lines,
            "alone, it samples with lines"
        );
        assert!(parse("sampling,lines,alloc").unwrap().sampling);
        assert!(parse("profile,lines")
            .unwrap_err()
            .0
            .contains("sampling,lines"));
        assert!(parse("lines=on").unwrap_err().0.contains("takes no value"));
    }

    #[test]
    fn flags_take_no_value_and_values_are_required() {
        assert!(parse("sampling=yes")
            .unwrap_err()
            .0
            .contains("takes no value"));
        assert!(parse("depth").unwrap_err().0.contains("needs a value"));
        assert!(parse("file=").unwrap_err().0.contains("needs a value"));
    }

    #[test]
    fn bare_file_explains_jcmd_quoting() {
        let e = parse("sampling,file").unwrap_err().0;
        assert!(e.contains("quote"), "{e}");
    }

    #[test]
    fn duplicates_are_rejected() {
        assert!(parse("interval=1ms,interval=2ms")
            .unwrap_err()
            .0
            .contains("given twice"));
    }

    #[test]
    fn file_placeholders_are_checked() {
        assert!(parse("file=a%%b%p%t%n.xml").is_ok());
        assert!(parse("file=a%q.xml").unwrap_err().0.contains("%q"));
        assert!(parse("file=a%").unwrap_err().0.contains("lone"));
    }

    #[test]
    fn help_alone_does_not_profile() {
        let o = parse("help").unwrap();
        assert!(o.help && !o.any_mode());
        let o = parse("help,interval=1ms").unwrap();
        assert!(o.help && o.sampling);
    }

    /// A value each option accepts, for the test below.
    fn example(o: &Opt) -> String {
        let key = o.key();
        let value = match key {
            "include" | "exclude" => Some("com.acme.*"),
            "file" | "reply" => Some("/tmp/x.xml"),
            "interval" => Some("5ms"),
            "depth" => Some("10"),
            "stripes" => Some("4"),
            "timing" => Some("sampled"),
            "signal" => Some("off"),
            "event" => Some("cpu"),
            "stacks" => Some("jvmti"),
            "tracker" => Some("tags"),
            "vthreads" | "derive" => Some("off"),
            "alloc" => Some("64k"),
            "live" => return "alloc,live".to_owned(),
            "lock" => Some("1ms"),
            "trace" => Some("/tmp/t-%n.xml"),
            "overflow" => return "trace,overflow=drop".to_owned(),
            "otlp" => Some("https://collector.example:4318"),
            "period" => return "otlp,period=10s".to_owned(),
            "service" => return "otlp,service=shop".to_owned(),
            "cafile" => return "otlp,cafile=/etc/ca.pem".to_owned(),
            _ => None,
        };
        match value {
            Some(v) => format!("{key}={v}"),
            None => key.to_owned(),
        }
    }

    /// The table is the parser's only list: every key in it parses (in a
    /// command that takes it) and is in `help`; a key not in it is refused.
    #[test]
    fn every_key_the_parser_accepts_is_in_the_table_and_in_help() {
        let help = Options::help_text();
        for o in OPTIONS {
            let item = example(o);
            let input = match o.takes {
                Takes::Command | Takes::Start | Takes::Any => item.clone(),
                Takes::StartOrDump => format!("dump,{item}"),
            };
            if let Err(e) = parse(&input) {
                panic!("'{input}' from the table does not parse: {e}");
            }
            assert!(help.contains(o.syntax), "help lacks {}", o.syntax);
        }
        for key in ["vthread", "events", "stack", "foo"] {
            assert!(
                parse(key).unwrap_err().0.contains("unknown option"),
                "{key}"
            );
        }
    }

    #[test]
    fn trace_takes_a_path_and_an_overflow_policy() {
        let o = parse("trace").unwrap();
        assert_eq!(o.trace.as_deref(), Some("profrj-%p-trace.xml"));
        assert!(!o.overflow_drop && !o.sampling && o.instruments());
        let o = parse("trace=/tmp/t-%p-%n.xml,overflow=drop").unwrap();
        assert_eq!(o.trace.as_deref(), Some("/tmp/t-%p-%n.xml"));
        assert!(o.overflow_drop);
        assert!(parse("trace,overflow=wait").is_ok());
        let e = parse("trace,overflow=later").unwrap_err().0;
        assert!(e.contains("overflow") && e.contains("wait or drop"), "{e}");
        let e = parse("overflow=drop").unwrap_err().0;
        assert!(e.contains("belongs to trace"), "{e}");
        let e = parse("trace=/tmp/%q.xml").unwrap_err().0;
        assert!(e.contains("placeholder"), "{e}");
    }

    #[test]
    fn help_text_lists_every_option_with_default() {
        let h = Options::help_text();
        for o in OPTIONS {
            assert!(h.contains(o.syntax));
            assert!(h.contains(o.default));
        }
    }

    #[test]
    fn commands() {
        assert_eq!(parse("").unwrap().command, Command::Start);
        assert_eq!(
            parse("sampling,interval=5ms").unwrap().command,
            Command::Start
        );
        let d = parse("dump,file=/tmp/x-%n.xml,reply=/tmp/r").unwrap();
        assert_eq!(d.command, Command::Dump);
        assert!(d.file_given && !d.sampling);
        assert_eq!(d.file, "/tmp/x-%n.xml");
        assert_eq!(d.reply.as_deref(), Some("/tmp/r"));
        assert!(!parse("dump").unwrap().file_given);
        for c in ["stop", "status", "resume"] {
            let o = parse(c).unwrap();
            assert_eq!(o.command.name(), c);
            assert!(!o.sampling);
        }
        assert!(parse("stop,dump").unwrap_err().0.contains("two commands"));
        assert!(parse("stop,interval=1ms")
            .unwrap_err()
            .0
            .contains("does not apply to the 'stop' command"));
        assert!(parse("dump,sampling")
            .unwrap_err()
            .0
            .contains("does not apply"));
        assert!(parse("dump=now").unwrap_err().0.contains("takes no value"));
    }

    #[test]
    fn reply_path_survives_bad_options() {
        assert_eq!(
            reply_path(Some("bogus,reply=/tmp/r")).as_deref(),
            Some("/tmp/r")
        );
        assert_eq!(reply_path(Some("dump")), None);
        assert_eq!(reply_path(None), None);
    }

    #[test]
    fn vthreads_switch() {
        assert!(parse("").unwrap().vthreads);
        assert!(!parse("vthreads=off").unwrap().vthreads);
        assert!(parse("vthreads=maybe")
            .unwrap_err()
            .0
            .contains("bad value for vthreads"));
        assert!(parse("dump,vthreads=on")
            .unwrap_err()
            .0
            .contains("does not apply"));
    }

    #[test]
    fn tracker_choices() {
        assert_eq!(parse("memory").unwrap().tracker, Tracker::Auto);
        assert_eq!(parse("memory,tracker=tags").unwrap().tracker, Tracker::Tags);
        assert_eq!(parse("memory,tracker=weak").unwrap().tracker, Tracker::Weak);
        let e = parse("memory,tracker=soft").unwrap_err().to_string();
        assert!(e.contains("bad value for tracker: 'soft'") && e.contains("auto, weak, tags"));
    }

    #[test]
    fn derive_switch() {
        assert!(parse("coverage").unwrap().derive);
        assert!(!parse("coverage,derive=off").unwrap().derive);
        assert!(parse("profile,timing=sampled").unwrap().timing_sampled);
        assert!(!parse("profile,timing=all").unwrap().timing_sampled);
        assert!(parse("profile,timing=some").is_err());
        assert_eq!(parse("coverage").unwrap().stripes, None);
        assert_eq!(parse("coverage,stripes=8").unwrap().stripes, Some(8));
        assert_eq!(parse("coverage,stripes=1").unwrap().stripes, Some(1));
        for bad in ["0", "3", "128", "x"] {
            assert!(parse(&format!("coverage,stripes={bad}")).is_err(), "{bad}");
        }
        assert!(parse("coverage,derive=no")
            .unwrap_err()
            .0
            .contains("bad value for derive"));
    }

    #[test]
    fn signals() {
        assert_eq!(parse("").unwrap().signal.unwrap().0, libc::SIGUSR1);
        assert_eq!(parse("signal=off").unwrap().signal, None);
        assert_eq!(
            parse("signal=SIGUSR1").unwrap().signal.unwrap().0,
            libc::SIGUSR1
        );
        assert_eq!(
            parse("signal=RTMIN+3").unwrap().signal.unwrap().0,
            libc::SIGRTMIN() + 3
        );
        for bad in [
            "signal=USR2",
            "signal=QUIT",
            "signal=TERM",
            "signal=RTMIN+9",
            "signal=KILL",
        ] {
            assert!(
                parse(bad).unwrap_err().0.contains("bad value for signal"),
                "{bad}"
            );
        }
    }

    #[test]
    fn otlp_takes_a_url_a_period_and_a_service() {
        let o = parse("otlp").unwrap();
        assert_eq!(o.otlp, Some(None));
        assert!(o.sampling, "otlp alone pushes the default mode");
        assert_eq!(o.period, Duration::from_secs(60));
        let o = parse("alloc,otlp=http://10.0.0.1:4318/base,period=5s,service=shop").unwrap();
        assert_eq!(o.otlp, Some(Some("http://10.0.0.1:4318/base".into())));
        assert_eq!(o.period, Duration::from_secs(5));
        assert_eq!(o.service.as_deref(), Some("shop"));
        assert!(!o.sampling);
        for bad in [
            "otlp=ftp://x",
            "otlp=http://",
            "otlp=http://h:99999",
            "otlp,period=500ms",
            "otlp,period=2d",
            "otlp,period=",
            "period=10s",
            "service=x",
        ] {
            let e = parse(bad).unwrap_err().0;
            assert!(e.contains("otlp") || e.contains("period"), "{bad}: {e}");
        }
    }

    #[test]
    fn whitespace_around_items_is_ignored() {
        let o = parse(" sampling , interval = 20ms ").unwrap();
        assert_eq!(o.interval, Duration::from_millis(20));
    }
}
