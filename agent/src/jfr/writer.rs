//! The recording's writer thread: every 10 ms (sooner when asked) it takes
//! the queued events and appends them to the current file's chunk. A file
//! is written under a temporary name (`.profrj-<random>.tmp`, created
//! exclusively, mode 0600) and renamed to its own once complete: a dump or
//! the VM's end writes its constant pools (the threads, stacks, methods and
//! classes its events used), the metadata and the header, so a file under
//! the recording's name is always a whole recording. The next file starts
//! with the next event.

use super::{Event, Kind, Lifetime, Request};
use crate::error::AgentError;
use crate::threads::Threads;
use crate::writer_stats::{Handle, Stats};
use profrj_format::frame_types::FrameType;
use profrj_jfr::encode::Buf;
use profrj_jfr::schema::{self, events, frame_type, Frame, Pools, ThreadEntry};
use profrj_jfr::{ChunkWriter, Start};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering::*;
use std::sync::Arc;
use std::time::Duration;

/// File `number` (from 1) of a recording named by `template`: the
/// snapshot's placeholders (`%p`, `%t`, `%n`); without `%n`, files after the
/// first get `.N` before a `.jfr` extension (`run.2.jfr`), else after the name.
pub fn file_path(template: &str, number: u32) -> PathBuf {
    let pid = std::process::id();
    let path = crate::snapshot::expand_path(template, pid, crate::snapshot::unix_now(), number);
    if number == 1 || template.contains("%n") {
        return path;
    }
    let s = path.to_string_lossy().into_owned();
    match s.strip_suffix(".jfr") {
        Some(stem) => PathBuf::from(format!("{stem}.{number}.jfr")),
        None => PathBuf::from(format!("{s}.{number}")),
    }
}

pub fn spawn(
    life: &'static Lifetime,
    threads: &'static Threads,
    template: &str,
) -> Result<Handle, AgentError> {
    if let Some(why) = crate::snapshot::check_writable(&file_path(template, 1)) {
        return Err(AgentError::Refused(format!(
            "jfr: cannot write the recording: {why}"
        )));
    }
    let stats = Arc::new(Stats::default());
    let w = Writer {
        life,
        threads,
        stats: stats.clone(),
        number: 0,
        file: None,
        batch: Vec::new(),
        used_stacks: HashMap::new(),
        used_threads: HashMap::new(),
        used_classes: HashMap::new(),
    };
    let thread = std::thread::Builder::new()
        .name("profrj jfr writer".into())
        .spawn(move || {
            // A panic here (a bug) stops the recording, not the program, and
            // nobody may wait for a writer that is gone.
            if !crate::vm::guard("jfr writer", false, move || {
                w.run();
                true
            }) {
                crate::log::error_once(
                    "jfr writer stopped",
                    "jfr: the recording stops, the program continues",
                );
                life.failed.store(true, Release);
                *life.request.lock() = Request::None;
                life.answered.notify_all();
            }
        })
        .map_err(|e| crate::error::io("jfr: cannot start the writer thread", e))?;
    Ok(Handle {
        thread: thread.thread().clone(),
        stats,
    })
}

/// The open file: its chunk under its temporary name, and its own name.
struct Open {
    chunk: ChunkWriter<BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
    start_ticks: u64,
    start_millis: u64,
}

struct Writer {
    life: &'static Lifetime,
    threads: &'static Threads,
    stats: Arc<Stats>,
    /// The current file's number (from 1).
    number: u32,
    file: Option<Open>,
    batch: Vec<Event>,
    /// What the current file's events used (keys: the agent's ids).
    used_stacks: HashMap<u32, ()>,
    used_threads: HashMap<u32, ()>,
    used_classes: HashMap<u32, ()>,
}

impl Writer {
    fn run(mut self) {
        loop {
            let request = *self.life.request.lock();
            let result = self.round(request);
            if let Err(e) = result {
                self.fail(e);
            }
            if request != Request::None {
                *self.life.request.lock() = Request::None;
                self.life.answered.notify_all();
                if request == Request::Close {
                    // Nobody may wait for a writer that is gone.
                    self.life.failed.store(true, Release);
                    return;
                }
            }
            if self.life.failed.load(Acquire) {
                self.life.shared.lock().queue.clear();
            }
            let cpu = crate::tsc::thread_cpu_ns();
            self.stats.cpu_ns.store(cpu, Relaxed);
            std::thread::park_timeout(Duration::from_millis(10));
        }
    }

