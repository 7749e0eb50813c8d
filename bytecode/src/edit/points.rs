//! Where probes go: the insertion points shared by the profile and coverage
//! modes, `profrj instrument`, the benchmarks and the tests.

use super::{allocation_sites, AllocSite, Edit, EditError};
use crate::code::{instruction_offsets, Insn};
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
    let code_attr = class.method_code(index)?;
    // Only instruction boundaries are needed (not a full decode): this runs
    // once per method before the editor decodes it.
    let offsets = instruction_offsets(&code_attr.data).ok()?;
    let mut before = BTreeMap::new();
    for a in code_attributes(&code_attr.data)?
        .into_iter()
        .filter(|a| cp.utf8(a.0) == Some(b"LineNumberTable"))
    {
        for e in a.1.get(2..).unwrap_or_default().chunks_exact(4) {
            let pc = u16::from_be_bytes([e[0], e[1]]) as u32;
            if let Ok(ix) = offsets.binary_search(&pc) {
                before.insert(ix as u32, probe.to_vec());
            }
        }
    }
    Some(Edit {
        entry: probe.to_vec(),
        before,
        before_returns: probe.to_vec(),
        catch_all: Some(probe.to_vec()),
        extra_stack,
        ..Edit::default()
    })
}

/// An edit putting `probe(site)` after every allocation site of the method
/// (see [`allocation_sites`]); a site for which `probe` returns no
/// instructions is left alone (e.g. one whose object is not on top of the
/// stack). `Ok(None)` for a method without code (abstract, native); an error
/// names why the sites cannot be found. The result can be merged with other
/// points (its only non-empty field is `after`).
pub fn probe_allocations(
    class: &ClassFile<'_>,
    index: usize,
    probe: &dyn Fn(&AllocSite) -> Vec<Insn>,
    extra_stack: u16,
) -> Result<Option<Edit>, EditError> {
    let Some(method) = class.methods.get(index) else {
        return Err(EditError::NoSuchMethod);
    };
    let cp = &class.constant_pool;
    if !method
        .attributes
        .iter()
        .any(|a| cp.utf8(a.name_index) == Some(b"Code"))
    {
        return Ok(None);
    }
    let mut after = BTreeMap::new();
    for site in allocation_sites(class, index)? {
        let seq = probe(&site);
        if !seq.is_empty() {
            after.insert(site.after, seq);
        }
    }
    Ok(Some(Edit {
        after,
        extra_stack,
        ..Edit::default()
    }))
}

/// The attributes nested in a `Code` attribute's body: (name index, body).
fn code_attributes(body: &[u8]) -> Option<Vec<(u16, &[u8])>> {
    let be16 = |at: usize| Some(u16::from_be_bytes([*body.get(at)?, *body.get(at + 1)?]));
    let be32 = |at: usize| Some(u32::from_be_bytes(body.get(at..at + 4)?.try_into().ok()?));
    let code_len = be32(4)? as usize;
    let mut at = 8 + code_len;
    let handlers = be16(at)? as usize;
    at += 2 + 8 * handlers;
    let n = be16(at)?;
    at += 2;
    let mut out = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let name = be16(at)?;
        let len = be32(at + 2)? as usize;
        out.push((name, body.get(at + 6..at + 6 + len)?));
        at += 6 + len;
    }
    Some(out)
}
