//! The `<lock>` section's `<monitorDump>`: threads with their states and
//! stacks, monitors with owners and waiters, deadlock cycles.

use super::{Attrs, Open, Parser, RawError};
use crate::snapshot::{DumpMonitor, DumpThread, MonitorDump};
use profrj_format::lock::dump as f;
use quick_xml::events::BytesStart;

/// The dump element an element opens in.
#[derive(Clone, Copy)]
pub(super) enum DumpParent {
    Dump,
    Thread,
    Monitor,
    Deadlock,
}

impl Parser {
    fn dump(&mut self) -> &mut MonitorDump {
        self.snap.monitor_dump.as_mut().expect("opened")
    }

    fn id(&self, a: &Attrs, key: &str) -> Result<u64, RawError> {
        self.number(a, key)?
            .ok_or_else(|| self.err(format!("<{}> lacks the attribute {key}", a.tag)))
    }

    pub(super) fn dump_element(
        &mut self,
        parent: DumpParent,
        tag: &str,
        e: &BytesStart,
    ) -> Result<Open, RawError> {
        let a = self.attrs(e)?;
        Ok(match (parent, tag) {
            (DumpParent::Dump, f::THREAD) => {
                let t = DumpThread {
                    id: self.id(&a, f::ID)?,
                    name: self.required(&a, f::NAME)?,
                    state: self.required(&a, f::STATE)?,
                    monitor: self.number(&a, f::WAITS_FOR)?,
                    frames: Vec::new(),
                };
                self.dump().threads.push(t);
                Open::DumpThread
            }
            (DumpParent::Dump, f::MONITOR) => {
                let m = DumpMonitor {
                    id: self.id(&a, f::ID)?,
                    lock: a.get(f::LOCK).as_deref() == Some(profrj_format::TRUE),
                    class: self.required(&a, f::CLASS)?,
                    hash: a.get(f::HASH),
                    owner: self.number(&a, f::OWNER)?,
                    entry_count: self.number(&a, f::ENTRY_COUNT)?.unwrap_or(0),
                    waiting: Vec::new(),
                    notify: Vec::new(),
                };
                self.dump().monitors.push(m);
                Open::DumpMonitor
            }
            (DumpParent::Dump, f::DEADLOCK) => {
                self.dump().deadlocks.push(Vec::new());
                Open::Deadlock
            }
            (DumpParent::Thread, f::FRAME) => {
                let name = self.required(&a, f::NAME)?;
                let t = self.dump().threads.last_mut().expect("open");
                t.frames.push(name);
                Open::DumpLeaf
            }
            (DumpParent::Monitor, f::WAITING | f::NOTIFY) => {
                let id = self.id(&a, f::THREAD_ID)?;
                let m = self.dump().monitors.last_mut().expect("open");
                if tag == f::WAITING {
                    m.waiting.push(id);
                } else {
                    m.notify.push(id);
                }
                Open::DumpLeaf
            }
            (DumpParent::Deadlock, f::WAITING) => {
                let id = self.id(&a, f::THREAD_ID)?;
                self.dump().deadlocks.last_mut().expect("open").push(id);
                Open::DumpLeaf
            }
            _ => {
                let inside = String::from_utf8_lossy(&self.stack.last().expect("some").1);
                return Err(self.err(format!("unexpected <{tag}> inside <{inside}>")));
            }
        })
    }
}
