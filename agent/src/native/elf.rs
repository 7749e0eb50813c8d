//! The parts of a loaded object's ELF file that native frames need: its
//! function symbols (`.symtab`, else or besides `.dynsym`) and its
//! `.eh_frame` bytes with their address. Read from the file (the object's own,
//! never a separate debug file), each read bounded: a section larger than
//! [`MAX_SECTION`] is skipped, and a file that is not a 64-bit little-endian
//! ELF gives an error, never a panic. On the sampler thread only.

use super::NativeError;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The largest section read (libjvm.so's `.symtab` is about 1.4 MB, its
/// `.eh_frame` 1.5 MB, its `.strtab` a few MB).
const MAX_SECTION: u64 = 64 << 20;
/// The most section headers read (real objects have a few dozen).
const MAX_SECTIONS: u64 = 4096;

const SHT_SYMTAB: u32 = 2;
const SHT_DYNSYM: u32 = 11;
const SHT_NOBITS: u32 = 8;
const STT_FUNC: u8 = 2;
const STT_GNU_IFUNC: u8 = 10;
const SHN_UNDEF: u16 = 0;

/// One section's header, as far as used here.
#[derive(Clone, Copy, Debug)]
struct Section {
    name: u32,
    kind: u32,
    addr: u64,
    offset: u64,
    size: u64,
    link: u32,
}

/// A function symbol: its address in the file's own address space (add the
/// object's load bias for a run-time address), its size and name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub addr: u64,
    pub size: u64,
    pub name: String,
}

/// What native frames read from one ELF file.
#[derive(Default)]
pub struct ElfParts {
    pub symbols: Vec<Symbol>,
    /// `.eh_frame`'s address (file's address space) and bytes.
    pub eh_frame: Option<(u64, Vec<u8>)>,
    /// `.text`'s address, for CFI pointers relative to it (rare).
    pub text: u64,
}

/// Reads `path`'s symbols and `.eh_frame` (when `want_cfi`).
pub fn read(path: &Path, want_cfi: bool) -> Result<ElfParts, NativeError> {
    let bad = |why: &str| NativeError::Elf(format!("{}: {why}", path.display()));
    let mut file = File::open(path).map_err(|e| bad(&e.to_string()))?;
    let len = file.metadata().map_err(|e| bad(&e.to_string()))?.len();
    let mut header = [0u8; 64];
    file.read_exact(&mut header)
        .map_err(|_| bad("shorter than an ELF header"))?;
    if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return Err(bad("not a 64-bit little-endian ELF file"));
    }
    let shoff = u64_at(&header, 0x28);
    let shentsize = u16_at(&header, 0x3a) as u64;
    let shnum = u16_at(&header, 0x3c) as u64;
    let shstrndx = u16_at(&header, 0x3e) as usize;
    if shentsize != 64 || shnum > MAX_SECTIONS || shoff.saturating_add(shnum * 64) > len {
        return Err(bad("section headers out of the file"));
    }
    let table = read_at(&mut file, shoff, shnum * 64).map_err(|e| bad(&e))?;
    let sections: Vec<Section> = table
        .chunks_exact(64)
        .map(|h| Section {
            name: u32_at(h, 0),
            kind: u32_at(h, 4),
            addr: u64_at(h, 0x10),
            offset: u64_at(h, 0x18),
            size: u64_at(h, 0x20),
            link: u32_at(h, 0x28),
        })
        .collect();
    let mut contents = |s: &Section| -> Option<Vec<u8>> {
        let fits = s.kind != SHT_NOBITS
            && s.size <= MAX_SECTION
            && s.offset.checked_add(s.size).is_some_and(|e| e <= len);
        fits.then(|| read_at(&mut file, s.offset, s.size).ok())
            .flatten()
    };
    let names = sections
        .get(shstrndx)
        .and_then(&mut contents)
        .unwrap_or_default();
    let named = |want: &str| {
        sections
            .iter()
            .find(|s| c_str(&names, s.name as usize) == Some(want))
            .copied()
    };
    let mut parts = ElfParts {
        text: named(".text").map_or(0, |s| s.addr),
        ..ElfParts::default()
    };
    if want_cfi {
        if let Some(s) = named(".eh_frame") {
            parts.eh_frame = contents(&s).map(|b| (s.addr, b));
        }
    }
    for kind in [SHT_SYMTAB, SHT_DYNSYM] {
        let Some(s) = sections.iter().find(|s| s.kind == kind).copied() else {
            continue;
        };
        let (Some(syms), Some(strings)) = (
            contents(&s),
            sections.get(s.link as usize).and_then(&mut contents),
        ) else {
            continue;
        };
        parts.symbols.extend(functions(&syms, &strings));
    }
    Ok(parts)
}

/// The defined function symbols of a symbol table.
fn functions<'a>(syms: &'a [u8], strings: &'a [u8]) -> impl Iterator<Item = Symbol> + 'a {
    syms.chunks_exact(24).filter_map(move |s| {
        let kind = s[4] & 0xf;
        let shndx = u16_at(s, 6);
        let addr = u64_at(s, 8);
        if !(kind == STT_FUNC || kind == STT_GNU_IFUNC) || shndx == SHN_UNDEF || addr == 0 {
            return None;
        }
        let name = c_str(strings, u32_at(s, 0) as usize)?;
        (!name.is_empty()).then(|| Symbol {
            addr,
            size: u64_at(s, 16),
            name: name.to_owned(),
        })
    })
}

fn read_at(file: &mut File, offset: u64, size: u64) -> Result<Vec<u8>, String> {
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; size as usize];
    file.read_exact(&mut buf).map_err(|e| e.to_string())?;
    Ok(buf)
}

/// The NUL-terminated UTF-8 string at `at` (None past the end or not UTF-8).
fn c_str(bytes: &[u8], at: usize) -> Option<&str> {
    let rest = bytes.get(at..)?;
    let end = rest.iter().position(|&b| b == 0)?;
    std::str::from_utf8(&rest[..end]).ok()
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function of this module the binary keeps whatever the optimizer
    /// inlines elsewhere: its address is taken below.
    #[inline(never)]
    fn marker() -> u32 {
        std::hint::black_box(7)
    }

    #[test]
    fn the_test_binary_has_its_own_functions_and_cfi() {
        assert_eq!(std::hint::black_box(marker as fn() -> u32)(), 7);
        let exe = std::env::current_exe().unwrap();
        let parts = read(&exe, true).unwrap();
        assert!(parts.symbols.iter().any(|s| s.name.contains("elf5tests")));
        let (addr, bytes) = parts.eh_frame.expect(".eh_frame");
        assert!(addr > 0 && !bytes.is_empty());
    }

    #[test]
    fn a_file_that_is_not_elf_is_one_error() {
        let dir = std::env::temp_dir().join(format!("profrj-elf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("not.so");
        for content in [&b""[..], b"\x7fELF", &[0x7f; 200][..]] {
            std::fs::write(&p, content).unwrap();
            let e = read(&p, true).err().expect("an error");
            assert!(e.to_string().contains("not.so"), "{e}");
        }
        // A header pointing its section table past the end.
        let mut h = vec![0u8; 64];
        h[..6].copy_from_slice(b"\x7fELF\x02\x01");
        h[0x28..0x30].copy_from_slice(&1_000_000u64.to_le_bytes());
        h[0x3a] = 64;
        h[0x3c] = 3;
        std::fs::write(&p, &h).unwrap();
        assert!(read(&p, true).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
