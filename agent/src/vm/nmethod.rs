//! What the signal handler needs to know of a compiled method and JVMTI's
//! CompiledMethodLoad does not say: the size of its frame (to step from
//! its frame to its caller's) and its tier (C1 or C2). Read once, when the
//! event arrives, never in the handler: from the nmethod, which HotSpot
//! lays out just before the method's code in the code cache, at the
//! offsets VMStructs exports.
//!
//! The nmethod is found by looking back from the code's first byte for the
//! one object whose `CodeBlob` fields agree with the event: its code begins
//! at that byte (`_code_begin` up to JDK 22, `_code_offset` from the blob
//! since JDK 23), its size covers the code, its frame size and tier are
//! plausible and, where VMStructs names it, its `Method*` is the one behind
//! the event's jmethodID. Anything short of that: nothing is known, and the
//! handler types no frame of that code.

use super::hotspot::{read_own, struct_offset};
use jni_sys::jmethodID;
use std::sync::OnceLock;

/// Where a code blob says its code begins.
#[derive(Clone, Copy, Debug)]
enum CodeField {
    /// `CodeBlob::_code_begin`: the address (JDK 11 to 22).
    Begin(usize),
    /// `CodeBlob::_code_offset`: an `int`, from the blob (JDK 23 on).
    Offset(usize),
}

/// VMStructs' offsets of the fields read.
#[derive(Clone, Copy, Debug)]
struct Layout {
    code: CodeField,
    /// `CodeBlob::_size`: the blob's bytes, header included (`int`).
    size: usize,
    /// `CodeBlob::_frame_size`: the frame's words (`int`).
    frame_size: usize,
    /// `nmethod::_comp_level`: 1 to 3 C1, 4 C2, 0 none (a native
    /// method's wrapper); an `int` or a one-byte enum, read as its low byte.
    comp_level: usize,
    /// `CompiledMethod::_method` / `nmethod::_method` (`Method*`).
    method: Option<usize>,
    /// One past the last byte of the fields above.
    end: usize,
}

static LAYOUT: OnceLock<Option<Layout>> = OnceLock::new();

fn layout() -> Option<Layout> {
    let field = |types: &[&str], name: &str| struct_offset(types, name).map(|o| o as usize);
    let blob = ["CodeBlob"];
    let code = field(&blob, "_code_begin")
        .map(CodeField::Begin)
        .or_else(|| field(&blob, "_code_offset").map(CodeField::Offset))?;
    let size = field(&blob, "_size")?;
    let frame_size = field(&blob, "_frame_size")?;
    let comp_level = field(&["nmethod"], "_comp_level")?;
    let method = field(&["CompiledMethod", "nmethod"], "_method");
    let code_end = match code {
        CodeField::Begin(o) => o + 8,
        CodeField::Offset(o) => o + 4,
    };
    let end = [code_end, size + 4, frame_size + 4, comp_level + 1]
        .into_iter()
        .chain(method.map(|m| m + 8))
        .max()?;
    // The fields of one object's header: a few hundred bytes at most.
    (end < 4096).then_some(Layout {
        code,
        size,
        frame_size,
        comp_level,
        method,
        end,
    })
}

/// A compiled method's frame size and tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompiledInfo {
    /// Its frame's size in words, the return address and saved rbp included.
    pub frame_words: u32,
    /// `nmethod::_comp_level` (0: a native method's wrapper).
    pub level: u8,
    /// Whether a method of this code is inlined into itself (directly or
    /// through others) somewhere in it, from the event's inline records
    /// ([`inlined_into_itself`]); None when the VM gave none.
    pub inlined_into_itself: Option<bool>,
}

/// How far before its code an nmethod's start is looked for: its header and
/// relocations (a few KiB even for a large method).
const MAX_BACK: usize = 64 << 10;
const PAGE: usize = 4096;
/// The largest frame believed (words): C2's frames are a few hundred.
const MAX_FRAME_WORDS: u32 = 1 << 16;

