//! A debugging record of the walks that still fail, for finding out where
//! the thread was (`PROFRJ_WALK_DEBUG=1` in the JVM's environment; off by
//! default). The handler keeps the first [`SLOTS`] failures' registers,
//! thread state and anchor in preallocated atomics; at exit they are
//! grouped and printed as `profrj: walk-debug:` lines on stderr, each code
//! address named by its code blob or as `library+offset` (resolve the
//! offset with `nm` on that library: scripts/walk-debug does).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Failures kept; later ones are only counted.
const SLOTS: usize = 4096;

/// What one failure keeps, as words.
#[derive(Clone, Copy, Debug, Default)]
pub struct Failure {
    /// AsyncGetCallTrace's answer (the last one, after any recovery).
    pub code: i64,
    /// `JavaThread::_thread_state`, or -1 if unknown.
    pub state: i64,
    /// The interrupted registers.
    pub pc: usize,
    pub sp: usize,
    pub fp: usize,
    /// The word on top of the interrupted stack (a return address in a
    /// frameless stub or at a call's first instruction).
    pub top_word: usize,
    /// The thread's last Java frame as its anchor has it.
    pub anchor_sp: usize,
    pub anchor_pc: usize,
    pub anchor_fp: usize,
    /// The word just below the anchor's sp (the return address into the
    /// anchor's frame when the VM was called from there).
    pub below_anchor: usize,
    /// The caller of the anchor's stub, as the unwinder finds it (0: none).
    pub stub_caller_pc: usize,
    pub stub_caller_sp: usize,
}

const WORDS: usize = 12;

static ON: AtomicBool = AtomicBool::new(false);
static NEXT: AtomicUsize = AtomicUsize::new(0);
/// Slots fully written (a reader at exit takes only these).
static DONE: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
static KEPT: [[AtomicU64; WORDS]; SLOTS] = [const { [const { AtomicU64::new(0) }; WORDS] }; SLOTS];

/// Reads `PROFRJ_WALK_DEBUG` (once, on the sampler's side: never in the
/// handler).
pub fn configure() {
    let on = std::env::var_os("PROFRJ_WALK_DEBUG").is_some_and(|v| !v.is_empty() && v != "0");
    ON.store(on, Ordering::Release);
}

pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Keeps `f`. Async-signal-safe: atomics only.
pub fn keep(f: Failure) {
    let i = NEXT.fetch_add(1, Ordering::Relaxed);
    let Some(slot) = KEPT.get(i) else {
        return;
    };
    let words = [
        f.code as u64,
        f.state as u64,
        f.pc as u64,
        f.sp as u64,
        f.fp as u64,
        f.top_word as u64,
        f.anchor_sp as u64,
        f.anchor_pc as u64,
        f.below_anchor as u64,
        f.stub_caller_pc as u64,
        f.stub_caller_sp as u64,
        f.anchor_fp as u64,
    ];
    for (w, v) in slot.iter().zip(words) {
        w.store(v, Ordering::Relaxed);
    }
    if let Some(d) = DONE.get(i) {
        d.store(true, Ordering::Release);
    }
}

fn kept() -> Vec<Failure> {
    let n = NEXT.load(Ordering::Relaxed).min(SLOTS);
    (0..n)
        .filter(|&i| DONE[i].load(Ordering::Acquire))
        .map(|i| {
            let w: Vec<u64> = KEPT[i].iter().map(|a| a.load(Ordering::Relaxed)).collect();
            Failure {
                code: w[0] as i64,
                state: w[1] as i64,
                pc: w[2] as usize,
                sp: w[3] as usize,
                fp: w[4] as usize,
                top_word: w[5] as usize,
                anchor_sp: w[6] as usize,
                anchor_pc: w[7] as usize,
                below_anchor: w[8] as usize,
                stub_caller_pc: w[9] as usize,
                stub_caller_sp: w[10] as usize,
                anchor_fp: w[11] as usize,
            }
        })
        .collect()
}

/// Where `pc` is: a code blob's name, `compiled`, the code cache, or
/// `library+offset`.
fn place(pc: usize) -> String {
    use crate::code_map::{self, Code};
    if pc == 0 {
        return "0".to_owned();
    }
    match code_map::find(pc) {
        Some(b) => match b.code {
            Code::Stub { name, .. } => format!(
                "stub:{}+{:#x}(@{pc:#x})",
                code_map::stub_name(name).unwrap_or_default(),
                pc - b.start
            ),
            Code::Compiled { .. } => format!("compiled+{:#x}", pc - b.start),
        },
        None if crate::vm::hotspot::in_code_cache(pc) => "code-cache:unknown".to_owned(),
        None => library_place(pc),
    }
}

