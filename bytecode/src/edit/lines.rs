//! Where line counters go (the coverage mode): one at every entry point of
//! the LineNumberTable, so a line counts once each time control arrives at
//! its code. A `for` header thus counts its initialisation and each
//! increment, and each of javac's copies of a `finally` block counts the
//! executions that took that copy.

use crate::code::{decode_code, Code, Insn};
use crate::opcodes::*;
use crate::{ClassFile, ConstantPool};

/// The counters one method needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProbes {
    /// (instruction index as read, source line), in code order. Entries that
    /// share an instruction give it several lines, each counted.
    pub points: Vec<(u32, u16)>,
    /// The method's own locals: the first index free for a new local.
    pub max_locals: u16,
    /// The first point is the method's first instruction and no jump leads
    /// there: it runs exactly once per call, so its count is the call count.
    pub first_counts_calls: bool,
}

/// The line counters of method `index`; `None` without code (abstract,
/// native) or when the code does not decode. `points` is empty for a method
/// without a LineNumberTable.
pub fn line_probes(class: &ClassFile<'_>, index: usize) -> Option<LineProbes> {
    let code = decode_code(&class.method_code(index)?.data).ok()?;
    Some(line_probes_in(&code, &class.constant_pool))
}

/// The LineNumberTable of decoded code: (instruction index as read, source
/// line), in code order (table order within one instruction), duplicates
/// dropped. Empty without a table.
pub fn line_table(code: &Code<'_>, cp: &ConstantPool<'_>) -> Vec<(u32, u16)> {
    let mut entries: Vec<(u32, u16)> = Vec::new();
    for a in code
        .attributes
        .iter()
        .filter(|a| cp.utf8(a.name_index) == Some(b"LineNumberTable"))
    {
        for e in a.data.get(2..).unwrap_or_default().chunks_exact(4) {
            let pc = u16::from_be_bytes([e[0], e[1]]) as u32;
            let line = u16::from_be_bytes([e[2], e[3]]);
            if let Some(ix) = code.index_at(pc) {
                entries.push((ix, line));
            }
        }
    }
    entries.sort_by_key(|&(ix, _)| ix); // stable: table order within one pc
    entries.dedup();
    entries
}

/// The source line of instruction `ix` in a [`line_table`]: that of the last
/// entry at or before it (the line whose code it belongs to, as a stack
/// trace names it). `None` before the first entry or without a table.
pub fn line_at(table: &[(u32, u16)], ix: u32) -> Option<u16> {
    let after = table.partition_point(|&(at, _)| at <= ix);
    after.checked_sub(1).map(|k| table[k].1)
}

/// [`line_probes`] of code already decoded.
pub fn line_probes_in(code: &Code<'_>, cp: &ConstantPool<'_>) -> LineProbes {
    let entries = line_table(code, cp);

    let mut targets = vec![false; code.insns.len() + 1];
    for &l in &code.labels {
        if let Some(t) = targets.get_mut(l as usize) {
            *t = true;
        }
    }
    // An entry continuing the line before it, reached only by falling
    // through from that line's code, adds nothing: the line is already
    // counted (other compilers than javac emit such entries).
    let mut points: Vec<(u32, u16)> = Vec::with_capacity(entries.len());
    let mut prev_line: Option<u16> = None;
    for (k, &(ix, line)) in entries.iter().enumerate() {
        let first_at_ix = k == 0 || entries[k - 1].0 != ix;
        let continues = first_at_ix
            && prev_line == Some(line)
            && ix > 0
            && !targets[ix as usize]
            && falls_through(&code.insns[ix as usize - 1]);
        if !continues {
            points.push((ix, line));
        }
        prev_line = Some(line);
    }
    let first_counts_calls = points.first().is_some_and(|p| p.0 == 0) && !targets[0];
    LineProbes {
        points,
        max_locals: code.max_locals,
        first_counts_calls,
    }
}

/// Can execution continue to the next instruction?
pub(crate) fn falls_through(insn: &Insn) -> bool {
    match insn {
        // goto, jsr, ret (control goes elsewhere); returns, athrow.
        Insn::Plain { op: WIDE, operands } => operands.as_slice().first() != Some(&RET),
        Insn::Plain { op, .. } => !matches!(*op, RET | IRETURN..=RETURN | ATHROW),
        Insn::Branch { op, .. } => !matches!(*op, GOTO | JSR | GOTO_W | JSR_W),
        Insn::TableSwitch { .. } | Insn::LookupSwitch { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::line_at;

    #[test]
    fn an_instruction_belongs_to_the_last_entry_at_or_before_it() {
        let table = [(0, 10), (4, 11), (4, 12), (9, 14)];
        assert_eq!(line_at(&table, 0), Some(10));
        assert_eq!(line_at(&table, 3), Some(10));
        assert_eq!(line_at(&table, 4), Some(12), "the table's last for one pc");
        assert_eq!(line_at(&table, 100), Some(14));
        assert_eq!(line_at(&table[1..], 2), None);
        assert_eq!(line_at(&[], 2), None);
    }
}
