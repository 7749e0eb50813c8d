//! Mutation fuzzing in every test run (the cargo-fuzz target in `fuzz/` goes
//! further): real classes with random bytes changed, inserted, removed or cut
//! go through parse, write, decode and edit. Any outcome is fine but a panic;
//! a class that parses must write back byte-identical.

use profrj_bytecode::code::VType;
use profrj_bytecode::code::{decode_code, Insn};
use profrj_bytecode::edit::{
    edit_method, line_probes, probe_allocations, AllocWhere, Edit, NewLocal,
};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::{parse_class, write_class};
use std::io::Read;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn exercise(data: &[u8]) {
    let Ok(mut class) = parse_class(data) else {
        return;
    };
    assert_eq!(
        write_class(&class),
        data,
        "a parsed class must write back identically"
    );
    for i in 0..class.methods.len() {
        let cp = &class.constant_pool;
        if let Some(a) = class.methods[i]
            .attributes
            .iter()
            .find(|a| cp.utf8(a.name_index) == Some(b"Code"))
        {
            let _ = decode_code(&a.data);
        }
        let probe = vec![Insn::plain(ICONST_1, &[]), Insn::plain(POP, &[])];
        // Allocation sites too: the abstract interpreter meets the mutations.
        let dup_pop = |s: &profrj_bytecode::edit::AllocSite| match s.at {
            AllocWhere::Top => vec![Insn::plain(DUP, &[]), Insn::plain(POP, &[])],
            _ => vec![],
        };
        let after = match probe_allocations(&class, i, &dup_pop, 1) {
            Ok(Some(e)) => e.after,
            _ => Default::default(),
        };
        // Line counters too: a new local in every frame (the coverage mode).
        let (before, new_local) = match line_probes(&class, i) {
            Some(l) => (
                l.points
                    .iter()
                    .map(|p| (p.0, vec![Insn::plain(ALOAD, &[0])]))
                    .collect(),
                Some(NewLocal {
                    slot: l.max_locals,
                    vtype: VType::Null,
                }),
            ),
            None => Default::default(),
        };
        let edit = Edit {
            catch_all: Some(probe.clone()),
            entry: probe.clone(),
            before_returns: probe,
            after,
            before,
            new_locals: new_local.into_iter().collect(),
            extra_stack: 1,
        };
        let _ = edit_method(&mut class, i, &edit);
    }
    let _ = write_class(&class);
}

#[test]
fn mutated_real_classes_never_panic() {
    let mut z =
        zip::ZipArchive::new(std::fs::File::open("/usr/share/java/h2.jar").unwrap()).unwrap();
    let mut seeds = Vec::new();
    for i in 0..z.len() {
        let mut e = z.by_index(i).unwrap();
        if e.name().ends_with(".class") && seeds.len() < 200 {
            let mut b = Vec::new();
            e.read_to_end(&mut b).unwrap();
            seeds.push(b);
        }
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let runs = 200_000;
    for _ in 0..runs {
        let mut data = seeds[rng.below(seeds.len())].clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(data.len());
            match rng.below(4) {
                0 => data[at] = rng.next() as u8,
                1 => data.insert(at, rng.next() as u8),
                2 => {
                    data.remove(at);
                }
                _ => data.truncate(at),
            }
            if data.is_empty() {
                break;
            }
        }
        exercise(&data);
    }
}
