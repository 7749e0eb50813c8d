//! What a thread of the JVM itself (no Java thread: a GC worker, a JIT
//! compiler thread, the VM thread) does, told from its OS name, the
//! 15-byte `/proc/self/task/TID/comm` HotSpot sets with
//! `pthread_setname_np`. The rule, by prefix of that name (docs/SNAPSHOT.md
//! lists the names per JDK and collector):
//! - gc: `GC Thread#` (G1's workers on JDK 11 to 25, Parallel's on 17 to
//!   25), `ParGC Thread#` (Parallel's on JDK 11), `G1 ` (G1's marker,
//!   refiners, service, JDK 11's remembered-set sampler), `Shenandoah`
//!   (`Shenandoah GC T`, `Shenandoah Cont`, JDK 11's `ShenandoahContr`),
//!   ZGC's `Z` or (JDK 21's non-generational ZGC) `X` then `Director`,
//!   `Driver`, `Stat`, `Uncommitter`, `Unmapper` or `Worker` (`ZWorker#0`,
//!   `ZWorkerYoung#0`, `ZDriverMajor`, `XWorker#0`…), and `RuntimeWorker`
//!   (ZGC's runtime workers). Serial GC has no thread of its own: it
//!   collects on the VM thread, so its work counts as `vm`.
//! - compiler: `C1 CompilerThre`, `C2 CompilerThre`, `JVMCI` (Graal's
//!   compiler threads), `Sweeper thread` (the code cache sweeper, JDK 11/17).
//! - vm: `VM Thread` (safepoint operations, and Serial GC).
//! - other: anything else (`VM Periodic Tas`, `Service Thread`, `Monitor
//!   Deflati`, the launcher's `java`, a native library's threads).

/// One of `profrj_format::sampler::thread::JVM_THREAD_KINDS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JvmKind {
    Gc,
    Compiler,
    Vm,
    Other,
}

impl JvmKind {
    /// The `jvmThread` attribute's value.
    pub fn name(self) -> &'static str {
        let [gc, compiler, vm, other] = profrj_format::sampler::thread::JVM_THREAD_KINDS;
        match self {
            JvmKind::Gc => gc,
            JvmKind::Compiler => compiler,
            JvmKind::Vm => vm,
            JvmKind::Other => other,
        }
    }

    /// The synthetic root frame of this kind's samples: one node per kind,
    /// so a flame graph of all threads shows the GC's share as one bar
    /// (the thread's own name is on its `<thread>`). A native stack, once
    /// walked, goes above it.
    pub fn root_frame(self) -> &'static str {
        match self {
            JvmKind::Gc => "[jvm_gc]",
            JvmKind::Compiler => "[jvm_compiler]",
            JvmKind::Vm => "[jvm_vm]",
            JvmKind::Other => "[jvm_other]",
        }
    }

    /// The kind of a JVM thread whose OS name is `comm` (see the module's rule).
    pub fn of(comm: &str) -> JvmKind {
        const GC: [&str; 5] = ["GC Thread", "ParGC", "G1 ", "Shenandoah", "RuntimeWorker"];
        const ZGC: [&str; 6] = [
            "Director",
            "Driver",
            "Stat",
            "Uncommitter",
            "Unmapper",
            "Worker",
        ];
        const COMPILER: [&str; 4] = [
            "C1 CompilerThre",
            "C2 CompilerThre",
            "JVMCI",
            "Sweeper thread",
        ];
        let zgc = (comm.strip_prefix('Z').or_else(|| comm.strip_prefix('X')))
            .is_some_and(|rest| ZGC.iter().any(|p| rest.starts_with(p)));
        if zgc || GC.iter().any(|p| comm.starts_with(p)) {
            JvmKind::Gc
        } else if COMPILER.iter().any(|p| comm.starts_with(p)) {
            JvmKind::Compiler
        } else if comm == "VM Thread" {
            JvmKind::Vm
        } else {
            JvmKind::Other
        }
    }
}

/// The agent's own threads are all named `profrj …` (`profrj sampler`,
/// `profrj control`, `profrj memory`, `profrj jfr writer`…): they are not
/// the JVM's, and are not sampled (their cost is the exit summary's).
pub fn is_agents(comm: &str) -> bool {
    comm.starts_with("profrj ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names as HotSpot's `comm` has them (15 bytes), seen on JDK 11.0.13,
    /// 17.0.15, 21.0.8 and 25.0.2 with G1, Parallel, Serial, ZGC (21 and 25
    /// generational too) and Shenandoah.
    #[test]
    fn names_of_each_jdk_and_collector_get_their_kind() {
        let cases = [
            ("GC Thread#0", JvmKind::Gc),
            ("GC Thread#11", JvmKind::Gc),
            ("ParGC Thread#0", JvmKind::Gc),
            ("G1 Main Marker", JvmKind::Gc),
            ("G1 Conc#0", JvmKind::Gc),
            ("G1 Refine#0", JvmKind::Gc),
            ("G1 Service", JvmKind::Gc),
            ("G1 Young RemSet", JvmKind::Gc),
            ("ZDirector", JvmKind::Gc),
            ("ZDriverMajor", JvmKind::Gc),
            ("ZWorkerYoung#0", JvmKind::Gc),
            ("ZUncommitter#0", JvmKind::Gc),
            ("ZUnmapper", JvmKind::Gc),
            ("ZStat", JvmKind::Gc),
            ("XWorker#0", JvmKind::Gc),
            ("XDriver", JvmKind::Gc),
            ("RuntimeWorker#0", JvmKind::Gc),
            ("Shenandoah Cont", JvmKind::Gc),
            ("Shenandoah GC T", JvmKind::Gc),
            ("ShenandoahContr", JvmKind::Gc),
            ("C2 CompilerThre", JvmKind::Compiler),
            ("C1 CompilerThre", JvmKind::Compiler),
            ("JVMCI-native Co", JvmKind::Compiler),
            ("Sweeper thread", JvmKind::Compiler),
            ("VM Thread", JvmKind::Vm),
            ("VM Periodic Tas", JvmKind::Other),
            ("Service Thread", JvmKind::Other),
            ("Monitor Deflati", JvmKind::Other),
            ("java", JvmKind::Other),
            ("Zebra", JvmKind::Other),
            ("Xorg", JvmKind::Other),
            ("", JvmKind::Other),
        ];
        for (name, kind) in cases {
            assert_eq!(JvmKind::of(name), kind, "{name:?}");
        }
    }

    #[test]
    fn kinds_are_the_formats_words_and_the_agents_threads_are_told_apart() {
        let all = [JvmKind::Gc, JvmKind::Compiler, JvmKind::Vm, JvmKind::Other];
        let names: Vec<_> = all.iter().map(|k| k.name()).collect();
        assert_eq!(names, profrj_format::sampler::thread::JVM_THREAD_KINDS);
        assert!(is_agents("profrj sampler") && is_agents("profrj jfr writ"));
        assert!(!is_agents("profrjish") && !is_agents("GC Thread#0"));
    }
}
