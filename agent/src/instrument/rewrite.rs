//! One class through the rewriter: each method with code gets the probes of
//! every instrumenting mode that is on, in one edit. A method the editor
//! refuses stays as it was; the caller reports it.

use super::registry::{self, MethodInfo, Registry};
use super::{makers, probe_class, stamp, stride, AllocPlace, CoverageLayouts, MethodLines};
use crate::error::AgentError;
use crate::sites::Sites;
use profrj_bytecode::code::{decode_code, Code, Insn, VType};
use profrj_bytecode::edit::{
    add_counting, edit_method, increment_at, line_at, line_probes_in, line_table, plan_counters,
    sites_in, AllocWhere, CounterPlan, Edit, NewLocal,
};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::{parse_class, write_class, ClassFile, ConstantPool};
use profrj_format::names::decode_modified_utf8;

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

/// Constant-pool entries the probes use, added once per class.
struct Refs {
    enter: u16,
    exit: u16,
    unwind: u16,
    counters: u16,
    /// `Probe.thread()`, with more than one stripe.
    thread: u16,
    /// BootstrapMethods index of `Probe.counters`, where the class may use
    /// dynamic constants (version 55+, first load).
    counters_bootstrap: Option<u16>,
    long_array: u16,
    alloc: u16,
    alloc_weak: u16,
    alloc_any: u16,
    cloned: u16,
    cloned_from: u16,
    park_enter: u16,
    park_exit: u16,
    /// `trace`: enter, exit, unwind, throw, catch.
    trace: [u16; 5],
}

