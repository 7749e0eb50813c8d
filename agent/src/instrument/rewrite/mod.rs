//! One class through the rewriter: each method with code gets the probes of
//! every instrumenting mode that is on, in one edit. A method the editor
//! refuses stays as it was; the caller reports it.
//!
//! The probes, by what they hold: `refs.rs` the constant-pool entries they
//! use, `calls.rs` those around a call (`profile`, `trace`, `lock`'s
//! parking), `coverage.rs` the counters, `memory.rs` the allocation sites
//! and the hidden makers of objects.

mod calls;
mod coverage;
mod filtered;
mod generated;
mod memory;
mod refs;

use super::registry::{MethodInfo, Registry};
use super::{makers, stamp, stride, CoverageLayouts, MethodLines};
use crate::error::AgentError;
use crate::sites::Sites;
use calls::{add_park, add_profile, add_trace};
use coverage::{add_coverage, Stripe};
use memory::add_memory;
use profrj_bytecode::code::decode_code;
use profrj_bytecode::edit::{
    edit_method, line_at, line_probes_in, line_table, plan_coverage, Edit,
};
use profrj_bytecode::{parse_class, write_class, ClassFile, ConstantPool};
use profrj_format::names::decode_modified_utf8;
use refs::Refs;

/// Which probes go in (each mode's registration says which of these it
/// asks for; a session puts in their union).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Probes {
    pub profile: bool,
    pub coverage: bool,
    pub memory: bool,
    /// Coverage: derive the counts that follow from other counters.
    pub derive_lines: bool,
    /// `lock`: probes in `LockSupport.park(Object)`/`parkNanos(Object, long)`.
    pub park: bool,
    pub trace: bool,
}

impl Probes {
    /// No probes.
    pub const NONE: Probes = Probes {
        profile: false,
        coverage: false,
        memory: false,
        derive_lines: false,
        park: false,
        trace: false,
    };

    /// Both sets' probes.
    pub fn union(self, o: Probes) -> Probes {
        Probes {
            profile: self.profile || o.profile,
            coverage: self.coverage || o.coverage,
            memory: self.memory || o.memory,
            derive_lines: self.derive_lines || o.derive_lines,
            park: self.park || o.park,
            trace: self.trace || o.trace,
        }
    }

    /// Does a mode probe the classes of the scope (not just `LockSupport`)?
    pub fn any_scoped(&self) -> bool {
        self.profile || self.coverage || self.memory || self.trace
    }

    /// Are any classes rewritten?
    pub fn any(&self) -> bool {
        self.any_scoped() || self.park
    }
}

/// Where the rewriter gets the ids its probes pass: allocation sites from
/// the host's table, counter layouts from the coverage mode (when it runs).
#[derive(Clone, Copy)]
pub struct Ids<'a> {
    pub sites: &'a Sites,
    pub coverage: Option<&'a dyn CoverageLayouts>,
}

/// The class whose parking methods `lock` probes.
pub const LOCK_SUPPORT: &str = "java/util/concurrent/locks/LockSupport";

/// The methods of [`LOCK_SUPPORT`] that park with a blocker, its first
/// argument: (name, descriptor).
const PARKING: [(&str, &str); 2] = [
    ("park", "(Ljava/lang/Object;)V"),
    ("parkNanos", "(Ljava/lang/Object;J)V"),
];

/// How to rewrite a class.
pub struct How<'a> {
    /// The probes that go in.
    pub modes: Probes,
    /// May the coverage counters be dynamic constants (class files 55+)?
    /// Only while the class is being defined, and not the JDK's (its
    /// bootstrap runs through java.lang.invoke).
    pub dynamic_constants: bool,
    /// The memory mode's stamp field, and the classes seen so far.
    pub stamp: (stamp::Plan, &'a stamp::Seen),
}

