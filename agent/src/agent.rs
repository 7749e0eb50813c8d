//! The agent's lifecycle: options and capabilities at load, work from VMInit,
//! the final snapshot at VMDeath. Entry points in `entry.rs` call in here.

use crate::options::Options;
use crate::sampler::{self, Sampler};
use crate::threads::Threads;
use crate::vm::sys::{Capability, JvmtiCapabilities};
use crate::vm::{jthread, Jni, Jvmti, JvmtiEvent};
use crate::{clock, entry, log, snapshot};
use jni_sys::JavaVM;
use std::sync::OnceLock;

pub struct Agent {
    pub jvmti: Jvmti,
    pub options: Options,
    pub threads: Threads,
    /// CLOCK_MONOTONIC ns when the agent loaded: the start of threads older than it.
    pub start_ns: u64,
    pub sampler: Option<Sampler>,
}

static AGENT: OnceLock<Agent> = OnceLock::new();

pub fn get() -> Option<&'static Agent> {
    AGENT.get()
}

/// Agent_OnLoad: everything that can fail on a user's mistake fails here, with
/// a message, so the JVM does not start with a profiler that ignores its options.
pub fn on_load(vm: *mut JavaVM, options: Option<&str>) -> Result<(), String> {
    let options = Options::parse(options).map_err(|e| e.to_string())?;
    if options.help {
        eprint!("{}", Options::help_text());
    }
    if !options.any_mode() {
        log::info("no mode selected (only 'help'); not profiling");
        return Ok(());
    }
    let jvmti = Jvmti::from_vm(vm)
        .map_err(|rc| format!("this JVM offers no JVMTI 1.2 environment (GetEnv returned {rc})"))?;

    let wanted = JvmtiCapabilities::default()
        .with(Capability::TagObjects)
        .with(Capability::GetThreadCpuTime);
    let potential = jvmti
        .potential_capabilities()
        .map_err(|e| jvmti.error_name(e))?;
    for cap in [Capability::TagObjects, Capability::GetThreadCpuTime] {
        if !potential.has(cap) {
            return Err(format!(
                "this JVM does not offer the JVMTI capability {cap:?}, which profrj needs"
            ));
        }
    }
    jvmti
        .add_capabilities(&wanted)
        .map_err(|e| format!("AddCapabilities: {}", jvmti.error_name(e)))?;

    let path = snapshot::expand_path(&options.file, std::process::id(), snapshot::unix_now());
    if let Some(why) = snapshot::check_writable(&path) {
        log::warn(&format!(
            "{why}; profiling continues, the snapshot will be tried again when written"
        ));
    }

    let sampler = options
        .sampling
        .then(|| Sampler::new(options.interval, options.depth));
    let agent = Agent {
        jvmti,
        options,
        threads: Threads::default(),
        start_ns: clock::now_ns(),
        sampler,
    };
    if AGENT.set(agent).is_err() {
        return Err("the agent is already loaded in this JVM".into());
    }

    jvmti
        .set_event_callbacks(&entry::callbacks())
        .map_err(|e| format!("SetEventCallbacks: {}", jvmti.error_name(e)))?;
    for ev in [
        JvmtiEvent::VM_INIT,
        JvmtiEvent::VM_DEATH,
        JvmtiEvent::THREAD_START,
        JvmtiEvent::THREAD_END,
    ] {
        jvmti
            .set_event_enabled(ev, true)
            .map_err(|e| format!("enabling event {}: {}", ev.0, jvmti.error_name(e)))?;
    }
    Ok(())
}

impl Agent {
    pub fn on_vm_init(&self, jni: &Jni, thread: jthread) {
        self.threads
            .identify(self.jvmti, jni, thread, self.start_ns);
        if let Some(s) = &self.sampler {
            if let Err(e) = s.start(self.jvmti, jni, entry::sampler_thread) {
                log::error(&format!(
                    "cannot start the sampler thread: {e}; sampling is off"
                ));
            }
        }
    }

    pub fn on_thread_start(&self, jni: &Jni, thread: jthread) {
        self.threads
            .identify(self.jvmti, jni, thread, clock::now_ns());
    }

    pub fn on_thread_end(&self, jni: &Jni, thread: jthread) {
        self.threads
            .thread_ended(self.jvmti, jni, thread, self.start_ns);
    }

    pub fn run_sampler(&self, jni: &Jni) {
        if let Some(s) = &self.sampler {
            s.run(self.jvmti, jni, &self.threads, self.start_ns);
        }
    }

    pub fn on_vm_death(&self, jni: &Jni) {
        if let Some(s) = &self.sampler {
            s.stop();
            log::info(&s.cost_summary());
        }
        self.dump(jni);
    }

    /// Writes a snapshot now. Failure is reported and profiling goes on.
    pub fn dump(&self, jni: &Jni) {
        let path =
            snapshot::expand_path(&self.options.file, std::process::id(), snapshot::unix_now());
        let refs = self.threads.count() as i32 * 3 + 64;
        jni.with_local_frame(refs, || {
            self.threads.refresh_live(self.jvmti, jni, self.start_ns)
        });
        let records = self.threads.records();
        let now = clock::now_ns();
        let result = snapshot::write_document(&path, |w| {
            if let Some(s) = &self.sampler {
                s.with_data(|d| sampler::write_section(w, d, &records, now))?;
            }
            Ok(())
        });
        match result {
            Ok(()) => log::info(&format!(
                "snapshot written to {} ({} threads)",
                path.display(),
                records.len()
            )),
            Err(e) => log::error(&format!("cannot write snapshot to {}: {e}", path.display())),
        }
    }
}
