//! Editing one method: insert instruction sequences at method entry, before
//! given instructions (jumps to them then land on the inserted code), after
//! given instructions (reached only by falling through from them), and
//! before every return. Inserted sequences must be stack-neutral and must not
//! branch or touch locals, so existing frames stay valid; they shift with the
//! code. Offsets in the exception table, StackMapTable, LineNumberTable and
//! LocalVariable(Type)Table are remapped.
//!
//! The catch-all handler wraps the body for any throwable; in a constructor
//! it is split around the super()/this() call (see `ctor`). A conditional the
//! insertions push past ±32 KiB is widened by the encoder into an inverted
//! condition over a `goto_w`; the frame this needs after it is computed from
//! the frames before it (`code::widened_frames`). A method whose types there
//! cannot be followed, or with another offset-bearing attribute, is refused
//! with a reason and left as it was: never an invalid class.

mod alloc;
mod counting;
mod ctor;
mod derive;
mod error;
mod lines;
mod points;

pub use alloc::{allocation_sites, sites_in, AllocKind, AllocSite, AllocWhere};
pub use counting::{add_counting, increment, increment_at};
pub use derive::{
    plan_counters, plan_coverage, switch_targets, BranchCounts, Count, CounterPlan, Exceptions,
    InsnBlock,
};
pub use error::EditError;
pub use lines::{line_at, line_probes, line_probes_in, line_table, LineProbes};
pub use points::{probe_allocations, probe_everywhere};

use crate::code::{
    decode_code, decode_frames, encode_frames, encode_laid_out, initial_locals, layout,
    widened_frames, Code, Insn, Layout, VType,
};
use crate::opcodes::{is_return, ATHROW};
use crate::{Attribute, ClassFile};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// What to insert into one method. Keys of `before` are instruction indices
/// of the code as read.
#[derive(Debug, Clone, Default)]
pub struct Edit {
    /// Run once at method entry; a jump back to the first instruction does
    /// not run it again.
    pub entry: Vec<Insn>,
    /// Inserted before instruction i (index of the code as read): jumps to
    /// i land on it.
    pub before: BTreeMap<u32, Vec<Insn>>,
    /// Inserted right after instruction i (index of the code as read), on its
    /// fall-through path only: a jump to i+1 still lands after this code (on
    /// what `before` puts there). The instruction must fall through (not a
    /// goto, return, athrow, switch or ret). Keys of `after` and `before` may
    /// coincide: `before[i]`, instruction i, `after[i]`.
    pub after: BTreeMap<u32, Vec<Insn>>,
    /// Inserted before every return instruction (not `athrow`).
    pub before_returns: Vec<Insn>,
    /// Run on every exceptional exit: the method body is wrapped in a handler
    /// for any throwable that runs this (the throwable on the stack, to be left
    /// there) and rethrows it. Existing handlers keep precedence.
    pub catch_all: Option<Vec<Insn>>,
    /// Operand-stack slots the inserted code needs on top of what is there.
    pub extra_stack: u16,
    /// Local variables of the edit's own, past the method's locals, in
    /// ascending slots, which `entry` stores and inserted code may load (and
    /// store, keeping the type) anywhere: every frame of the StackMapTable
    /// gets them, the catch-all handler's included.
    pub new_locals: Vec<NewLocal>,
}

/// A local variable an edit adds to the method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewLocal {
    /// At least the method's `max_locals` (see [`LineProbes::max_locals`]).
    pub slot: u16,
    /// Not Top, Uninitialized or UninitializedThis.
    pub vtype: VType,
}

impl NewLocal {
    fn slots(&self) -> u16 {
        match self.vtype {
            VType::Long | VType::Double => 2,
            _ => 1,
        }
    }

    /// Appends this local to a frame's locals, with Top in the slots between.
    fn add_to(&self, locals: &mut Vec<VType>) -> Result<(), EditError> {
        let used: usize = locals
            .iter()
            .map(|t| 1 + matches!(t, VType::Long | VType::Double) as usize)
            .sum();
        if used > self.slot as usize {
            return Err(EditError::BadEdit(format!(
                "a frame uses local {} which the edit claims",
                self.slot
            )));
        }
        locals.resize(locals.len() + self.slot as usize - used, VType::Top);
        locals.push(self.vtype);
        Ok(())
    }
}