/// What became of one class.
pub struct Rewritten {
    /// New bytes, or `None` when nothing was changed.
    pub bytes: Option<Vec<u8>>,
    pub edited: usize,
    /// Did it get the stamp field?
    pub stamped: bool,
    /// `name(descriptor): reason` for each method left as it was.
    pub refused: Vec<String>,
}

/// Rewrites class `name` (internal form) as `how` says.
pub fn rewrite(
    name: &str,
    bytes: &[u8],
    how: How<'_>,
    registry: &Registry,
    ids: Ids<'_>,
) -> Result<Rewritten, AgentError> {
    let How {
        modes,
        dynamic_constants,
        stamp: (plan, seen),
    } = how;
    let coverage = match (modes.coverage, ids.coverage) {
        (true, Some(c)) => Some(c),
        (true, None) => {
            return Err(AgentError::Internal(
                "no coverage counter layouts yet".into(),
            ))
        }
        (false, _) => None,
    };
    let mut class = parse_class(bytes).map_err(|e| AgentError::Class(e.to_string()))?;
    // Each probe needs a few constants; stay clear of the 65,535 limit.
    if class.constant_pool.count() > 65_000 {
        return Err(AgentError::Class("its constant pool is nearly full".into()));
    }
    let stamped = stamp::apply(&mut class, name, plan, seen);
    let stripes = coverage.map_or(1, |c| c.stripes());
    let refs = Refs::add(&mut class, modes, dynamic_constants, stripes);
    let mut out = Rewritten {
        bytes: None,
        edited: 0,
        stamped,
        refused: Vec::new(),
    };
    let mut covered = Vec::new();
    // JaCoCo's filters need the superclass (`generated`; coverage only).
    let super_name = coverage.and_then(|_| class.constant_pool.class_name(class.super_class));
    let class_annotated = coverage.is_some()
        && generated::annotated_generated(&class.constant_pool, &class.attributes);
    for i in 0..class.methods.len() {
        // Decoded once here for every mode's planning (the editor decodes
        // the code as it edits it): an owned copy, so the pool stays mutable.
        let Some(raw) = class.method_code(i).map(|a| a.data.to_vec()) else {
            continue; // abstract or native
        };
        let m = &class.methods[i];
        let access = m.access_flags;
        let cp = &class.constant_pool;
        let info = MethodInfo {
            class: name.to_owned(),
            name: text(cp, m.name_index),
            descriptor: text(cp, m.descriptor_index),
        };
        let label = format!("{}{}", info.name, info.descriptor);
        let mut edit = Edit::default();
        let parking = modes.park
            && name == LOCK_SUPPORT
            && PARKING.contains(&(info.name.as_str(), info.descriptor.as_str()));
        if parking {
            add_park(&mut edit, &refs);
        }
        if !parking && !modes.any_scoped() {
            continue;
        }
        if modes.profile {
            let id = registry.id(info.clone());
            add_profile(&mut edit, &mut class.constant_pool, &refs, id);
        }
        let code = match decode_code(&raw) {
            Ok(code) => code,
            Err(e) => {
                out.refused.push(format!("{label}: {e}"));
                continue;
            }
        };
        if modes.trace {
            let id = registry.id(info.clone());
            add_trace(&mut edit, &code, &mut class.constant_pool, &refs, id);
        }
        let mut coverage_id = None;
        if let Some(layouts) = coverage {
            let lines = line_probes_in(&code, &class.constant_pool);
            let points: Vec<u32> = lines.points.iter().map(|p| p.0).collect();
            let calls_counted = !lines.first_counts_calls;
            let plan = plan_coverage(
                &code,
                &class.constant_pool,
                &points,
                calls_counted,
                info.name == "<init>",
                modes.derive_lines,
                true,
            );
            let table = line_table(&code, &class.constant_pool);
            let branches = plan
                .branches
                .iter()
                .map(|b| {
                    let line = line_at(&table, b.at).map_or(-1, i32::from);
                    (line, b.outcomes.clone())
                })
                .collect();
            let filtered = filtered::jacoco_filters(&filtered::Method {
                code: &code,
                cp: &class.constant_pool,
                table: &table,
                blocks: &plan.blocks,
                branches: &plan.branches,
            });
            // Instructions by line and run, in code order.
            let mut insns: Vec<(u16, u32, u32)> = Vec::new();
            for (k, b) in plan.blocks.iter().enumerate() {
                for i in b.start..b.end {
                    if let Some(line) = line_at(&table, i) {
                        add_insn(&mut insns, line, k as u32);
                    }
                }
            }
            let layout = MethodLines {
                class: info.class.clone(),
                name: info.name.clone(),
                descriptor: info.descriptor.clone(),
                lines: lines.points.iter().map(|p| p.1).collect(),
                counts: plan.counts.clone(),
                slots: plan.slots as usize,
                calls_in_first_line: lines.first_counts_calls,
                branches,
                insns,
                filtered,
                runs: plan.blocks.iter().map(|b| b.any_of.clone()).collect(),
                generated: generated::generated(
                    &generated::Owner {
                        name,
                        super_name: super_name.as_deref(),
                        annotated: class_annotated,
                    },
                    &class.constant_pool,
                    (&info.name, &info.descriptor, access),
                    &class.methods[i].attributes,
                    &code,
                ),
            };
            let id = layouts.method_id(layout);
            let cp = &mut class.constant_pool;
            let slot = lines.max_locals;
            // What Probe.thread() calls counts in stripe 0 (no recursion).
            let own_stripe = stripes > 1
                && !(matches!(info.name.as_str(), "getId" | "threadId")
                    && info.descriptor == "()J");
            let stripe = own_stripe.then(|| Stripe {
                mask: stripes as i32 - 1,
                stride: stride(plan.slots as usize, stripes) as i32,
            });
            let at = (id, slot, stripe);
            add_coverage(&mut edit, cp, &refs, at, &plan, calls_counted);
            coverage_id = Some(id);
        }
        if modes.memory && !makers::is_reflection_machinery(name) {
            let major = class.major_version;
            let method = (&info.class, &info.name, &info.descriptor);
            let source = source_file(&class);
            if let Err(e) = add_memory(
                &mut edit,
                (&code, method, source.as_deref()),
                &mut class.constant_pool,
                major,
                (&refs, ids.sites),
            ) {
                out.refused.push(format!("{label}: {e}"));
                continue;
            }
        }
        match edit_method(&mut class, i, &edit) {
            Ok(()) => {
                out.edited += 1;
                covered.extend(coverage_id);
            }
            Err(e) => out.refused.push(format!("{label}: {e}")),
        }
    }
    if let Some(layouts) = coverage {
        let id = profrj_bytecode::class_id(bytes);
        layouts.add_class(name, source_file(&class), id, &covered);
    }
    if out.edited > 0 || stamped {
        out.bytes = Some(write_class(&class));
    }
    Ok(out)
}

/// One more instruction on `line` of `run`, in code order.
fn add_insn(list: &mut Vec<(u16, u32, u32)>, line: u16, run: u32) {
    match list.last_mut() {
        Some(last) if last.0 == line && last.2 == run => last.1 += 1,
        _ => list.push((line, 1, run)),
    }
}

/// The SourceFile attribute's file name.
fn source_file(class: &ClassFile<'_>) -> Option<String> {
    let cp = &class.constant_pool;
    let a = class
        .attributes
        .iter()
        .find(|a| cp.utf8(a.name_index) == Some(b"SourceFile"))?;
    let index = u16::from_be_bytes([*a.data.first()?, *a.data.get(1)?]);
    Some(decode_modified_utf8(cp.utf8(index)?))
}

/// A CONSTANT_Utf8 entry (a name, a descriptor) exactly, as every name the
/// agent reads ([`profrj_format::names`]); empty if there is none.
fn text(cp: &ConstantPool<'_>, index: u16) -> String {
    decode_modified_utf8(cp.utf8(index).unwrap_or_default())
}
