//! JaCoCo's FinallyFilter (0.8.6): javac copies a `finally` block to every
//! exit of its `try` and `catch` blocks and once more into the catch-all
//! handler (`astore t; …copy…; aload t; athrow`). JaCoCo counts the copies
//! as one: each instruction of an exit's copy is merged into the handler's
//! (the representative, covered when any copy ran it, each branch outcome
//! taken when any copy took it), the handler's `astore`, `aload` and
//! `athrow` are ignored, and so is the `goto` after an exit's copy.
//!
//! Reproduced step by step over the instructions alone (ASM's labels,
//! frames and line entries, which JaCoCo's `next` skips, are not in the
//! list): the copies are told apart by opcodes only, as JaCoCo tells them.
//! A crafted method whose catch-all regions and copies would take more
//! than [`BUDGET`] steps is left unmerged (JaCoCo would go on; javac's
//! largest methods take a few thousand).

use super::matchers::{asm_op, local};
use profrj_bytecode::code::{Code, Insn, Label};
use profrj_bytecode::opcodes::*;
use std::collections::HashMap;

/// Steps (instructions walked or compared) a method may take.
const BUDGET: usize = 1 << 22;

/// What the filter decides for a method.
#[derive(Debug, Default)]
pub(super) struct Merges {
    /// Instructions ignored: `(first, last)`, inclusive.
    pub ignored: Vec<(usize, usize)>,
    /// Per instruction, the one it counts as (itself when not merged);
    /// empty when nothing is merged.
    pub counted_as: Vec<u32>,
}

/// The merges and ignores of every `finally` block of `code`.
pub(super) fn merges(code: &Code<'_>) -> Merges {
    let mut f = Filter {
        code,
        out: Merges::default(),
        steps: 0,
    };
    if f.run().is_none() {
        return Merges::default();
    }
    // Every instruction pointing at its representative.
    let parent = &mut f.out.counted_as;
    for i in 0..parent.len() as u32 {
        find(parent, i);
    }
    f.out
}

struct Filter<'c> {
    code: &'c Code<'c>,
    /// Its `counted_as` is, until the end, a union-find over the
    /// instructions, JaCoCo's: a merged instruction points at one of its
    /// set, the representative at itself.
    out: Merges,
    steps: usize,
}

impl Filter<'_> {
    /// `None` when the budget ran out.
    fn run(&mut self) -> Option<()> {
        let code = self.code;
        let at = |l: Label| code.labels[l.0 as usize] as usize;
        // Each handler's regions, and the handlers of each region.
        let mut regions: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
        let mut by_region: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
        for (k, t) in code.handlers.iter().enumerate() {
            let region = (at(t.start), at(t.end));
            regions.entry(at(t.handler)).or_default().push(region);
            by_region.entry(region).or_default().push(k);
        }
        // The copy's size in each handler seen.
        let mut sizes: HashMap<usize, usize> = HashMap::new();
        for (k, any) in code.handlers.iter().enumerate() {
            if any.catch_type != 0 {
                continue;
            }
            let e = at(any.handler);
            let regions = &regions[&e];
            // Every region of this handler, and their exits: the same for
            // each of its entries, so walked once (JaCoCo walks them again
            // for each, merging what it had merged).
            let size = match sizes.get(&e) {
                Some(&size) => size,
                None => {
                    let size = self.size(e)?;
                    sizes.insert(e, size);
                    if size > 0 {
                        self.exits(regions, e, size)?;
                    }
                    size
                }
            };
            if size == 0 {
                continue;
            }
            // javac's empty catch: another handler of the same region,
            // merged after its `astore`.
            for &j in &by_region[&(at(any.start), at(any.end))] {
                self.step(1)?;
                if j == k {
                    continue;
                }
                let i = at(code.handlers[j].handler) + 1;
                if !self.inside(regions, i)? {
                    self.merge(size, e, i)?;
                }
            }
        }
        Some(())
    }

    /// Merges the copy at each exit of `regions`, the handler at `e`'s.
    fn exits(&mut self, regions: &[(usize, usize)], e: usize, size: usize) -> Option<()> {
        let code = self.code;
        for &(start, end) in regions {
            let mut continues = false;
            for i in start..end.min(code.insns.len()) {
                self.step(1)?;
                continues = match &code.insns[i] {
                    Insn::Branch { op, target } => {
                        let target = code.labels[target.0 as usize] as usize;
                        if !self.inside(regions, target)? {
                            self.merge(size, e, target)?;
                        }
                        !matches!(*op, GOTO | GOTO_W)
                    }
                    insn => !matches!(
                        asm_op(insn),
                        Some(IRETURN | LRETURN | FRETURN | DRETURN | ARETURN | RETURN | ATHROW)
                    ),
                };
            }
            if continues && !self.inside(regions, end)? {
                self.merge(size, e, end)?;
            }
        }
        Some(())
    }

    /// Whether instruction `i` is in one of `regions` (JaCoCo's `inside`).
    fn inside(&mut self, regions: &[(usize, usize)], i: usize) -> Option<bool> {
        self.step(regions.len())?;
        Some(
            regions
                .iter()
                .any(|&(start, end)| (start..end).contains(&i)),
        )
    }

    /// The instructions of the copy in the handler at `e`: 0 unless it is
    /// `astore t; …; aload t; athrow`.
    fn size(&mut self, e: usize) -> Option<usize> {
        let insns = &self.code.insns;
        let Some(store) = insns.get(e) else {
            return Some(0);
        };
        if asm_op(store) != Some(ASTORE) {
            return Some(0);
        }
        let var = local(store);
        let mut i = e + 1;
        loop {
            self.step(1)?;
            let Some(insn) = insns.get(i) else {
                return Some(0);
            };
            if asm_op(insn) == Some(ALOAD) && local(insn) == var {
                break;
            }
            i += 1;
        }
        Some(match insns.get(i + 1).and_then(asm_op) {
            Some(ATHROW) => i - e - 1,
            _ => 0,
        })
    }

    /// The copy at `n` merged into the handler's at `e`, if it is one.
    fn merge(&mut self, size: usize, e: usize, n: usize) -> Option<()> {
        self.step(size)?;
        let insns = &self.code.insns;
        let same = (0..size).all(|k| match (insns.get(e + 1 + k), insns.get(n + k)) {
            (Some(a), Some(b)) => asm_op(a) == asm_op(b),
            _ => false,
        });
        if !same {
            return Some(());
        }
        self.out.ignored.push((e, e));
        for k in 0..size {
            self.union(e + 1 + k, n + k);
        }
        let after = e + 1 + size;
        self.out.ignored.push((after, after + 1));
        let end = n + size;
        if insns.get(end).and_then(asm_op) == Some(GOTO) {
            self.out.ignored.push((end, end));
        }
        Some(())
    }

    /// JaCoCo's `merge(i1, i2)`: `i2`'s set joins `i1`'s.
    fn union(&mut self, i1: usize, i2: usize) {
        let parent = &mut self.out.counted_as;
        if parent.is_empty() {
            *parent = (0..self.code.insns.len() as u32).collect();
        }
        let (r1, r2) = (find(parent, i1 as u32), find(parent, i2 as u32));
        if r1 != r2 {
            parent[r2 as usize] = r1;
        }
    }

    fn step(&mut self, n: usize) -> Option<()> {
        self.steps += n;
        (self.steps <= BUDGET).then_some(())
    }
}