fn malformed(why: impl std::fmt::Display) -> EditError {
    EditError::Malformed(why.to_string())
}

fn bad_descriptor(desc: &[u8]) -> EditError {
    malformed(format!("bad descriptor {}", String::from_utf8_lossy(desc)))
}

/// Applies `edit` to method `index` of `class`. On error the class is unchanged.
pub fn edit_method(class: &mut ClassFile<'_>, index: usize, edit: &Edit) -> Result<(), EditError> {
    let method = class
        .methods
        .get(index)
        .ok_or(EditError::NoSuchMethod)?
        .clone();
    let cp = &mut class.constant_pool;
    // The pool's bytes, never decoded (names may hold what UTF-8 cannot).
    let bytes = |i| cp.utf8(i).unwrap_or_default();
    let (name, desc) = (bytes(method.name_index), bytes(method.descriptor_index));
    let Some(slot) = method
        .attributes
        .iter()
        .position(|a| cp.utf8(a.name_index) == Some(b"Code"))
    else {
        return Err(EditError::NoCode);
    };
    let mut code = decode_code(&method.attributes[slot].data).map_err(malformed)?;
    let n = code.insns.len();
    if let Some(&i) = edit.after.range(n as u32..).next().map(|(i, _)| i) {
        return Err(EditError::BadEdit(format!(
            "after-code for instruction {i}, past the last ({n})"
        )));
    }

    // In a constructor the catch-all needs where the super()/this() call is
    // (computed first: the loop below moves the instructions out).
    let this_name = cp.class_utf8(class.this_class).unwrap_or_default();
    let uninit_this = name == b"<init>" && this_name != b"java/lang/Object";
    let parts = match &edit.catch_all {
        Some(_) if uninit_this => Some(ctor::parts(&code, cp)?),
        _ => None,
    };

    // New instruction list, and where each old instruction (`at`) and each old
    // jump target (`target`: the inserted code before it, if any) went.
    let mut insns = Vec::with_capacity(n + n / 4 + edit.entry.len() + 8);
    insns.extend(edit.entry.iter().cloned());
    let mut at = Vec::with_capacity(n + 1);
    let mut target = Vec::with_capacity(n + 1);
    // The maps are walked in step with the code (a lookup per instruction
    // showed in profiles).
    let mut before = edit.before.iter().peekable();
    let mut after = edit.after.iter().peekable();
    for (i, insn) in std::mem::take(&mut code.insns).into_iter().enumerate() {
        let start = insns.len() as u32;
        if let Some((_, seq)) = before.next_if(|b| *b.0 == i as u32) {
            insns.extend(seq.iter().cloned());
        }
        if matches!(insn, Insn::Plain { op, .. } if is_return(op)) {
            insns.extend(edit.before_returns.iter().cloned());
        }
        // Jumps land on the code inserted before their instruction. For the
        // first instruction `start` is already past the entry code, so a loop
        // at offset 0 does not run the entry code again.
        target.push(start);
        at.push(insns.len() as u32);
        let falls_through = crate::code::stack::falls_through(&insn);
        insns.push(insn);
        if let Some((_, seq)) = after.next_if(|a| *a.0 == i as u32) {
            // Code after an instruction that never falls through would be
            // unreachable, and the verifier wants a frame there.
            if !falls_through {
                return Err(EditError::BadEdit(format!(
                    "after-code for instruction {i}, which does not fall through"
                )));
            }
            insns.extend(seq.iter().cloned());
        }
    }
    at.push(insns.len() as u32);
    target.push(insns.len() as u32);

    // The catch-all handler goes after the body (which cannot fall through).
    // In a constructor a second one covers the code before the super()/this()
    // call, with `uninitializedThis` in its frame.
    let mut handler = |seq: &[Insn]| {
        let h = insns.len() as u32;
        insns.extend(seq.iter().cloned());
        insns.push(Insn::plain(ATHROW, &[]));
        h
    };
    let handler_at = edit.catch_all.as_deref().map(&mut handler);
    let pre_handler_at = parts
        .as_ref()
        .and(edit.catch_all.as_deref())
        .map(&mut handler);

    let mut new = Code {
        max_stack: code.max_stack.saturating_add(edit.extra_stack),
        max_locals: code.max_locals,
        insns,
        labels: code.labels.iter().map(|&l| target[l as usize]).collect(),
        handlers: std::mem::take(&mut code.handlers),
        attributes: Vec::new(),
        offsets: Vec::new(),
    };
    for l in &edit.new_locals {
        if l.slot < new.max_locals {
            return Err(EditError::BadEdit(format!(
                "new local {} overlaps the method's {} locals (or the edit's)",
                l.slot, new.max_locals
            )));
        }
        new.max_locals = l
            .slot
            .checked_add(l.slots())
            .ok_or_else(|| EditError::BadEdit("too many locals".into()))?;
    }
    if let Some(h) = handler_at {
        for (start, end, before_super) in ctor::covered(parts.as_deref(), &target, &at) {
            let handler = if before_super {
                pre_handler_at
            } else {
                Some(h)
            };
            let (start, end) = (new.label_at(start), new.label_at(end));
            let handler = new.label_at(handler.unwrap_or(h));
            new.handlers.push(crate::code::Handler {
                start,
                end,
                handler,
                catch_type: 0,
            });
        }
        new.max_stack = new.max_stack.max(1 + edit.extra_stack);
    }
    // Laid out once: the tables below are remapped to these offsets, and the
    // code is encoded with them at the end.
    let layout = layout(&new)?;
    // A conditional widened into an inverted condition over a `goto_w` makes
    // the instruction after it a branch target, which needs a frame from
    // version 50 on (computed below, from the frames before it).
    let widened_frames_needed = class.major_version >= 50 && layout.widened_conditional(&new);
    let this_class = class.this_class;
    let Layout { offsets, widened } = layout;

    // Offset-bearing attributes of the Code attribute.
    let old_index = |o: u32| code.index_at(o);
    let mut attributes = Vec::with_capacity(code.attributes.len() + 1);
    let mut has_frames = false;
    for a in &code.attributes {
        // Matched as bytes: no string per attribute.
        let data: Vec<u8> = match cp.utf8(a.name_index).unwrap_or_default() {
            b"StackMapTable" => {
                let is_static = method.access_flags & 0x0008 != 0;
                let initial = initial_locals(
                    desc,
                    (!is_static).then_some(this_name),
                    uninit_this,
                    &mut |c| cp.class_index(c),
                )
                .ok_or_else(|| bad_descriptor(desc))?;
                let mut frames = decode_frames(&a.data, &initial, &old_index).map_err(malformed)?;
                for f in &mut frames {
                    for l in &edit.new_locals {
                        l.add_to(&mut f.locals)?;
                    }
                    f.at = target[f.at as usize];
                    for t in f.locals.iter_mut().chain(f.stack.iter_mut()) {
                        if let crate::code::VType::Uninitialized(i) = t {
                            *i = at[*i as usize]; // the `new` itself, not a jump target
                        }
                    }
                }
                frames.extend(handler_frames(handler_at, pre_handler_at, cp, edit)?);
                if widened_frames_needed {
                    let added = widened_frames(&new, &widened, &frames, &initial, this_class, cp)
                        .map_err(|e| EditError::Unfollowable(e.to_string()))?;
                    frames.extend(added);
                    frames.sort_by_key(|f| f.at); // stable: none share an instruction
                }
                has_frames = true;
                encode_frames(&frames, &initial, &offsets)
            }
            b"LineNumberTable" => remap_table(&a.data, 4, |e, out| {
                let pc = u16::from_be_bytes([e[0], e[1]]) as u32;
                let i = old_index(pc)
                    .ok_or_else(|| malformed(format!("line entry at {pc}, not an instruction")))?;
                out.extend_from_slice(&(offsets[target[i as usize] as usize] as u16).to_be_bytes());
                out.extend_from_slice(&e[2..4]);
                Ok(())
            })?,
            b"LocalVariableTable" | b"LocalVariableTypeTable" => {
                remap_table(&a.data, 10, |e, out| {
                    let start = u16::from_be_bytes([e[0], e[1]]) as u32;
                    let end = start + u16::from_be_bytes([e[2], e[3]]) as u32;
                    let (Some(s), Some(x)) = (old_index(start), old_index(end)) else {
                        return Err(malformed(format!(
                            "local variable range {start}..{end} does not fall on instructions"
                        )));
                    };
                    let (s, x) = (
                        offsets[target[s as usize] as usize],
                        offsets[target[x as usize] as usize],
                    );
                    out.extend_from_slice(&(s as u16).to_be_bytes());
                    out.extend_from_slice(&((x - s) as u16).to_be_bytes());
                    out.extend_from_slice(&e[4..10]);
                    Ok(())
                })?
            }
            // CLDC's preverifier attribute, which Java SE VMs ignore (jython's
            // generated classes carry one): stale after an edit, so dropped.
            b"StackMap" => continue,
            other => {
                let name = String::from_utf8_lossy(other).into_owned();
                return Err(EditError::UnknownAttribute(name));
            }
        };
        attributes.push(Attribute {
            name_index: a.name_index,
            data: Cow::Owned(data),
        });
    }
    // Without a StackMapTable a version-50 class falls back to the old
    // verifier; adding one for a widened conditional would need frames at
    // every other branch target too.
    if widened_frames_needed && !has_frames {
        return Err(EditError::WideningWithoutFrames);
    }
    // Class files of version 50+ need a frame at the new handler even when the
    // method had no StackMapTable.
    if let (Some(h), false, true) = (handler_at, has_frames, class.major_version >= 50) {
        let is_static = method.access_flags & 0x0008 != 0;
        let initial = initial_locals(
            desc,
            (!is_static).then_some(this_name),
            uninit_this,
            &mut |c| cp.class_index(c),
        )
        .ok_or_else(|| bad_descriptor(desc))?;
        let frames = handler_frames(Some(h), pre_handler_at, cp, edit)?;
        attributes.push(Attribute {
            name_index: cp.add_utf8("StackMapTable"),
            data: Cow::Owned(encode_frames(&frames, &initial, &offsets)),
        });
    }
    new.attributes = attributes;
    let layout = Layout { offsets, widened };
    let body = encode_laid_out(&new, &layout)?;
    class.methods[index].attributes[slot].data = Cow::Owned(body);
    Ok(())
}

