//! The agent's option string: `key[=value]` items separated by commas, as given
//! after `-agentpath:libprofrj.so=` or to an attach client. One parser, one
//! table of options; the help text and every error message come from the table.
//!
//! The table has two parts: the agent's own options here (the commands, the
//! scope, the snapshot's path, the stack depth, the dump signal...) and each
//! mode's, which its folder declares ([`ModeOptions`], listed by the
//! registry and handed to [`Options::parse`]): a mode's values are kept by
//! key ([`Options::value`]) and read by the mode.
//!
//! A string may name one command (`start` when none is named): the first load
//! of the agent starts profiling; each later load of the same library in the
//! same JVM is a command to the running agent.

#[cfg(test)]
mod doc;
pub mod scope;

use scope::{Glob, Scope};
use std::fmt;
use std::time::Duration;

/// One option: how it is written, its default, which commands take it, what
/// it does, and (a mode's) how its value is read.
pub struct Opt {
    pub syntax: &'static str,
    pub default: &'static str,
    pub takes: Takes,
    pub meaning: &'static str,
    /// A mode's option: how its value is read. `None` for the agent's own
    /// options, which the parser reads itself.
    pub read: Option<Read>,
}

/// Reads a mode's option: its key and the item's value (`None`: no `=`);
/// the error's text names the option and its valid values.
pub type Read = fn(&str, Option<&str>) -> Result<Value, OptionError>;

/// Which command strings an option may appear in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Takes {
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
    pub fn key(&self) -> &'static str {
        self.syntax.split(['=', '[']).next().unwrap_or(self.syntax)
    }
}

/// A mode's options: the first is the mode's own (its name, which asks for
/// it); the others are its settings.
pub struct ModeOptions {
    pub options: &'static [Opt],
    /// The mode runs when a start names no mode (`sampling`).
    pub default_mode: bool,
    /// The mode records the other modes' events (`jfr`): naming it is not
    /// naming a mode, so named alone the default mode comes with it.
    pub records_others: bool,
    /// Checks that need several options (a setting given without its mode).
    pub check: fn(&Options) -> Result<(), OptionError>,
}

impl ModeOptions {
    /// The mode's name: its first option's key.
    pub fn mode(&self) -> &'static str {
        self.options.first().map_or("", Opt::key)
    }

    /// No check beyond each option's own.
    pub fn no_check(_: &Options) -> Result<(), OptionError> {
        Ok(())
    }
}

/// A mode option's value, as its `read` made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Given, without a value.
    Flag,
    /// `on` or `off`.
    Switch(bool),
    /// A count of bytes.
    Bytes(u32),
    Duration(Duration),
    /// A number.
    Number(u32),
    /// A word from the option's list, or a path.
    Text(String),
}

