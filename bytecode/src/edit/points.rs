//! Where probes go: the insertion points shared by the profile and coverage
//! modes, `profrj instrument`, the benchmarks and the tests.

use super::Edit;
use crate::code::{decode_code, Insn};
use crate::ClassFile;
use std::collections::BTreeMap;

/// An edit putting `probe` at method entry, before every line start (from
/// the LineNumberTable), before every return and in a catch-all handler. `None` for a method without code (abstract, native)
/// or whose code does not decode.
pub fn probe_everywhere(
    class: &ClassFile<'_>,
    index: usize,
    probe: &[Insn],
    extra_stack: u16,
) -> Option<Edit> {
    let cp = &class.constant_pool;
    let method = class.methods.get(index)?;
    let code_attr = method
        .attributes
        .iter()
        .find(|a| cp.utf8(a.name_index) == Some(b"Code"))?;
    let code = decode_code(&code_attr.data).ok()?;
    let mut before = BTreeMap::new();
    for a in code
        .attributes
        .iter()
        .filter(|a| cp.utf8(a.name_index) == Some(b"LineNumberTable"))
    {
        for e in a.data.get(2..).unwrap_or_default().chunks_exact(4) {
            if let Some(ix) = code.index_at(u16::from_be_bytes([e[0], e[1]]) as u32) {
                before.insert(ix, probe.to_vec());
            }
        }
    }
    Some(Edit {
        entry: probe.to_vec(),
        before,
        before_returns: probe.to_vec(),
        catch_all: Some(probe.to_vec()),
        extra_stack,
        new_local: None,
    })
}