impl Refs {
    fn add(
        class: &mut ClassFile<'_>,
        modes: Probes,
        dynamic_constants: bool,
        stripes: u32,
    ) -> Self {
        let dynamic_ok = dynamic_constants && class.major_version >= 55;
        let bootstrap = (modes.coverage && dynamic_ok).then(|| {
            let (name, desc) = probe_class::COUNTERS_BOOTSTRAP;
            let handle =
                class
                    .constant_pool
                    .add_static_method_handle(probe_class::CLASS, name, desc);
            class.add_bootstrap_method(handle)
        });
        let cp = &mut class.constant_pool;
        let mut r = Refs {
            enter: 0,
            exit: 0,
            unwind: 0,
            counters: 0,
            thread: 0,
            counters_bootstrap: None,
            long_array: 0,
            alloc: 0,
            alloc_weak: 0,
            alloc_any: 0,
            cloned: 0,
            cloned_from: 0,
            park_enter: 0,
            park_exit: 0,
            trace: [0; 5],
        };
        if modes.trace {
            use probe_class::*;
            let methods = [
                TRACE_ENTER_METHOD,
                TRACE_EXIT_METHOD,
                TRACE_UNWIND_METHOD,
                TRACE_THROW_METHOD,
                TRACE_CATCH_METHOD,
            ];
            for (r, (name, desc)) in r.trace.iter_mut().zip(methods) {
                *r = cp.add_method_ref(CLASS, name, desc);
            }
        }
        if modes.park {
            let (name, desc) = probe_class::PARK_ENTER_METHOD;
            r.park_enter = cp.add_method_ref(probe_class::CLASS, name, desc);
            let (name, desc) = probe_class::PARK_EXIT_METHOD;
            r.park_exit = cp.add_method_ref(probe_class::CLASS, name, desc);
        }
        if modes.profile {
            r.enter = cp.add_method_ref(probe_class::CLASS, "enter", "(I)V");
            r.exit = cp.add_method_ref(probe_class::CLASS, "exit", "(I)V");
            r.unwind = cp.add_method_ref(probe_class::CLASS, "unwind", "(I)V");
        }
        if modes.coverage {
            let (name, desc) = probe_class::COUNTERS_METHOD;
            r.counters = cp.add_method_ref(probe_class::CLASS, name, desc);
            r.counters_bootstrap = bootstrap.flatten();
            if stripes > 1 {
                let (name, desc) = probe_class::THREAD_METHOD;
                r.thread = cp.add_method_ref(probe_class::CLASS, name, desc);
            }
            r.long_array = cp.class_index("[J");
        }
        if modes.memory {
            let class = probe_class::CLASS;
            let (name, desc) = probe_class::ALLOC_METHOD;
            r.alloc = cp.add_method_ref(class, name, desc);
            let (name, desc) = probe_class::ALLOC_WEAK_METHOD;
            r.alloc_weak = cp.add_method_ref(class, name, desc);
            let (name, desc) = probe_class::ALLOC_ANY_METHOD;
            r.alloc_any = cp.add_method_ref(class, name, desc);
            let (name, desc) = probe_class::CLONED_METHOD;
            r.cloned = cp.add_method_ref(class, name, desc);
            let (name, desc) = probe_class::CLONED_FROM_METHOD;
            r.cloned_from = cp.add_method_ref(class, name, desc);
        }
        r
    }
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
    for i in 0..class.methods.len() {
        // Decoded once here for every mode's planning (the editor decodes
        // the code as it edits it): an owned copy, so the pool stays mutable.
        let Some(raw) = class.method_code(i).map(|a| a.data.to_vec()) else {
            continue; // abstract or native
        };
        let m = &class.methods[i];
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
            let plan = plan_counters(
                &code,
                &class.constant_pool,
                &points,
                calls_counted,
                info.name == "<init>",
                modes.derive_lines,
            );
            let layout = MethodLines {
                class: info.class.clone(),
                name: info.name.clone(),
                descriptor: info.descriptor.clone(),
                lines: lines.points.iter().map(|p| p.1).collect(),
                counts: plan.counts.clone(),
                slots: plan.slots as usize,
                calls_in_first_line: lines.first_counts_calls,
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
            if let Err(e) = add_memory(
                &mut edit,
                (&code, method),
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
        layouts.add_class(name, source_file(&class), &covered);
    }
    if out.edited > 0 || stamped {
        out.bytes = Some(write_class(&class));
    }
    Ok(out)
}

/// `Probe.enter(id)` at entry, `exit(id)` before returns, `unwind(id)` on
/// the way out of an exception.
fn add_profile(edit: &mut Edit, cp: &mut ConstantPool<'_>, refs: &Refs, id: u32) {
    let push = vec![Insn::push_int(cp, id as i32)];
    let call = |r: u16| {
        let mut seq = push.clone();
        seq.push(Insn::plain(INVOKESTATIC, &r.to_be_bytes()));
        seq
    };
    edit.entry.extend(call(refs.enter));
    edit.before_returns.extend(call(refs.exit));
    edit.catch_all = Some(call(refs.unwind));
    edit.extra_stack = edit.extra_stack.max(1);
}

/// `Probe.traceEnter(id)` at entry, `traceExit(id)` before returns,
/// `traceUnwind(exception, id)` in the catch-all handler, `traceThrow` before
/// each `athrow` and `traceCatch` at the start of each of the method's own
/// handlers (the exception is on the stack at all three: `dup` it).
fn add_trace(edit: &mut Edit, code: &Code, cp: &mut ConstantPool<'_>, refs: &Refs, id: u32) {
    let [enter, exit, unwind, throw, catch] = refs.trace;
    let id = Insn::push_int(cp, id as i32);
    let call = |r: u16| vec![id.clone(), Insn::plain(INVOKESTATIC, &r.to_be_bytes())];
    let with_exception = |r: u16| {
        let mut seq = vec![Insn::plain(DUP, &[])];
        seq.extend(call(r));
        seq
    };
    edit.entry.extend(call(enter));
    edit.before_returns.extend(call(exit));
    let mut handler = edit.catch_all.take().unwrap_or_default();
    handler.extend(with_exception(unwind));
    edit.catch_all = Some(handler);
    for (i, insn) in code.insns.iter().enumerate() {
        if matches!(insn, Insn::Plain { op: ATHROW, .. }) {
            edit.before
                .entry(i as u32)
                .or_default()
                .extend(with_exception(throw));
        }
    }
    let mut starts: Vec<u32> = code
        .handlers
        .iter()
        .map(|h| code.labels[h.handler.0 as usize])
        .collect();
    starts.sort_unstable();
    starts.dedup();
    for h in starts {
        // First at the handler's start: before any other mode's code there.
        let seq = edit.before.entry(h).or_default();
        let mut probe = with_exception(catch);
        probe.append(seq);
        *seq = probe;
    }
    edit.extra_stack = edit.extra_stack.max(2);
}

/// `Probe.parkEnter(blocker)` at entry, `parkExit(blocker)` before returns
/// (the blocker is the static method's first argument, local 0).
fn add_park(edit: &mut Edit, refs: &Refs) {
    let call = |r: u16| {
        vec![
            Insn::local(ALOAD, 0),
            Insn::plain(INVOKESTATIC, &r.to_be_bytes()),
        ]
    };
    edit.entry.extend(call(refs.park_enter));
    edit.before_returns.extend(call(refs.park_exit));
    edit.extra_stack = edit.extra_stack.max(1);
}

/// Which copy of a method's counters a call uses: `(Probe.thread() &
/// mask) * stride`.
#[derive(Clone, Copy)]
struct Stripe {
    mask: i32,
    stride: i32,
}

/// At entry `long[] c = Probe.cov(id);` into local `slot` (and with
/// `stripe`, `int base = (Probe.thread() & mask) * stride;` into the next),
/// then `c[base + 0]++` if `count_calls`; then the plan's counting code
/// (`add_counting`).
fn add_coverage(
    edit: &mut Edit,
    cp: &mut ConstantPool<'_>,
    refs: &Refs,
    (id, slot, stripe): (u32, u16, Option<Stripe>),
    plan: &CounterPlan,
    count_calls: bool,
) {
    let mut entry = match refs.counters_bootstrap {
        // ldc_w of the dynamic constant `c<id>`: a constant once resolved.
        Some(bsm) => {
            let constant = cp.add_dynamic(bsm, &format!("c{id}"), "[J");
            vec![Insn::plain(LDC_W, &constant.to_be_bytes())]
        }
        None => {
            let mut seq = vec![Insn::push_int(cp, id as i32)];
            seq.push(Insn::plain(INVOKESTATIC, &refs.counters.to_be_bytes())); // cov
            seq
        }
    };
    entry.push(Insn::local(ASTORE, slot));
    let base = stripe.map(|s| {
        let base = slot + 1;
        entry.push(Insn::plain(INVOKESTATIC, &refs.thread.to_be_bytes()));
        entry.push(Insn::push_int(cp, s.mask));
        entry.push(Insn::plain(IAND, &[]));
        entry.push(Insn::push_int(cp, s.stride));
        entry.push(Insn::plain(IMUL, &[]));
        entry.push(Insn::local(ISTORE, base));
        base
    });
    if count_calls {
        // counters[base + 0]++
        entry.extend(increment_at(slot, base, Insn::plain(ICONST_0, &[])));
    }
    // Coverage first: the counters count the call even if a later probe throws.
    edit.entry.splice(0..0, entry);
    let array = NewLocal {
        slot,
        vtype: VType::Object(refs.long_array),
    };
    add_counting(edit, cp, plan, array, base);
}

/// `Probe.alloc(object, site)` after each allocation site: the constructor
/// call of each `new`, and each array instruction (`Probe.allocWeak` for
/// arrays and the JDK's classes, which are never stamped). A site whose object is
/// on top of the stack gets `dup`, one kept only in a local `aload`; the
/// rare object found nowhere (a `new` without `dup`, unused) is not tracked.
/// A site is the method, the source line of its `new` (or array
/// instruction) and the type.
fn add_memory(
    edit: &mut Edit,
    (code, (class, method, descriptor)): (&Code<'_>, (&String, &String, &String)),
    cp: &mut ConstantPool<'_>,
    major_version: u16,
    (refs, numbers): (&Refs, &Sites),
) -> Result<(), AgentError> {
    let sites = sites_in(code, cp).map_err(|e| AgentError::Class(e.to_string()))?;
    let lines = line_table(code, cp);
    let place = |ix: u32| AllocPlace {
        class: class.clone(),
        method: method.clone(),
        descriptor: descriptor.clone(),
        line: line_at(&lines, ix),
    };
    for site in sites {
        let load = match site.at {
            AllocWhere::Top => Insn::plain(DUP, &[]),
            AllocWhere::Local(n) => Insn::local(ALOAD, n),
            AllocWhere::Stack(_) | AllocWhere::Gone => continue,
        };
        let Some(name) = site.type_utf8(cp) else {
            continue;
        };
        let name = decode_modified_utf8(&name);
        let id = numbers.alloc_site(place(site.new_at), &registry::java_type_name(&name));
        let probe = if stamp::may_be_stamped(&name) {
            refs.alloc
        } else {
            refs.alloc_weak
        };
        let seq = edit.after.entry(site.after).or_default();
        seq.push(load);
        seq.push(Insn::push_int(cp, id as i32));
        seq.push(Insn::plain(INVOKESTATIC, &probe.to_be_bytes()));
    }
    let place_id = |ix: u32| numbers.place_id(place(ix));
    add_hidden_makers(edit, code, cp, major_version >= 49, refs, &place_id);
    // Two copies of a clone, its receiver and the place id.
    edit.extra_stack = edit.extra_stack.max(3);
    Ok(())
}

/// Calls that make objects out of sight of the allocation sites:
/// reflection (`memory::makers`), and `clone()`. The compiled `Object.clone`
/// reports nothing either, so the call site reports its result with where
/// the call was resolved from; the runtime counts it when that reaches
/// `Object.clone` (see `Memory.cloned`). A virtual call keeps a copy of its
/// receiver (`dup` before, `dup_x1; swap` after). Each probe also passes
/// the id of its place (`place_id` of the call's index).
fn add_hidden_makers(
    edit: &mut Edit,
    code: &Code<'_>,
    cp: &mut ConstantPool<'_>,
    ldc_class: bool,
    refs: &Refs,
    place_id: &dyn Fn(u32) -> u32,
) {
    for (i, insn) in code.insns.iter().enumerate() {
        let Insn::Plain { op, operands } = insn else {
            continue;
        };
        if !matches!(*op, INVOKEVIRTUAL..=INVOKEINTERFACE) {
            continue; // not an invoke (invokedynamic makes no object of its own)
        }
        let o = operands.as_slice();
        let member = u16::from_be_bytes([o[0], o[1]]);
        let Some((name, desc)) = cp.member_name_and_descriptor(member) else {
            continue;
        };
        let owner = cp.member_class(member).and_then(|c| cp.class_utf8(c));
        let maker = owner.is_some_and(|o| makers::is_maker(o, name, desc));
        let i = i as u32;
        if maker {
            let place = Insn::push_int(cp, place_id(i) as i32);
            let seq = edit.after.entry(i).or_default();
            seq.push(Insn::plain(DUP, &[]));
            seq.push(place);
            seq.push(Insn::plain(INVOKESTATIC, &refs.alloc_any.to_be_bytes()));
            continue;
        }
        if *op == INVOKESTATIC
            || name != b"clone"
            || !(desc.starts_with(b"()L") || desc.starts_with(b"()["))
        {
            continue;
        }
        if *op == INVOKESPECIAL {
            let Some(owner) = cp.member_class(member).filter(|_| ldc_class) else {
                continue;
            };
            let place = Insn::push_int(cp, place_id(i) as i32);
            let seq = edit.after.entry(i).or_default();
            seq.push(Insn::plain(DUP, &[]));
            seq.push(Insn::plain(LDC_W, &owner.to_be_bytes())); // ldc_w Class
            seq.push(place);
            seq.push(Insn::plain(INVOKESTATIC, &refs.cloned_from.to_be_bytes()));
        } else {
            let place = Insn::push_int(cp, place_id(i) as i32);
            edit.before
                .entry(i)
                .or_default()
                .push(Insn::plain(DUP, &[]));
            let seq = edit.after.entry(i).or_default();
            seq.push(Insn::plain(DUP_X1, &[]));
            seq.push(Insn::plain(SWAP, &[]));
            seq.push(place);
            seq.push(Insn::plain(INVOKESTATIC, &refs.cloned.to_be_bytes()));
        }
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
