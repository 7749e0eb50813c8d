//! HPROF's MONITOR DUMP from a `<lock>` section's `<monitorDump>`: each
//! thread's state and top frames, each monitor's owner and waiters, then
//! the deadlocks (cycles of threads waiting for each other).

use crate::snapshot::MonitorDump;
use std::fmt::Write as _;

/// Frames shown per thread.
const FRAMES: usize = 8;

pub fn monitor_dump_report(dump: &MonitorDump) -> String {
    let name = |id: u64| {
        dump.threads.iter().find(|t| t.id == id).map_or_else(
            || format!("thread {id}"),
            |t| format!("thread {id} {:?}", t.name),
        )
    };
    let list = |ids: &[u64]| ids.iter().map(|&i| name(i)).collect::<Vec<_>>().join(", ");
    let mut out = String::from(
        "MONITOR DUMP BEGIN (status: R runnable, S suspended, CW waiting for a condition or parked, MW waiting to enter a monitor; LOCK: a java.util.concurrent lock)\n",
    );
    for t in &dump.threads {
        let _ = write!(out, "    THREAD {} {:?}, status: {}", t.id, t.name, t.state);
        if let Some(m) = t
            .monitor
            .and_then(|m| dump.monitors.iter().find(|x| x.id == m))
        {
            let _ = write!(out, ", on {}", monitor_name(m));
        }
        out.push('\n');
        for f in t.frames.iter().take(FRAMES) {
            let _ = writeln!(out, "\tat {}", super::shown(f));
        }
        if t.frames.len() > FRAMES {
            let _ = writeln!(out, "\t... {} more", t.frames.len() - FRAMES);
        }
    }
    for m in &dump.monitors {
        let kind = if m.lock { "LOCK" } else { "MONITOR" };
        let _ = write!(out, "    {kind} {}", monitor_name(m));
        match m.owner {
            Some(o) if m.lock => {
                let _ = writeln!(out, "\n\towner: {}", name(o));
            }
            Some(o) => {
                let _ = writeln!(
                    out,
                    "\n\towner: {}, entry count: {}",
                    name(o),
                    m.entry_count
                );
            }
            None => out.push_str(" unowned\n"),
        }
        if !m.waiting.is_empty() {
            let _ = writeln!(out, "\twaiting to enter: {}", list(&m.waiting));
        }
        if !m.notify.is_empty() {
            let _ = writeln!(out, "\twaiting to be notified: {}", list(&m.notify));
        }
    }
    for cycle in &dump.deadlocks {
        let mut chain: Vec<String> = cycle.iter().map(|&i| name(i)).collect();
        if let Some(first) = chain.first().cloned() {
            chain.push(first);
        }
        let _ = writeln!(
            out,
            "    DEADLOCK: {} (each waits for a monitor or lock the next one owns)",
            chain.join(" -> ")
        );
    }
    out.push_str("MONITOR DUMP END\n");
    out
}

/// `class@hash`, as `Object.toString` prints it.
fn monitor_name(m: &crate::snapshot::DumpMonitor) -> String {
    match &m.hash {
        Some(h) => format!("{}@{h}", super::shown(&m.class)),
        None => format!("{} (monitor {})", super::shown(&m.class), m.id),
    }
}