/// Frames at the catch-all handlers, the throwable on the stack: after the
/// body no locals of the method's (all Top, so assignable from every point
/// covered) but the edit's own, set before that code; before a
/// constructor's super() call `uninitializedThis` in local 0, which keeps the
/// verifier's flagThisUninit as at the instructions covered.
fn handler_frames(
    after: Option<u32>,
    before_super: Option<u32>,
    cp: &mut crate::ConstantPool<'_>,
    edit: &Edit,
) -> Result<Vec<crate::code::Frame>, EditError> {
    use crate::code::{Frame, VType};
    let throwable = VType::Object(cp.class_index("java/lang/Throwable"));
    let mut frames = Vec::new();
    if let Some(at) = after {
        frames.push(Frame {
            at,
            locals: vec![],
            stack: vec![throwable],
        });
    }
    if let Some(at) = before_super {
        frames.push(Frame {
            at,
            locals: vec![VType::UninitializedThis],
            stack: vec![throwable],
        });
    }
    // The edit's own locals are set before the code the handlers cover.
    for f in &mut frames {
        for l in &edit.new_locals {
            l.add_to(&mut f.locals)?;
        }
    }
    Ok(frames)
}

/// Re-encodes a table of `u16 count` + fixed-size entries through `f`.
fn remap_table(
    data: &[u8],
    size: usize,
    mut f: impl FnMut(&[u8], &mut Vec<u8>) -> Result<(), EditError>,
) -> Result<Vec<u8>, EditError> {
    if data.len() < 2 {
        return Err(malformed("truncated table"));
    }
    let n = u16::from_be_bytes([data[0], data[1]]) as usize;
    if data.len() != 2 + n * size {
        return Err(malformed("table length does not match its count"));
    }
    let mut out = Vec::with_capacity(data.len());
    out.extend_from_slice(&data[..2]);
    for e in data[2..].chunks_exact(size) {
        f(e, &mut out)?;
    }
    Ok(out)
}
