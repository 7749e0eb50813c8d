//! `profrj report --style xprof`: a `<sampler>` snapshot as HotSpot's
//! `-Xprof` flat profile (JDK 1.3 to 9): per Java thread, its ticks by
//! method in sections by how the method ran (interpreted, compiled, a
//! `native` method, a runtime stub), then the thread-local ticks that no
//! method holds; at the end a global summary over every thread, the JVM's
//! own (GC, compiler, VM thread) included. Each section adds up, and the
//! sections add up to the thread's ticks, as in -Xprof (`flat.rs` builds
//! them, `text.rs` lays them out as -Xprof did).

mod flat;
mod text;

use crate::error::CliError;
use crate::snapshot::{CallKind, CallThread, JvmThread, Snapshot};
use flat::{flat_profile, Flat};

/// The global summary's figures: every thread's samples, by who took them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub received: u64,
    pub java: u64,
    pub gc: u64,
    pub compiler: u64,
    pub vm: u64,
    pub other: u64,
    /// The longest a thread lived while sampled, ns (None: no thread says).
    pub elapsed_ns: Option<u64>,
}

/// The report: flat profiles of the Java threads (or of the threads named
/// `thread`, the JVM's too), `top` rows per section at most, then the
/// global summary of all threads.
pub fn xprof_report(snap: &Snapshot, thread: Option<&str>, top: usize) -> Result<String, CliError> {
    let sec = snap.call_section(Some(CallKind::Sampler))?;
    let elapsed = sec
        .desc()
        .slot(profrj_format::sampler::node::ELAPSED)
        .expect("the sampler's nodes count elapsed");
    if thread.is_some() {
        // The threads of that name, or an error that lists the names.
        sec.select(thread)?;
    }
    let shown = |t: &CallThread| match thread {
        Some(name) => t.name == name,
        None => t.jvm_thread.is_none(),
    };
    let mut summary = Summary::default();
    let mut typed = false;
    // Each profile is laid out as soon as it is built: what is held is
    // the text (at most `top` rows a section), not every thread's rows.
    let mut profiles = String::new();
    for t in &sec.threads {
        let flat = flat_profile(&snap.names, t, elapsed)?;
        check_sums(t, &flat)?;
        typed |= flat.typed;
        add_to_summary(&mut summary, t, flat.total);
        if flat.total > 0 && shown(t) {
            text::flat_profile(&mut profiles, &snap.names, t, &flat, top);
        }
    }
    let parts = [
        summary.java,
        summary.gc,
        summary.compiler,
        summary.vm,
        summary.other,
    ];
    if parts.iter().fold(0u64, |a, &b| a.saturating_add(b)) != summary.received {
        return Err(CliError::Input(
            "the global summary's rows do not add up to the received ticks (a bug in profrj's \
             xprof report)"
                .into(),
        ));
    }
    let mut out = String::new();
    if !typed {
        text::untyped_note(&mut out);
    }
    out.push_str(&profiles);
    text::global_summary(&mut out, &summary);
    Ok(out)
}

/// The buckets hold every sample once: a failure here is a bug in
/// `flat.rs`, said rather than printed as if whole.
fn check_sums(t: &CallThread, flat: &Flat) -> Result<(), CliError> {
    let held = flat.bucket_sum();
    if held != flat.total {
        return Err(CliError::Input(format!(
            "thread {:?}: the flat profile's sections hold {held} ticks of {} (a bug in profrj's \
             xprof report)",
            crate::report::shown(&t.name),
            flat.total
        )));
    }
    Ok(())
}

fn add_to_summary(s: &mut Summary, t: &CallThread, ticks: u64) {
    s.received = s.received.saturating_add(ticks);
    let slot = match t.jvm_thread {
        None => &mut s.java,
        Some(JvmThread::Gc) => &mut s.gc,
        Some(JvmThread::Compiler) => &mut s.compiler,
        Some(JvmThread::Vm) => &mut s.vm,
        Some(JvmThread::Other) => &mut s.other,
    };
    *slot = slot.saturating_add(ticks);
    if let Some(ns) = t.elapsed_time {
        s.elapsed_ns = Some(s.elapsed_ns.map_or(ns, |e| e.max(ns)));
    }
}
