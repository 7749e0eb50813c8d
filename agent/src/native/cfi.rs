//! `cstack=dwarf`'s rules: an object's `.eh_frame` call frame information
//! (parsed with gimli, on the sampler thread, when the object is first seen)
//! turned into a compact sorted table the handler searches without
//! allocating: from each address on, where the caller's frame (the CFA) is,
//! relative to rsp or rbp, and where rbp was saved. The return address is
//! at CFA - 8 on x86-64 (a rule that says otherwise makes a row with no rule).

use gimli::{
    BaseAddresses, CfaRule, CieOrFde, EhFrame, LittleEndian, RegisterRule, UnwindContext,
    UnwindSection, X86_64,
};

/// How a row finds the CFA.
pub const CFA_NONE: u8 = 0;
pub const CFA_SP: u8 = 1;
pub const CFA_FP: u8 = 2;

/// From `pc` (a run-time address) to the next row's: the caller's frame
/// (CFA) is `cfa_reg` + `cfa_off`; rbp was saved at CFA + `fp_off` (0: rbp
/// is unchanged in this code). `CFA_NONE`: no rule (between functions, or a
/// rule too rich for the handler, such as a DWARF expression).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub pc: usize,
    pub cfa_off: i32,
    pub fp_off: i16,
    pub cfa_reg: u8,
}

// 16 bytes a row: libjvm's .eh_frame makes about 200,000.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Row>() == 16);

impl Row {
    fn none(pc: usize) -> Row {
        Row {
            pc,
            cfa_off: 0,
            fp_off: 0,
            cfa_reg: CFA_NONE,
        }
    }

    fn same_rule(&self, other: &Row) -> bool {
        (self.cfa_off, self.fp_off, self.cfa_reg) == (other.cfa_off, other.fp_off, other.cfa_reg)
    }
}

/// The rows of `.eh_frame` (`bytes`, at `addr` in the file's address
/// space), addresses moved by `bias` (the object's load bias), sorted by pc.
/// A malformed entry ends the parse with the rows read so far.
pub fn table(bytes: &[u8], addr: u64, text: u64, bias: usize) -> Vec<Row> {
    let eh = EhFrame::new(bytes, LittleEndian);
    let bases = BaseAddresses::default()
        .set_eh_frame(addr.wrapping_add(bias as u64))
        .set_text(text.wrapping_add(bias as u64));
    let mut ctx = Box::new(UnwindContext::new());
    let mut rows = Vec::new();
    let mut entries = eh.entries(&bases);
    while let Ok(Some(entry)) = entries.next() {
        let CieOrFde::Fde(partial) = entry else {
            continue;
        };
        let Ok(fde) = partial.parse(EhFrame::cie_from_offset) else {
            continue;
        };
        let Ok(mut unwind) = fde.rows(&eh, &bases, &mut ctx) else {
            continue;
        };
        while let Ok(Some(r)) = unwind.next_row() {
            rows.push(row(r.start_address() as usize, r.cfa(), |reg| {
                r.register(reg)
            }));
        }
        rows.push(Row::none(fde.end_address() as usize));
    }
    compact(rows)
}

fn row<T: gimli::ReaderOffset>(
    pc: usize,
    cfa: &CfaRule<T>,
    rule: impl Fn(gimli::Register) -> RegisterRule<T>,
) -> Row {
    let (cfa_reg, cfa_off) = match *cfa {
        CfaRule::RegisterAndOffset { register, offset } if register == X86_64::RSP => {
            (CFA_SP, offset)
        }
        CfaRule::RegisterAndOffset { register, offset } if register == X86_64::RBP => {
            (CFA_FP, offset)
        }
        _ => return Row::none(pc),
    };
    if !matches!(rule(X86_64::RA), RegisterRule::Offset(-8)) {
        return Row::none(pc);
    }
    let fp_off = match rule(X86_64::RBP) {
        RegisterRule::Offset(o) => o,
        _ => 0,
    };
    match (i32::try_from(cfa_off), i16::try_from(fp_off)) {
        (Ok(cfa_off), Ok(fp_off)) => Row {
            pc,
            cfa_off,
            fp_off,
            cfa_reg,
        },
        _ => Row::none(pc),
    }
}

/// Sorted by pc, one row per pc (a function's first row wins over the
/// no-rule row that ends the function before it), runs of the same rule
/// merged.
fn compact(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by_key(|r| (r.pc, r.cfa_reg != CFA_NONE));
    rows.dedup_by(|later, kept| {
        let same_pc = later.pc == kept.pc;
        if same_pc {
            *kept = *later;
        }
        same_pc
    });
    rows.dedup_by(|later, kept| later.same_rule(kept));
    rows.shrink_to_fit();
    rows
}

/// The row that covers `pc`, if any has a rule there.
pub fn lookup(rows: &[Row], pc: usize) -> Option<&Row> {
    let i = rows.partition_point(|r| r.pc <= pc).checked_sub(1)?;
    rows.get(i).filter(|r| r.cfa_reg != CFA_NONE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_merge_and_function_starts_win_over_ends() {
        let r = |pc, reg, off| Row {
            pc,
            cfa_off: off,
            fp_off: 0,
            cfa_reg: reg,
        };
        let rows = compact(vec![
            r(0x100, CFA_SP, 8),
            r(0x101, CFA_SP, 16),
            r(0x110, CFA_SP, 16), // same rule as the row before: merged
            Row::none(0x120),     // end of the first function...
            r(0x120, CFA_SP, 8),  // ...where the next one starts
            Row::none(0x130),
        ]);
        assert_eq!(
            rows,
            vec![
                r(0x100, CFA_SP, 8),
                r(0x101, CFA_SP, 16),
                r(0x120, CFA_SP, 8),
                Row::none(0x130)
            ]
        );
        assert_eq!(lookup(&rows, 0xff), None);
        assert_eq!(lookup(&rows, 0x100).unwrap().cfa_off, 8);
        assert_eq!(lookup(&rows, 0x11f).unwrap().cfa_off, 16);
        assert_eq!(lookup(&rows, 0x125).unwrap().cfa_off, 8);
        assert_eq!(lookup(&rows, 0x130), None);
    }

    /// This test binary's own `.eh_frame`: every function entry has the
    /// return address on top of the stack (CFA = rsp + 8).
    #[test]
    fn the_test_binary_s_functions_start_with_cfa_at_rsp_plus_8() {
        let exe = std::env::current_exe().unwrap();
        let parts = super::super::elf::read(&exe, true).unwrap();
        let (addr, bytes) = parts.eh_frame.unwrap();
        let rows = table(&bytes, addr, parts.text, 0);
        assert!(rows.len() > 1000, "{} rows", rows.len());
        let mut checked = 0;
        for s in parts.symbols.iter().filter(|s| s.size > 0).take(500) {
            if let Some(r) = lookup(&rows, s.addr as usize) {
                assert_eq!((r.cfa_reg, r.cfa_off), (CFA_SP, 8), "{}", s.name);
                checked += 1;
            }
        }
        assert!(checked > 100, "{checked} functions with CFI");
    }
}
