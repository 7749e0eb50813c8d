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
//!
//! This file holds the table: what an option is ([`Opt`]), the agent's own
//! rows and the order `help` lists every row in. Apart from it:
//! - `parse`: the parser, the command it finds and the [`Options`] it makes;
//! - `values`: each kind of value read and checked (flags, on/off, paths,
//!   durations, sizes, the signal), which the modes' rows use too;
//! - `error`: [`OptionError`] and the messages shared by the modes' checks;
//! - `scope`: include/exclude; `doc`: docs/OPTIONS.md rendered from the rows.

#[cfg(test)]
mod doc;
mod error;
mod heap;
mod parse;
pub mod scope;
mod values;

pub use error::{bad_value, belongs_to, OptionError};
pub use heap::HeapDumps;
pub use parse::{reply_path, Command, Options};
pub use values::{
    choice, parse_duration, parse_file, parse_size, read_flag_value, read_on_off, required,
};

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
    /// `start` and `heapdump` (`heapfile=`, `heapkind=`, `heapgz=`).
    StartOrHeapDump,
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
        syntax: "heapdump",
        default: "",
        takes: Takes::Command,
        meaning: "command: write a heap dump now (HPROF binary; objects memory follows name their allocating method, line and thread; heapfile=, heapkind=, heapgz= apply; no session needed)",
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
        syntax: "ended=N|fold|keep",
        default: "16",
        takes: Takes::Start,
        meaning: "of the ended threads of each name pattern (the name with its digits as #: pool-3-thread-17 is pool-#-thread-#), a snapshot keeps the first N to start one by one and adds the rest into one group named by the pattern (endedThreads=M), so threads that come and go do not grow it; fold: N = 0; keep: every ended thread its own row (docs/THREADS.md)",
        read: None,
    },
    Opt {
        syntax: "otlp[=URL]",
        default: "http://127.0.0.1:4318, or OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT",
        takes: Takes::Start,
        meaning: "push every period what each call-tree mode (sampling, profile, alloc, lock) gathered since the last push to an OpenTelemetry Collector (OTLP profiles, protobuf over HTTP(S) to URL/v1development/profiles, gzipped); headers from OTEL_EXPORTER_OTLP_HEADERS; snapshots go on as before; a collector that is down, slow or refusing costs the program nothing, and the periods it cannot take are folded into the next push (one profile covering the gap, at most 32 MiB waiting; past that the oldest periods are dropped and counted in status and the exit line) (docs/OTLP.md)",
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
        syntax: "heapdumps=WHEN",
        default: "none",
        takes: Takes::Start,
        meaning: "heap dumps written unasked: exit (at the JVM's exit), snapshot (with each snapshot), oom (at the first OutOfMemoryError, as -XX:+HeapDumpOnOutOfMemoryError); several joined by + (heapdumps=oom+exit)",
        read: None,
    },
    Opt {
        syntax: "heapfile=PATH",
        default: "profrj-%p-%n.hprof (working directory)",
        takes: Takes::StartOrHeapDump,
        meaning: "heap dump path; %p pid, %t time, %n heap dump number, %% a %; .gz is added with heapgz=on",
        read: None,
    },
    Opt {
        syntax: "heapkind=live|all",
        default: "live",
        takes: Takes::StartOrHeapDump,
        meaning: "live: the objects alive after a full GC (jcmd GC.heap_dump's default); all: every object in the heap, garbage too (-all)",
        read: None,
    },
    Opt {
        syntax: "heapgz=on|off",
        default: "off",
        takes: Takes::StartOrHeapDump,
        meaning: "gzip the heap dump (as jcmd GC.heap_dump -gz writes it)",
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
            Some(Takes::StartOrHeapDump) => matches!(command, Command::Start | Command::HeapDump),
            None => false,
        }
    }

    fn valid_list(&self) -> String {
        self.all().map(|o| o.syntax).collect::<Vec<_>>().join(", ")
    }
}

impl Options {
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