fn library_place(pc: usize) -> String {
    // SAFETY: Dl_info is pointers and integers: all-zero is valid.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only looks `pc` up in the loader's tables and writes `info`, a live local.
    if unsafe { libc::dladdr(pc as *const libc::c_void, &mut info) } == 0
        || info.dli_fname.is_null()
    {
        return format!("unmapped:{pc:#x}");
    }
    // SAFETY: a non-null dli_fname is the loader's NUL-terminated file name.
    let file = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_string_lossy();
    let base = file.rsplit('/').next().unwrap_or_default().to_owned();
    format!("{base}+{:#x}", pc - info.dli_fbase as usize)
}

/// The failures kept, grouped by what the thread was in, as `profrj:`
/// lines (none when off or nothing failed).
pub fn report() {
    if !on() {
        return;
    }
    let all = kept();
    let total = NEXT.load(Ordering::Relaxed);
    crate::log::info(&format!(
        "walk-debug: {total} failed walks, {} kept",
        all.len()
    ));
    let mut groups: std::collections::BTreeMap<String, usize> = Default::default();
    for f in &all {
        let key = format!(
            "code={} state={} pc={} top={} anchor_sp={} anchor_pc={} below_anchor={} stub_caller={} at anchor_sp{:+} anchor_fp=sp{:+} stub_bytes={}",
            f.code,
            f.state,
            place(f.pc),
            if f.top_word != 0 { place(f.top_word) } else { "-".to_owned() },
            if f.anchor_sp == 0 {
                "0".to_owned()
            } else {
                format!("sp{:+}", f.anchor_sp as i64 - f.sp as i64)
            },
            place(f.anchor_pc),
            if f.below_anchor != 0 { place(f.below_anchor) } else { "-".to_owned() },
            place(f.stub_caller_pc),
            f.stub_caller_sp as i64 - f.anchor_sp as i64,
            f.anchor_fp as i64 - f.anchor_sp as i64,
            first_bytes(f.anchor_pc),
        );
        *groups.entry(key).or_default() += 1;
    }
    let mut sorted: Vec<_> = groups.into_iter().collect();
    sorted.sort_by_key(|e| std::cmp::Reverse(e.1));
    for (key, n) in sorted {
        crate::log::info(&format!("walk-debug: {n} {key}"));
    }
    // The code around each distinct interrupted pc in a stub or a compiled
    // method, still known to the code map at exit (for a disassembler:
    // `xxd -r -p | objdump -D -b binary -m i386:x86-64`).
    let mut seen = std::collections::BTreeSet::new();
    for f in &all {
        if let Some(b) = crate::code_map::find(f.pc) {
            let generated = matches!(
                b.code,
                crate::code_map::Code::Stub { .. } | crate::code_map::Code::Compiled { .. }
            );
            if seen.insert(f.pc) && generated {
                let from = f.pc.saturating_sub(0x80).max(b.start);
                let to = (f.pc + 0x20).min(b.end);
                let hex: String = (from..to)
                    // SAFETY: bytes of live code the VM reported (code cache
                    // memory, committed for the VM's life).
                    .map(|a| format!("{:02x}", unsafe { std::ptr::read_volatile(a as *const u8) }))
                    .collect();
                crate::log::info(&format!(
                    "walk-debug: code {} at pc-{:#x}: {hex}",
                    place(f.pc),
                    f.pc - from
                ));
            }
        }
    }
}

/// The first bytes of the stub holding `pc`, in hex (at exit, on the
/// sampler's side: the stub is still there).
fn first_bytes(pc: usize) -> String {
    use crate::code_map::{self, Code};
    match code_map::find(pc) {
        Some(b) if matches!(b.code, Code::Stub { .. }) => (b.start..b.end.min(b.start + 12))
            // SAFETY: bytes of a live stub the VM reported (code cache memory).
            .map(|a| format!("{:02x}", unsafe { std::ptr::read_volatile(a as *const u8) }))
            .collect(),
        _ => "-".to_owned(),
    }
}