    /// Opens a file if none is, writes the queued events, and ends the file
    /// when asked to.
    fn round(&mut self, request: Request) -> io::Result<()> {
        if self.life.failed.load(Acquire) {
            return Ok(());
        }
        std::mem::swap(&mut self.batch, &mut self.life.shared.lock().queue);
        let mut batch = std::mem::take(&mut self.batch);
        // A file starts with its first event; the first file also when it
        // must end with none (a recording of no events is still one). So a
        // session stopped after a dump leaves no file half made at exit.
        let first_ends = request != Request::None && self.number == 0;
        if self.file.is_none() && (!batch.is_empty() || first_ends) {
            self.open()?;
        }
        let result = batch.iter().try_for_each(|e| self.event(e));
        self.stats.events.fetch_add(batch.len() as u64, Relaxed);
        batch.clear();
        self.batch = batch;
        result?;
        if request != Request::None {
            self.finish()?;
        }
        Ok(())
    }

    fn open(&mut self) -> io::Result<()> {
        self.number += 1;
        let template = self.life.template.lock().clone();
        let path = file_path(&template, self.number);
        let (tmp, file) = crate::snapshot::create_temporary(&path, 0o600)?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let ticks = crate::clock::now_ns();
        let start = Start {
            nanos,
            ticks,
            ticks_per_second: 1_000_000_000,
        };
        let chunk = match ChunkWriter::new(BufWriter::with_capacity(1 << 16, file), start) {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(e);
            }
        };
        self.file = Some(Open {
            chunk,
            tmp,
            path,
            start_ticks: ticks,
            start_millis: nanos / 1_000_000,
        });
        self.used_stacks.clear();
        self.used_threads.clear();
        self.used_classes.clear();
        let info = self.life.info.get();
        let chunk = &mut self.file.as_mut().expect("just opened").chunk;
        if let Some(i) = info {
            chunk.event(|b| events::jvm_information(b, ticks, &i.jvm))?;
            chunk.event(|b| events::os_information(b, ticks, &i.os))?;
            chunk.event(|b| events::cpu_information(b, ticks, &i.cpu))?;
        }
        Ok(())
    }

    fn event(&mut self, e: &Event) -> io::Result<()> {
        let Some(open) = self.file.as_mut() else {
            return Ok(());
        };
        if e.stack != 0 {
            self.used_stacks.insert(e.stack, ());
        }
        self.used_threads.insert(e.thread, ());
        if e.class != 0 {
            self.used_classes.insert(e.class, ());
        }
        let (t, s, c) = (e.thread as u64, e.stack as u64, e.class as u64);
        let w = &mut open.chunk;
        match e.kind {
            Kind::Execution => {
                for _ in 0..e.a {
                    w.event(|b| events::execution_sample(b, e.time, t, s, e.state as u64))?;
                }
                Ok(())
            }
            Kind::Wall => {
                let n = e.a.min(u32::MAX as u64) as u32;
                w.event(|b| events::wall_clock_sample(b, e.time, (t, s, e.state as u64), n, 0))
            }
            Kind::Allocation => {
                w.event(|b| events::allocation_sample(b, e.time, (t, s, c), e.a, e.b))
            }
            Kind::Monitor => {
                w.event(|b| events::monitor_enter(b, (e.time, e.a), (t, s, c), 0, e.b))
            }
            Kind::Park => w.event(|b| events::thread_park(b, (e.time, e.a), (t, s, c), e.b)),
        }
    }

    /// Ends the open file: its recording event, metadata and constant
    /// pools, the header; then renames it into place.
    fn finish(&mut self) -> io::Result<()> {
        let Some(mut open) = self.file.take() else {
            return Ok(());
        };
        let result = self.end(&mut open);
        let result = result.and_then(|()| {
            let Open {
                chunk,
                tmp,
                path,
                start_ticks,
                ..
            } = open;
            let len = chunk.len();
            let duration = crate::clock::now_ns().saturating_sub(start_ticks);
            let mut out = chunk.finish(duration)?;
            out.flush()?;
            drop(out);
            std::fs::rename(&tmp, &path).inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            })?;
            self.stats.files.fetch_add(1, Relaxed);
            self.stats.bytes.fetch_add(len, Relaxed);
            crate::log::info(&format!(
                "jfr recording written to {} ({} KB)",
                path.display(),
                len / 1000
            ));
            Ok(())
        });
        result
    }

    fn end(&mut self, open: &mut Open) -> io::Result<()> {
        let now = crate::clock::now_ns();
        let info = schema::events::RecordingInfo {
            id: 1,
            name: "profrj".into(),
            destination: open.path.to_string_lossy().into_owned(),
            start_millis: open.start_millis,
            duration_millis: now.saturating_sub(open.start_ticks) / 1_000_000,
        };
        open.chunk
            .event(|b| events::active_recording(b, open.start_ticks, &info))?;
        open.chunk
            .metadata(&schema::metadata_event(open.start_ticks))?;
        let (pools, stacks) = self.pools();
        pools.write_checkpoint(&mut open.chunk, now, stacks.len() as u64, |w| {
            let mut b = Buf::new();
            for (key, truncated, frames) in &stacks {
                b.varint(*key as u64);
                schema::encode_stack(&mut b, *truncated, frames);
                if b.len() > 1 << 16 {
                    w.raw(&b.bytes)?;
                    b.clear();
                }
            }
            w.raw(&b.bytes)
        })
    }

    /// The pools of what the file used, and its stacks, copied out of the
    /// recording's tables (the hooks wait meanwhile).
    #[allow(clippy::type_complexity)]
    fn pools(&mut self) -> (Pools, Vec<(u32, bool, Vec<Frame>)>) {
        let mut pools = Pools::default();
        let records = self.threads.records();
        let mut threads: Vec<u32> = self.used_threads.keys().copied().collect();
        threads.sort_unstable();
        for t in threads {
            let r = records.get(t as usize - 1);
            pools.thread(
                t as u64,
                ThreadEntry {
                    name: r.map_or_else(|| format!("[thread {t}]"), |r| r.name.clone()),
                    os_thread_id: r.map_or(0, |r| r.tid.max(0) as u64),
                    java_thread_id: t as u64,
                },
            );
        }
        let mut shared = self.life.shared.lock();
        let tables = &mut shared.tables;
        let mut classes: Vec<u32> = self.used_classes.keys().copied().collect();
        classes.sort_unstable();
        for c in classes {
            pools.class_keyed(c as u64, &tables.classes[c as usize - 1]);
        }
        let mut methods: HashMap<u32, u64> = HashMap::new();
        let mut stacks: Vec<u32> = self.used_stacks.keys().copied().collect();
        stacks.sort_unstable();
        let mut out = Vec::with_capacity(stacks.len());
        for s in stacks {
            let (frames, truncated) = tables.frames_of(s);
            let frames: Vec<_> = frames.to_vec();
            let frames = frames
                .iter()
                .map(|f| {
                    let method = *methods.entry(f.method).or_insert_with(|| {
                        let m = &tables.methods[f.method as usize];
                        let (class, name, desc, mods) = (
                            m.class.clone(),
                            m.name.clone(),
                            m.descriptor.clone(),
                            m.modifiers,
                        );
                        let key = tables.class_internal(&class) as u64;
                        pools.class_keyed(key, &class);
                        pools.method(key, &name, &desc, mods)
                    });
                    Frame {
                        method,
                        line: f.line,
                        bci: f.bci,
                        kind: jfr_frame_type(f.native, f.kind),
                    }
                })
                .collect();
            out.push((s, truncated, frames));
        }
        (pools, out)
    }

    /// Writing failed: said once; the recording stops and the partial file
    /// is removed.
    fn fail(&mut self, e: io::Error) {
        crate::log::error_once(
            "jfr write",
            &format!(
                "jfr: cannot write the recording: {e}; recording stops, the program continues"
            ),
        );
        self.life.failed.store(true, Release);
        self.life.shared.lock().queue.clear();
        if let Some(open) = self.file.take() {
            let _ = std::fs::remove_file(&open.tmp);
        }
    }
}

