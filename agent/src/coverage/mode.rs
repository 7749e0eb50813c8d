//! `coverage` as a [`Mode`]. Its counters are inserted by the instrumenter
//! and count whenever instrumented code runs; a snapshot reads them.

use super::{Counts, Lifetime};
use crate::error::AgentError;
use crate::instrument::Probes;
use crate::mode::{Capture, Cx, Mode, Registration};
use crate::model::Section;
use crate::threads::ThreadRecord;

/// `coverage`: every line in scope counted by probes the rewriter inserts.
pub const REGISTRATION: Registration = Registration {
    name: "coverage",
    wanted: |o| o.coverage,
    open,
    natives: || super::natives().to_vec(),
    capabilities: |caps| Ok(crate::instrument::capabilities(caps)?),
    probes: |o| Probes {
        coverage: true,
        derive_lines: o.derive,
        ..Probes::NONE
    },
};

/// The session's view of the JVM-lifetime counters.
struct Coverage(&'static Lifetime);

fn open(cx: &Cx) -> Result<Box<dyn Mode>, AgentError> {
    let life = cx.host.state::<Lifetime>();
    life.fix_stripes(cx.options.stripes);
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
    fn sections(self: Box<Self>, _: &[ThreadRecord], _: (u64, u64)) -> Vec<Section> {
        vec![super::model::section(&self.0)]
    }
}
