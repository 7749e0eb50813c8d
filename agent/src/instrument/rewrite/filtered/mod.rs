//! What JaCoCo's filters inside a method (its
//! `org.jacoco.core.internal.analysis.filter` package, 0.8.6) leave out of
//! its report or count as one, told from the code as loaded: the snapshot
//! names it (`<filtered>`) so that `convert --to jacoco` counts a method as
//! JaCoCo does, while the other formats and `report` keep every
//! instruction and branch.
//!
//! - [`matchers`]: the code JaCoCo ignores — javac's `switch` on a
//!   `String`, javac 11+'s try-with-resources, a `synchronized` block's
//!   handler.
//! - [`finally`]: the copies javac makes of a `finally` block, which
//!   JaCoCo merges into one (FinallyFilter).
//!
//! Not reproduced: javac 7–10's try-with-resources
//! (TryWithResourcesJavacFilter) and ecj's forms; `@Generated` code is a
//! method filter (`rewrite::generated`).

mod finally;
mod matchers;

use super::super::JacocoFilters;
use super::add_insn;
use profrj_bytecode::code::Code;
use profrj_bytecode::edit::{line_at, BranchCounts, InsnBlock};
use profrj_bytecode::ConstantPool;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A method's code and what the coverage plan made of it.
pub(super) struct Method<'a, 'c, 'p> {
    pub code: &'a Code<'c>,
    pub cp: &'a ConstantPool<'p>,
    /// The line table (`line_table`).
    pub table: &'a [(u32, u16)],
    /// The plan's runs of instructions and branching instructions.
    pub blocks: &'a [InsnBlock],
    pub branches: &'a [BranchCounts],
}

/// What JaCoCo's filters inside `m` leave out or merge.
pub(super) fn jacoco_filters(m: &Method<'_, '_, '_>) -> JacocoFilters {
    let mut ignored = matchers::ignored(m.code, m.cp);
    let merges = finally::merges(m.code);
    if ignored.is_empty() && merges.ignored.is_empty() && merges.counted_as.is_empty() {
        return JacocoFilters::default();
    }
    if ignored.is_empty() {
        ignored = vec![false; m.code.insns.len()];
    }
    for &(from, to) in &merges.ignored {
        let to = to.min(ignored.len().saturating_sub(1));
        if let Some(range) = ignored.get_mut(from..=to) {
            range.fill(true);
        }
    }
    let is_ignored = |i: u32| ignored.get(i as usize).copied().unwrap_or(false);
    let counted_as = |i: u32| merges.counted_as.get(i as usize).copied().unwrap_or(i);
    let mut run_of = vec![0u32; m.code.insns.len()];
    for (k, b) in m.blocks.iter().enumerate() {
        if let Some(run) = run_of.get_mut(b.start as usize..b.end as usize) {
            run.fill(k as u32);
        }
    }
    let line = |i: u32| line_at(m.table, i);

    // Merged sets by representative, members in code order. JaCoCo counts
    // a set as its representative, covered when any member ran; a set
    // whose representative another filter ignores is ignored whole.
    let mut sets: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for i in 0..m.code.insns.len() as u32 {
        let root = counted_as(i);
        if root != i && !is_ignored(root) {
            sets.entry(root).or_insert_with(|| vec![root]).push(i);
        }
    }
    // A set on one line: all but one left out, the one kept ran when any
    // did — which one is decided per snapshot (`MethodLines::
    // instruction_counts`). A set over several lines (none in javac's code
    // seen) keeps its representative as it ran, the others left out.
    let mut out = JacocoFilters::default();
    let mut one_line: HashSet<u32> = HashSet::new();
    for (&root, members) in &sets {
        let Some(at) = line(root) else { continue };
        if members.iter().all(|&i| line(i) == Some(at)) {
            one_line.insert(root);
            let runs: Vec<u32> = members.iter().map(|&i| run_of[i as usize]).collect();
            match out.copies.last_mut() {
                Some(last) if last.0 == at && last.2 == runs => last.1 += 1,
                _ => out.copies.push((at, 1, runs)),
            }
        }
    }
    for (i, &run) in run_of.iter().enumerate() {
        let i = i as u32;
        let Some(at) = line(i) else { continue };
        let root = counted_as(i);
        let dropped = match sets.contains_key(&root) {
            true => root != i && !one_line.contains(&root),
            false => is_ignored(root) || is_ignored(i),
        };
        if dropped {
            add_insn(&mut out.insns, at, run);
        }
    }

    let branch_at: HashMap<u32, u32> = (m.branches.iter().enumerate())
        .map(|(k, b)| (b.at, k as u32))
        .collect();
    for (k, b) in m.branches.iter().enumerate() {
        let k = k as u32;
        let root = counted_as(b.at);
        if is_ignored(root) || root != b.at || (is_ignored(b.at) && !sets.contains_key(&root)) {
            out.branches.push(k);
        }
        if root != b.at && sets.contains_key(&root) {
            if let Some(&j) = branch_at.get(&root) {
                out.merged_branches.push((k, j));
            }
        }
    }
    out
}