/// A frame's type in JFR's terms: C1 and C2 are both `JIT compiled`; C, the
/// VM's C++ and the kernel are `Native` (the JDK's types have no other); a
/// stub's or an untyped Java frame is `Java`.
fn jfr_frame_type(native: bool, kind: Option<FrameType>) -> u64 {
    match kind {
        _ if native => frame_type::NATIVE,
        Some(FrameType::Interpreted) => frame_type::INTERPRETED,
        Some(FrameType::C1 | FrameType::C2 | FrameType::Jit) => frame_type::JIT_COMPILED,
        Some(FrameType::Inlined) => frame_type::INLINED,
        Some(FrameType::Native | FrameType::Vm | FrameType::Kernel) => frame_type::NATIVE,
        _ => frame_type::JAVA,
    }
}

#[cfg(test)]
mod tests {
    use super::file_path;
    use std::path::PathBuf;

    #[test]
    fn files_after_the_first_are_numbered_before_the_extension() {
        assert_eq!(file_path("/t/run.jfr", 1), PathBuf::from("/t/run.jfr"));
        assert_eq!(file_path("/t/run.jfr", 2), PathBuf::from("/t/run.2.jfr"));
        assert_eq!(file_path("/t/run", 3), PathBuf::from("/t/run.3"));
        assert_eq!(file_path("/t/r-%n.jfr", 2), PathBuf::from("/t/r-2.jfr"));
    }
}