/// What the nmethod of `method`'s code at `code..code + len` says, if it is
/// found (see the module's comment). Not for the signal handler: it
/// allocates and makes system calls.
pub fn info(method: jmethodID, code: usize, len: usize) -> Option<CompiledInfo> {
    let l = LAYOUT.get_or_init(layout).as_ref().copied()?;
    if !cfg!(target_arch = "x86_64") || !code.is_multiple_of(8) || method.is_null() {
        return None;
    }
    let want_method = match l.method {
        Some(_) => Some(read_own(method as u64)? as usize),
        None => None,
    };
    let code_end = code.checked_add(len)?;
    // Memory below `code`, read a page at a time downwards: `buf[i]` is the
    // byte at `code - MAX_BACK + i`, valid from `lo` on.
    let base = code.checked_sub(MAX_BACK)?;
    let mut buf = vec![0u8; MAX_BACK];
    let mut lo = MAX_BACK;
    let mut next_candidate = (code - l.end) & !7;
    while lo > 0 {
        let from = lo.saturating_sub(PAGE);
        if !read_bytes(base + from, &mut buf[from..lo]) {
            return None;
        }
        lo = from;
        let read = |at: usize, n: usize| -> Option<&[u8]> {
            let i = at.checked_sub(base)?;
            (i >= lo && i + n <= MAX_BACK).then(|| &buf[i..i + n])
        };
        let i32_at = |at: usize| read(at, 4).map(|b| i32::from_le_bytes(b.try_into().unwrap()));
        let u64_at = |at: usize| read(at, 8).map(|b| u64::from_le_bytes(b.try_into().unwrap()));
        while next_candidate >= base + lo {
            let p = next_candidate;
            next_candidate -= 8;
            let begins = match l.code {
                CodeField::Begin(o) => u64_at(p + o) == Some(code as u64),
                CodeField::Offset(o) => i32_at(p + o) == Some((code - p) as i32),
            };
            if !begins {
                continue;
            }
            let covers = i32_at(p + l.size).is_some_and(|s| s > 0 && p + s as usize >= code_end);
            let words = i32_at(p + l.frame_size).unwrap_or(-1);
            let level = read(p + l.comp_level, 1).map_or(u8::MAX, |b| b[0]);
            let same_method = match (l.method, want_method) {
                (Some(o), Some(m)) => u64_at(p + o) == Some(m as u64),
                _ => true,
            };
            if covers && (2..MAX_FRAME_WORDS as i32).contains(&words) && level <= 4 && same_method {
                return Some(CompiledInfo {
                    frame_words: words as u32,
                    level,
                    inlined_into_itself: None,
                });
            }
        }
    }
    None
}

/// Copies this process's memory at `from` into `out`; false where it is not
/// readable (the kernel checks, so nothing faults).
fn read_bytes(from: usize, out: &mut [u8]) -> bool {
    let local = libc::iovec {
        iov_base: out.as_mut_ptr().cast(),
        iov_len: out.len(),
    };
    let remote = libc::iovec {
        iov_base: from as *mut std::ffi::c_void,
        iov_len: out.len(),
    };
    // SAFETY: the kernel writes at most `out.len()` bytes into `out`, ours,
    // and checks `from` itself (EFAULT where unmapped).
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    n == out.len() as isize
}

/// `jvmtiCompiledMethodLoadRecordHeader`'s kind of an inline record.
const JVMTI_CMLR_INLINE_INFO: i32 = 2;
/// The most records, pcs and scopes per pc read (far above HotSpot's).
const MAX_RECORDS: usize = 16;
const MAX_PCS: i32 = 1 << 20;
const MAX_SCOPES: i32 = 1 << 10;

/// Whether any pc of a compiled method has one method twice in its chain
/// of scopes (a method inlined into itself, directly or through others),
/// from CompiledMethodLoad's `compile_info` (`jvmticmlr.h`'s records:
/// header `kind` at 0 and `next` at 16; an inline record's `numpcs` at 24
/// and `pcinfo` at 32; a `PCStackInfo` of 32 bytes with `numstackframes`
/// at 8 and `methods` at 16). None without an inline record.
///
/// # Safety
/// `compile_info` is null or the `compile_info` of the CompiledMethodLoad
/// event being handled (valid during the callback).
pub unsafe fn inlined_into_itself(compile_info: *const std::ffi::c_void) -> Option<bool> {
    let mut record = compile_info as *const u8;
    for _ in 0..MAX_RECORDS {
        if record.is_null() {
            return None;
        }
        // SAFETY: a record of the event's list (the caller's promise), laid
        // out as `jvmticmlr.h` says (above); an inline record's arrays hold
        // `numpcs` and `numstackframes` entries.
        unsafe {
            if *(record as *const i32) == JVMTI_CMLR_INLINE_INFO {
                let numpcs = *(record.add(24) as *const i32);
                let pcinfo = *(record.add(32) as *const *const u8);
                if pcinfo.is_null() || !(0..=MAX_PCS).contains(&numpcs) {
                    return None;
                }
                for p in 0..numpcs as usize {
                    let info = pcinfo.add(32 * p);
                    let n = *(info.add(8) as *const i32);
                    let methods = *(info.add(16) as *const *const usize);
                    if methods.is_null() || !(0..=MAX_SCOPES).contains(&n) {
                        return None;
                    }
                    let chain = std::slice::from_raw_parts(methods, n as usize);
                    if chain
                        .iter()
                        .enumerate()
                        .any(|(i, m)| chain[..i].contains(m))
                    {
                        return Some(true);
                    }
                }
                return Some(false);
            }
            record = *(record.add(16) as *const *const u8);
        }
    }
    None
}
