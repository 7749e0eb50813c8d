//! Kernel frames' names (`kernel=on`): the text symbols of
//! `/proc/kallsyms`, read once, the first time a kernel frame is named.
//! Where the kernel hides its addresses (`kptr_restrict`, no privilege) they
//! read as zero and every kernel frame is `[kernel]`.

use std::io::BufRead;
use std::sync::OnceLock;

/// Lowest kernel address on x86-64 (the upper half of the address space).
const KERNEL_START: usize = 0xffff_8000_0000_0000;

/// Names longer than this are cut (a module's symbol with its `[module]`).
const MAX_NAME: usize = 256;

/// Is `pc` a kernel address?
pub fn is_kernel(pc: usize) -> bool {
    pc >= KERNEL_START
}

/// Text symbols, sorted by address: (address, its name's range in `names`).
struct Table {
    starts: Vec<(u64, u32, u32)>,
    names: String,
}

static TABLE: OnceLock<Table> = OnceLock::new();

fn read_table() -> Table {
    let mut t = Table {
        starts: Vec::new(),
        names: String::new(),
    };
    let Ok(file) = std::fs::File::open("/proc/kallsyms") else {
        return t;
    };
    for line in std::io::BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        let mut parts = line.split_whitespace();
        let (Some(addr), Some(kind), Some(name)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr, 16) else {
            continue;
        };
        if addr == 0 || !matches!(kind, "t" | "T" | "w" | "W") {
            continue;
        }
        let from = t.names.len() as u32;
        t.names.push_str(&name[..name.len().min(MAX_NAME)]);
        t.starts.push((addr, from, t.names.len() as u32));
    }
    t.starts.sort_unstable_by_key(|r| r.0);
    t
}

/// The kernel function holding `pc`, or `[kernel]`.
pub fn frame_name(pc: usize) -> String {
    let t = TABLE.get_or_init(read_table);
    let i = t.starts.partition_point(|s| s.0 <= pc as u64);
    match i.checked_sub(1) {
        Some(i) => {
            let (_, from, end) = t.starts[i];
            t.names[from as usize..end as usize].to_owned()
        }
        None => "[kernel]".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_addresses_are_the_upper_half() {
        assert!(is_kernel(0xffff_ffff_8100_0000));
        assert!(!is_kernel(0x7fff_ffff_f000));
    }

    /// Where kallsyms shows addresses, a known system call's entry is named
    /// by its own address; where it hides them, every frame is `[kernel]`.
    #[test]
    fn a_symbol_s_address_names_it() {
        let t = TABLE.get_or_init(read_table);
        let Some(&(addr, _, _)) = t.starts.get(t.starts.len() / 2) else {
            assert_eq!(frame_name(0xffff_ffff_8100_0000), "[kernel]");
            return;
        };
        let name = frame_name(addr as usize);
        assert!(!name.is_empty() && !name.contains(' '), "{name}");
        assert_eq!(frame_name(addr as usize + 1), name);
    }
}