/// The agent's own options.
const OPTIONS: &[Opt] = &[
    Opt {
        syntax: "start",
        default: "",
        takes: Takes::Command,
        meaning: "command: start profiling with the options given (the default command)",
        read: None,
    },
    Opt {
        syntax: "stop",
        default: "",
        takes: Takes::Command,
        meaning: "command: stop profiling and write a snapshot (data is kept for resume)",
        read: None,
    },
    Opt {
        syntax: "resume",
        default: "",
        takes: Takes::Command,
        meaning: "command: continue a stopped profile with its options",
        read: None,
    },
    Opt {
        syntax: "dump",
        default: "",
        takes: Takes::Command,
        meaning: "command: write a snapshot now and keep profiling (file= names a one-off path)",
        read: None,
    },
    Opt {
        syntax: "status",
        default: "",
        takes: Takes::Command,
        meaning: "command: report what the agent is doing",
        read: None,
    },
    Opt {
        syntax: "include=GLOB",
        default: "every class not loaded by the boot or platform loader",
        takes: Takes::Start,
        meaning: "classes to instrument for profile, memory, coverage and trace (repeatable; * any run of characters, dots too, ? one; e.g. com.acme.*); with any include, exactly the matching classes are instrumented, the JDK's too (include=* is everything)",
        read: None,
    },
    Opt {
        syntax: "exclude=GLOB",
        default: "",
        takes: Takes::Start,
        meaning: "classes never to instrument (repeatable; wins over include)",
        read: None,
    },
    Opt {
        syntax: "file=PATH",
        default: "profrj-%p.xml (working directory)",
        takes: Takes::StartOrDump,
        meaning: "snapshot path; %p pid, %t time (yyyy_MM_dd_HH_mm_ss), %n dump number, %% a %",
        read: None,
    },
    Opt {
        syntax: "depth=N",
        default: "2048",
        takes: Takes::Start,
        meaning: "deepest stack recorded (1 to 65535); deeper stacks keep their top N frames under [truncated]",
        read: None,
    },
    Opt {
        syntax: "vthreads=on|off",
        default: "on",
        takes: Takes::Start,
        meaning: "JDK 21+: a carrier thread's samples show the virtual thread mounted on it, and profile, trace, lock and memory follow virtual threads across carriers (fixed when the agent loads)",
        read: None,
    },
    Opt {
        syntax: "otlp[=URL]",
        default: "http://127.0.0.1:4318, or OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT",
        takes: Takes::Start,
        meaning: "push every period what each call-tree mode (sampling, profile, alloc, lock) gathered since the last push to an OpenTelemetry Collector (OTLP profiles, protobuf over HTTP(S) to URL/v1development/profiles, gzipped); headers from OTEL_EXPORTER_OTLP_HEADERS; snapshots go on as before; a collector that is down, slow or refusing costs the program nothing (docs/OTLP.md)",
        read: None,
    },
    Opt {
        syntax: "period=DURATION",
        default: "60s",
        takes: Takes::Start,
        meaning: "otlp: how often a profile is pushed (ms or s; 1s to a day)",
        read: None,
    },
    Opt {
        syntax: "service=NAME",
        default: "OTEL_SERVICE_NAME, else the main class or jar",
        takes: Takes::Start,
        meaning: "otlp: the resource's service.name",
        read: None,
    },
    Opt {
        syntax: "cafile=PATH",
        default: "OTEL_EXPORTER_OTLP_CERTIFICATE, else the system's roots",
        takes: Takes::Start,
        meaning: "otlp: the PEM file of the CA(s) an https collector's certificate must chain to (rustls, no OpenSSL)",
        read: None,
    },
    Opt {
        syntax: "signal=NAME",
        default: "USR1",
        takes: Takes::Start,
        meaning: "signal that writes a snapshot: USR1, RTMIN+N (0-8) or off; USR2, QUIT, HUP, INT and TERM are refused (docs/OPTIONS.md says why)",
        read: None,
    },
    Opt {
        syntax: "reply=PATH",
        default: "",
        takes: Takes::Any,
        meaning: "file the command's result is written to (used by the profrj client)",
        read: None,
    },
    Opt {
        syntax: "help",
        default: "",
        takes: Takes::Any,
        meaning: "print this table to stderr and continue (alone, it profiles nothing)",
        read: None,
    },
];

/// Every option: the agent's, then each mode's (in the registry's order).
struct Table<'a> {
    modes: &'a [&'a ModeOptions],
}

/// Every option, the agent's and `modes`', in `help`'s order.
#[cfg(test)]
pub fn all_options(modes: &[&ModeOptions]) -> Vec<&'static Opt> {
    (Table { modes }).all().collect()
}

impl Table<'_> {
    fn all(&self) -> impl Iterator<Item = &'static Opt> + '_ {
        let commands = OPTIONS.iter().take_while(|o| o.takes == Takes::Command);
        let modes = self.modes.iter().flat_map(|m| m.options.iter());
        let rest = OPTIONS.iter().skip_while(|o| o.takes == Takes::Command);
        commands.chain(modes).chain(rest)
    }

    /// The table entry of `key`, if it is an option at all.
    fn spec(&self, key: &str) -> Option<&'static Opt> {
        self.all().find(|o| o.key() == key)
    }

    /// Does `command` take option `key`?
    fn allowed(&self, command: Command, key: &str) -> bool {
        match self.spec(key).map(|o| o.takes) {
            Some(Takes::Any | Takes::Command) => true,
            Some(Takes::Start) => command == Command::Start,
            Some(Takes::StartOrDump) => matches!(command, Command::Start | Command::Dump),
            None => false,
        }
    }

    fn valid_list(&self) -> String {
        self.all().map(|o| o.syntax).collect::<Vec<_>>().join(", ")
    }
}

