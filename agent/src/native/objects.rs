//! The objects loaded in the process (the executable, libjvm.so, libc, JNI
//! libraries), from `dl_iterate_phdr` on the sampler thread: where each one's
//! code is mapped, its load bias and its file. The loader's counters of
//! objects added and removed tell, in one call that stops at the first
//! object, whether anything changed since the last look.

use std::ffi::{c_int, c_void, CStr};
use std::path::PathBuf;

/// One loaded object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// Its file (the executable's from /proc/self/exe); None for one with
    /// no file (the vDSO).
    pub path: Option<PathBuf>,
    /// The short name frames carry (`libjvm.so`).
    pub name: String,
    /// Run-time address minus file address.
    pub bias: usize,
    /// Its executable segments, run-time addresses.
    pub code: Vec<(usize, usize)>,
}

impl Loaded {
    /// libjvm.so: its frames are the VM's own (`vm`), the others `native`.
    pub fn is_jvm(&self) -> bool {
        self.name == "libjvm.so"
    }
}

const PT_LOAD: u32 = 1;
const PF_X: u32 = 1;

/// The loader's (objects added, objects removed) counts now.
pub fn generation() -> (u64, u64) {
    let mut counts = (0u64, 0u64);
    // SAFETY: the callback gets the loader's info for one object and our
    // `counts`, a live local, and stops the iteration at once (returns 1).
    unsafe { libc::dl_iterate_phdr(Some(first_counts), (&mut counts as *mut (u64, u64)).cast()) };
    counts
}

/// # Safety
/// Only as `dl_iterate_phdr`'s callback from [`generation`].
unsafe extern "C" fn first_counts(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: the loader's info for this call and `generation`'s local.
    unsafe {
        let counts = &mut *(data as *mut (u64, u64));
        *counts = ((*info).dlpi_adds, (*info).dlpi_subs);
    }
    1
}

/// Every object loaded now, with code.
pub fn loaded() -> Vec<Loaded> {
    let mut out: Vec<Loaded> = Vec::new();
    // SAFETY: the callback reads the loader's info for each object and
    // pushes onto `out`, a live local; it never unwinds (no panic path:
    // pushes and copies only).
    unsafe { libc::dl_iterate_phdr(Some(each_object), (&mut out as *mut Vec<Loaded>).cast()) };
    out
}

/// # Safety
/// Only as `dl_iterate_phdr`'s callback from [`loaded`].
unsafe extern "C" fn each_object(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: the loader's info for this object, valid during the call,
    // and `loaded`'s vector.
    let (info, out) = unsafe { (&*info, &mut *(data as *mut Vec<Loaded>)) };
    let bias = info.dlpi_addr as usize;
    let headers: &[libc::Elf64_Phdr] = if info.dlpi_phdr.is_null() {
        &[]
    } else {
        // SAFETY: the loader's program headers of this object, `dlpi_phnum` of them.
        unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) }
    };
    let code: Vec<(usize, usize)> = headers
        .iter()
        .filter(|h| h.p_type == PT_LOAD && h.p_flags & PF_X != 0)
        .map(|h| {
            let start = bias.wrapping_add(h.p_vaddr as usize);
            (start, start.wrapping_add(h.p_memsz as usize))
        })
        .collect();
    if code.is_empty() {
        return 0;
    }
    let raw = if info.dlpi_name.is_null() {
        String::new()
    } else {
        // SAFETY: the loader's NUL-terminated name of this object.
        unsafe { CStr::from_ptr(info.dlpi_name) }
            .to_string_lossy()
            .into_owned()
    };
    let path = if raw.is_empty() {
        // The executable (the first object) has no name here.
        out.is_empty()
            .then(|| std::fs::read_link("/proc/self/exe").ok())
            .flatten()
    } else if raw.starts_with('/') {
        Some(PathBuf::from(&raw))
    } else {
        None // linux-vdso.so.1: no file
    };
    let name = match &path {
        Some(p) => p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        None if raw.is_empty() => "[unknown]".to_owned(),
        None => raw,
    };
    out.push(Loaded {
        path,
        name,
        bias,
        code,
    });
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_its_executable_and_libc_with_code() {
        let all = loaded();
        let exe = std::env::current_exe().unwrap();
        let here = all.iter().find(|o| o.path.as_ref() == Some(&exe));
        let here = here.expect("the executable is listed");
        let f = this_process_has_its_executable_and_libc_with_code as *const () as usize;
        assert!(here.code.iter().any(|&(s, e)| s <= f && f < e));
        assert!(all.iter().any(|o| o.name.starts_with("libc.so")));
        assert!(!all.iter().any(|o| o.is_jvm()));
        let (adds, _) = generation();
        assert!(adds >= all.len() as u64);
    }
}
