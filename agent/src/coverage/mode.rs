//! `coverage` as a [`Mode`]. Its counters are inserted by the instrumenter
//! and count whenever instrumented code runs; a snapshot reads them.

use super::{Counts, Lifetime};
use crate::error::AgentError;
use crate::instrument::Probes;
use crate::mode::{Capture, Cx, Mode, Registration};
use crate::model::Section;
use crate::options::{self, ModeOptions, Opt, OptionError, Takes, Value};
use crate::threads::ThreadRecord;

/// `coverage`: every line in scope counted by probes the rewriter inserts.
pub const REGISTRATION: Registration = Registration {
    name: "coverage",
    options: ModeOptions {
        options: &[
            Opt {
                syntax: "coverage",
                default: "",
                takes: Takes::Start,
                meaning: "per-line execution counts of the classes in scope (the <coverage> section)",
                read: Some(options::read_flag_value),
            },
            Opt {
                syntax: "derive=on|off",
                default: "on",
                takes: Takes::Start,
                meaning: "coverage: lines reached only through code that cannot throw or call take their counts from other lines' counters (exact, fewer increments); off: a counter per line entry",
                read: Some(options::read_on_off),
            },
            Opt {
                syntax: "stripes=N",
                default: "the CPU count rounded up to a power of two, at most 16",
                takes: Takes::Start,
                meaning: "coverage: copies of each method's counters (a power of two, 1 to 64), each on cache lines of its own; a call counts in the copy of its thread (thread id mod N), so threads on other cores do not contend; the snapshot sums them; until a second application thread starts, every call counts in copy 0 (class files 55+: as cheap as one copy). 1: one unpadded copy (least memory; docs/OPTIONS.md gives the bytes). Fixed by the first coverage session",
                read: Some(read_stripes),
            },
        ],
        default_mode: false,
        records_others: false,
        check: ModeOptions::no_check,
    },
    open,
    natives: || super::natives().to_vec(),
    capabilities: |caps| Ok(crate::instrument::capabilities(caps)?),
    probes: |o| Probes {
        coverage: true,
        derive_lines: o.switch("derive").unwrap_or(true),
        ..Probes::NONE
    },
};

/// Most stripes `stripes=` takes (memory: each method's counters N times).
pub const MAX_STRIPES: u32 = 64;

/// `stripes=`: a power of two from 1 to [`MAX_STRIPES`].
fn read_stripes(key: &str, value: Option<&str>) -> Result<Value, OptionError> {
    let v = options::required(key, value)?;
    match v.parse::<u32>() {
        Ok(n) if n.is_power_of_two() && n <= MAX_STRIPES => Ok(Value::Number(n)),
        _ => Err(options::bad_value(
            key,
            v,
            &format!("a power of two from 1 to {MAX_STRIPES}"),
        )),
    }
}

/// The session's view of the JVM-lifetime counters.
struct Coverage(&'static Lifetime);

fn open(cx: &Cx) -> Result<Box<dyn Mode>, AgentError> {
    let life = cx.host.state::<Lifetime>();
    life.fix_stripes(cx.options.number("stripes"));
    cx.host.instrumenter.set_coverage_layouts(life);
    Ok(Box::new(Coverage(life)))
}

impl Mode for Coverage {
    fn start(&self, _cx: &Cx) -> Result<(), AgentError> {
        Ok(())
    }

    fn stop(&self) {}

    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Capture + '_>, AgentError> {
        Ok(Box::new(Captured(self.0.counts(cx.jni))))
    }
}

struct Captured(Counts);

impl Capture for Captured {
    fn sections(
        self: Box<Self>,
        _: &[std::sync::Arc<ThreadRecord>],
        _: (u64, u64),
    ) -> Vec<Section> {
        vec![super::model::section(&self.0)]
    }
}