const MAX_DEPTH: u32 = 65_535;
const DEFAULT_FILE: &str = "profrj-%p.xml";
const DEFAULT_PERIOD: Duration = Duration::from_secs(60);
const MIN_PERIOD: Duration = Duration::from_secs(1);
const MAX_PERIOD: Duration = Duration::from_secs(24 * 3600);

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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub command: Command,
    /// Which classes the instrumenting modes rewrite.
    pub scope: Scope,
    /// Snapshot path template (placeholders not yet expanded).
    pub file: String,
    /// Was `file=` given (for `dump`: a one-off path)?
    pub file_given: bool,
    pub depth: u32,
    /// Signal number that requests a dump, and its name; `None` = off.
    pub signal: Option<(i32, String)>,
    /// Sample virtual threads on their carriers (JDK 21+).
    pub vthreads: bool,
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
    /// The modes' options given, by key, in the order given.
    values: Vec<(&'static str, Value)>,
    /// The modes' names (each mode's first option), for [`Options::any_mode`].
    modes: Vec<&'static str>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            command: Command::Start,
            scope: Scope::default(),
            file: DEFAULT_FILE.to_owned(),
            file_given: false,
            depth: 2048,
            signal: Some((libc::SIGUSR1, "USR1".to_owned())),
            vthreads: true,
            otlp: None,
            period: DEFAULT_PERIOD,
            service: None,
            cafile: None,
            reply: None,
            help: false,
            values: Vec::new(),
            modes: Vec::new(),
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

impl std::error::Error for OptionError {}

fn bad(msg: String) -> OptionError {
    OptionError(msg)
}

impl Options {
    /// Parses the option string against the agent's options and `modes`'.
    /// `None` or empty means all defaults. Every error names the option and
    /// lists the valid ones.
    pub fn parse(input: Option<&str>, modes: &[&ModeOptions]) -> Result<Self, OptionError> {
        let table = Table { modes };
        Self::parse_in(input, &table)
            .map_err(|e| OptionError(format!("{} (valid options: {})", e.0, table.valid_list())))
    }

    fn parse_in(input: Option<&str>, table: &Table) -> Result<Self, OptionError> {
        let mut o = Options {
            modes: (table.modes.iter())
                .filter(|m| !m.records_others)
                .map(|m| m.mode())
                .collect(),
            ..Options::default()
        };
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
            let Some(spec) = table.spec(key) else {
                return Err(bad(format!("unknown option '{key}'")));
            };
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
            if let Some(read) = spec.read {
                o.values.push((spec.key(), read(key, value)?));
                continue;
            }
            match key {
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
                "help" => o.help = read_flag(key, value)?,
                "file" => {
                    o.file = parse_file(key, required(key, value)?)?;
                    o.file_given = true;
                }
                "depth" => o.depth = parse_depth(required(key, value)?)?,
                "signal" => o.signal = parse_signal(required(key, value)?)?,
                "vthreads" => o.vthreads = parse_on_off(key, required(key, value)?)?,
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
            if !table.allowed(o.command, key) {
                return Err(bad(format!(
                    "option '{key}' does not apply to the '{}' command",
                    o.command.name()
                )));
            }
        }
        for key in ["period", "service", "cafile"] {
            if seen.contains(&key) && o.otlp.is_none() {
                return Err(bad(format!(
                    "option '{key}' belongs to otlp: give otlp,{key}=..."
                )));
            }
        }
        for m in table.modes {
            (m.check)(&o)?;
        }
        // Starting with no mode named: the default mode. `help` alone only
        // prints the table.
        let help_only = o.help && seen.iter().all(|k| matches!(*k, "help" | "reply"));
        if o.command == Command::Start && !(o.any_mode() || help_only) {
            for m in table.modes.iter().filter(|m| m.default_mode) {
                o.values.push((m.mode(), Value::Flag));
            }
        }
        Ok(o)
    }

    /// Is any profiling mode on?
    pub fn any_mode(&self) -> bool {
        self.modes.iter().any(|m| self.given(m))
    }

    /// The value of a mode's option `key`, if given.
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.values.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Was a mode's option `key` given?
    pub fn given(&self, key: &str) -> bool {
        self.value(key).is_some()
    }

    /// `key`'s `on`/`off`, if given.
    pub fn switch(&self, key: &str) -> Option<bool> {
        match self.value(key)? {
            Value::Switch(b) => Some(*b),
            _ => None,
        }
    }

    /// `key`'s byte count, if given.
    pub fn bytes(&self, key: &str) -> Option<u32> {
        match self.value(key)? {
            Value::Bytes(n) => Some(*n),
            _ => None,
        }
    }

    /// `key`'s duration, if given.
    pub fn duration(&self, key: &str) -> Option<Duration> {
        match self.value(key)? {
            Value::Duration(d) => Some(*d),
            _ => None,
        }
    }

    /// `key`'s number, if given.
    pub fn number(&self, key: &str) -> Option<u32> {
        match self.value(key)? {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// `key`'s word or path, if given.
    pub fn text(&self, key: &str) -> Option<&str> {
        match self.value(key)? {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }

    /// The table `help` prints: the agent's options and `modes`'.
    pub fn help_text(modes: &[&ModeOptions]) -> String {
        let mut s = String::from("profrj agent options (comma-separated, e.g. -agentpath:libprofrj.so=sampling,interval=5ms):\n");
        for o in (Table { modes }).all() {
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

fn read_flag(key: &str, value: Option<&str>) -> Result<bool, OptionError> {
    flag(key, value).map(|()| true)
}

/// A flag's value: none.
pub fn flag(key: &str, value: Option<&str>) -> Result<(), OptionError> {
    match value {
        None => Ok(()),
        Some(v) => Err(bad(format!(
            "option '{key}' takes no value, got '{key}={v}'"
        ))),
    }
}

/// [`Opt::read`] of a flag.
pub fn read_flag_value(key: &str, value: Option<&str>) -> Result<Value, OptionError> {
    flag(key, value).map(|()| Value::Flag)
}

/// The value an option needs.
pub fn required<'a>(key: &str, value: Option<&'a str>) -> Result<&'a str, OptionError> {
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

/// One of `words`, the values option `key` takes; `hint` says them in the
/// error (`wait or drop`).
pub fn choice(
    key: &str,
    value: Option<&str>,
    words: &[&str],
    hint: &str,
) -> Result<Value, OptionError> {
    let v = required(key, value)?;
    if words.contains(&v) {
        return Ok(Value::Text(v.to_owned()));
    }
    Err(bad(format!("bad value for {key}: '{v}' ({hint})")))
}

/// A mode's setting given without its mode: `option` belongs to `mode`,
/// and `example` shows both.
pub fn belongs_to(o: &Options, option: &str, mode: &str, example: &str) -> Result<(), OptionError> {
    if o.given(option) && !o.given(mode) {
        return Err(bad(format!(
            "option '{option}' belongs to {mode}: give {example}"
        )));
    }
    Ok(())
}

/// "bad value for KEY: 'V' (WHY)".
pub fn bad_value(key: &str, v: &str, why: &str) -> OptionError {
    bad(format!("bad value for {key}: '{v}' ({why})"))
}

/// A path template: the snapshot's placeholders checked.
pub fn parse_file(key: &str, v: &str) -> Result<String, OptionError> {
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

/// `on` or `off`.
pub fn parse_on_off(key: &str, v: &str) -> Result<bool, OptionError> {
    match v {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(bad(format!("bad value for {key}: '{v}' (on or off)"))),
    }
}

/// [`Opt::read`] of an `on`/`off` option.
pub fn read_on_off(key: &str, value: Option<&str>) -> Result<Value, OptionError> {
    parse_on_off(key, required(key, value)?).map(Value::Switch)
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
pub fn parse_duration(key: &str, v: &str, example: &str) -> Result<Duration, OptionError> {
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

/// A byte count: digits with an optional k, m or g (binary multiples), at
/// most `max`; `None` when it is not one.
pub fn parse_size(v: &str, max: u64) -> Option<u32> {
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
        Ok(n)
            if n.checked_shl(shift)
                .is_some_and(|b| b >> shift == n && b <= max) =>
        {
            Some((n << shift) as u32)
        }
        _ => None,
    }
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
    crate::otlp::endpoint::Endpoint::parse(v, true)
        .map(|_| v.to_owned())
        .map_err(|why| bad(format!("bad value for otlp: '{v}' ({why})")))
}

fn parse_depth(v: &str) -> Result<u32, OptionError> {
    match v.parse::<u32>() {
        Ok(n) if (1..=MAX_DEPTH).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "bad value for depth: '{v}' (a whole number from 1 to {MAX_DEPTH})"
        ))),
    }
}
