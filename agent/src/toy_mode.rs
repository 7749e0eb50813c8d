//! A mode written as docs/ARCHITECTURE.md says to add one, in one file: its
//! options, its lasting state (a listener of GC events), a per-thread value,
//! its registration and its snapshot's section. The test runs what needs no
//! JVM: the options parsed beside the real modes', `help`, the events and
//! the per-thread record reaching it, and its section written by the XML
//! writer, which has no layout for it (the shape of `<alloc>`, from the
//! weights' names). Nothing outside this file changes for it but one line of
//! a registry (here the test's own list). Opening and starting it need a
//! JVM (`Cx`): the integration tests run the real modes that way.

use crate::error::AgentError;
use crate::events::{Events, Kind, Listener};
use crate::mode::{Capture, Cx, Mode, Registration};
use crate::model::{CallTrees, Frame, Part, Section, ThreadTree, Unit, Value, Weight};
use crate::options::{self, ModeOptions, Opt, OptionError, Takes};
use crate::per_thread::{self, Held, ThreadValue};
use crate::states::States;
use crate::threads::{ThreadId, ThreadRecord};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// `toy[=N]`: counts garbage collections, N per tick.
const REGISTRATION: Registration = Registration {
    name: "toy",
    options: ModeOptions {
        options: &[Opt {
            syntax: "toy[=N]",
            default: "1",
            takes: Takes::Start,
            meaning: "a toy: garbage collections, N each (the <toy> section)",
            read: Some(read_weight),
        }],
        default_mode: false,
        records_others: false,
        check: ModeOptions::no_check,
    },
    open,
    natives: Vec::new,
    capabilities: |_| Ok(()),
    probes: Registration::no_probes,
};

fn read_weight(key: &str, value: Option<&str>) -> Result<options::Value, OptionError> {
    let v = value.unwrap_or("1");
    v.parse()
        .map(options::Value::Number)
        .map_err(|_| options::bad_value(key, v, "a whole number"))
}

/// What the toy keeps for the JVM's lifetime: the host's state of this type.
#[derive(Default)]
struct Lifetime {
    collections: AtomicU64,
}

impl Listener for Lifetime {
    fn gc_start(&self) {
        self.collections.fetch_add(1, Relaxed);
    }
}

/// What the toy keeps per thread.
struct Ticks(Cell<u64>);

impl ThreadValue for Ticks {}

struct Toy {
    life: &'static Lifetime,
    weight: u64,
}

fn open(cx: &Cx) -> Result<Box<dyn Mode>, AgentError> {
    let life = cx.host.state::<Lifetime>();
    cx.host.events.subscribe(life, &[Kind::GcStart]);
    let weight = cx.options.number("toy").unwrap_or(1) as u64;
    Ok(Box::new(Toy { life, weight }))
}

impl Mode for Toy {
    fn start(&self, cx: &Cx) -> Result<(), AgentError> {
        cx.host.want(self.life, Kind::GcStart, true)
    }

    fn stop(&self) {}

    fn snapshot(&self, _cx: &Cx) -> Result<Box<dyn Capture + '_>, AgentError> {
        Ok(Box::new(Captured {
            collections: self.life.collections.load(Relaxed),
            weight: self.weight,
        }))
    }
}

struct Captured {
    collections: u64,
    weight: u64,
}

/// One tree on the first thread: `gc()` with `collected` (own) under
/// `run()`.
impl Capture for Captured {
    fn sections(
        self: Box<Self>,
        _: &[std::sync::Arc<ThreadRecord>],
        _: (u64, u64),
    ) -> Vec<Section> {
        let n = self.collections * self.weight;
        let mut tree = ThreadTree::new(Some(ThreadId(0)), vec![0, n]);
        tree.push(0, 1, &[0, n]);
        tree.push(1, 2, &[n, n]);
        let trees = CallTrees {
            period: None,
            weights: vec![
                Weight::own("collected", Unit::Count),
                Weight::total("collected", Unit::Count),
            ],
            frames: vec![Frame::method("p.Toy.run()"), Frame::method("p.Toy.gc()")],
            threads: vec![tree],
        };
        vec![Section {
            name: "toy",
            extra: true,
            attributes: vec![("weight", Value::Number(self.weight))],
            parts: vec![Part::Trees(trees)],
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mode_in_one_file_runs_through_the_core() {
        // Its options, beside the agent's (a registry's one line: a mode
        // asks for nothing else of the parser).
        let modes = [&REGISTRATION.options];
        let o = crate::options::Options::parse(Some("toy=3,depth=64"), &modes).unwrap();
        assert!(o.given("toy") && o.any_mode() && o.depth == 64);
        assert_eq!(o.number("toy"), Some(3));
        let e = crate::options::Options::parse(Some("toy=x"), &modes).unwrap_err();
        assert!(e.0.starts_with("bad value for toy: 'x'") && e.0.contains("toy[=N]"));
        assert!(crate::options::Options::help_text(&modes).contains("the <toy> section"));

        // Its lasting state, and the events it listens to.
        let states = States::default();
        let life = states.get::<Lifetime>();
        let events = Events::default();
        events.subscribe(life, &[Kind::GcStart]);
        events.gc_start();
        events.gc_start();
        events.gc_finish(); // not subscribed
        assert_eq!(life.collections.load(Relaxed), 2);

        // Its per-thread value, in the thread's record.
        let tick = || {
            per_thread::with(
                || Some(Held::Own(Box::new(Ticks(Cell::new(0))))),
                |t| t.0.replace(t.0.get() + 1),
            )
        };
        assert_eq!((tick(), tick()), (Some(0), Some(1)));

        // Its section, written by the XML writer without a layout of its own.
        let captured = Box::new(Captured {
            collections: life.collections.load(Relaxed),
            weight: o.number("toy").unwrap_or(1) as u64,
        });
        let threads = [ThreadRecord::named("main")];
        let shared = crate::threads::shared(&threads);
        let text = crate::xml::to_text(&threads, (0, 10), captured.sections(&shared, (0, 10)));
        assert_eq!(
            text,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
 <toy weight="3">
  <thread name="main" cpuTime="7" elapsedTime="10" isAlive="true">
   <profile name="p.Toy.run()" collected="0" cumulatedCollected="6">
    <profile name="p.Toy.gc()" collected="6" cumulatedCollected="6"/>
   </profile>
  </thread>
 </toy>
</doc>
"#
        );
    }
}
