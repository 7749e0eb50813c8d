//! `coverage` as a [`Mode`]. Its counters are inserted by the instrumenter
//! and count whenever instrumented code runs; a snapshot reads them.

use super::Counts;
use crate::modes::{Cx, Mode, Registration, Section};
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use std::io;

/// `coverage`: every line in scope counted by probes the rewriter inserts.
pub const REGISTRATION: Registration = Registration {
    name: "coverage",
    wanted: |o| o.coverage,
    open,
    natives: || super::natives().to_vec(),
    capabilities: crate::instrument::capabilities,
};

/// The session's view of the JVM-lifetime counters.
struct Coverage(&'static super::Lifetime);

pub fn open(cx: &Cx) -> Result<Box<dyn Mode>, String> {
    cx.host.coverage.fix_stripes(cx.options.stripes);
    Ok(Box::new(Coverage(cx.host.coverage)))
}

impl Mode for Coverage {
    fn start(&self, _cx: &Cx) -> Result<(), String> {
        Ok(())
    }

    fn stop(&self) {}

    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Section + '_>, String> {
        Ok(Box::new(Captured(self.0.counts(cx.jni))))
    }
}

struct Captured(Counts);

impl Section for Captured {
    fn write(&self, w: &mut XmlWriter, _: &[ThreadRecord], _: (u64, u64)) -> io::Result<()> {
        super::write_section(w, &self.0)
    }
}