/// The representative of `i`'s set; every instruction on the way then
/// points at it (which changes no set's representative).
fn find(parent: &mut [u32], i: u32) -> u32 {
    let mut root = i;
    while let Some(&p) = parent.get(root as usize) {
        if p == root {
            break;
        }
        root = p;
    }
    let mut at = i;
    while let Some(p) = parent.get_mut(at as usize) {
        if *p == root {
            break;
        }
        at = std::mem::replace(p, root);
    }
    root
}

#[cfg(test)]
mod tests {
    use super::*;
    use profrj_bytecode::code::Handler;

    /// `try { 1 } finally { 0 }` as javac writes it: the region (0..2),
    /// the exit's copy (2, 3) and its `goto`, the handler (5: `astore`,
    /// the copy at 6 and 7, `aload`, `athrow`), and the `return`. Labels:
    /// 0 the region's start, 1 its end, 2 the handler, 3 the return.
    fn javac_like(handlers: Vec<Handler>) -> Code<'static> {
        let p = Insn::plain;
        Code {
            max_stack: 1,
            max_locals: 2,
            insns: vec![
                p(ICONST_1, &[]),
                p(POP, &[]),
                p(ICONST_0, &[]),
                p(POP, &[]),
                Insn::Branch {
                    op: GOTO,
                    target: Label(3),
                },
                p(ASTORE_1, &[]),
                p(ICONST_0, &[]),
                p(POP, &[]),
                p(ALOAD_1, &[]),
                p(ATHROW, &[]),
                p(RETURN, &[]),
            ],
            labels: vec![0, 2, 5, 10],
            handlers,
            attributes: Vec::new(),
            offsets: Vec::new(),
        }
    }

    fn catch_all() -> Handler {
        Handler {
            start: Label(0),
            end: Label(1),
            handler: Label(2),
            catch_type: 0,
        }
    }

    #[test]
    fn an_exits_copy_merges_into_the_handlers() {
        let m = merges(&javac_like(vec![catch_all()]));
        let mut ignored = m.ignored.clone();
        ignored.sort();
        assert_eq!(ignored, vec![(4, 4), (5, 5), (8, 9)]);
        assert_eq!(m.counted_as, vec![0, 1, 6, 7, 4, 5, 6, 7, 8, 9, 10]);
    }

    #[test]
    fn a_copy_that_differs_is_not_merged() {
        let mut code = javac_like(vec![catch_all()]);
        code.insns[3] = Insn::plain(NOP, &[]);
        let m = merges(&code);
        assert!(m.ignored.is_empty() && m.counted_as.is_empty(), "{m:?}");
    }

    /// A crafted method: 20,000 catch-all entries of one region and
    /// handler make the empty-catch check 4 × 10⁸ steps; the budget stops
    /// it, and nothing is merged.
    #[test]
    fn a_crafted_method_runs_out_of_budget_unmerged() {
        let m = merges(&javac_like(vec![catch_all(); 20_000]));
        assert!(m.ignored.is_empty() && m.counted_as.is_empty(), "{m:?}");
        // A few such entries are merged as one.
        let m = merges(&javac_like(vec![catch_all(); 3]));
        assert_eq!(m.counted_as[2..4], [6, 7]);
    }

    #[test]
    fn find_points_every_member_at_the_representative() {
        let mut parent = vec![0, 0, 1, 2, 4];
        assert_eq!(find(&mut parent, 3), 0);
        assert_eq!(parent, vec![0, 0, 0, 0, 4]);
        assert_eq!(find(&mut parent, 4), 4);
    }
}
