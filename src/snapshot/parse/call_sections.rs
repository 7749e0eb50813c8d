//! The call-tree sections' elements (`<sampler>`, `<profile>`, `<alloc>`, …):
//! read alike, as each one's [`SectionDesc`] says.

use super::{unescape_name, Attrs, Open, Parser, RawError, NO_JAVA_FRAME};
use crate::snapshot::spill::SpillWriter;
use crate::snapshot::{
    CallKind, CallSection, CallThread, FrameCounts, JvmThread, Names, Node, SectionDesc, Tree,
    Values, MAX_THREAD_TOTALS, NONE, NO_LINE,
};
use profrj_format::{calls, sampler};
use quick_xml::events::BytesStart;

/// The agent counts every sample in a sampler thread's `cumulated` /
/// `cumulatedElapsed`, but a sample with an empty stack has no node. Such
/// samples become one root node, [`NO_JAVA_FRAME`], so the tree adds up to
/// the thread's figures: for each metric with a
/// [`thread_total`](crate::snapshot::MetricDesc::thread_total).
pub(super) fn add_frameless_samples(
    names: &mut Names,
    sec: &mut CallSection,
    own_sum: &Values,
    spill: Option<&mut SpillWriter>,
) -> std::io::Result<()> {
    let desc = sec.kind.desc();
    let t = sec.threads.last_mut().expect("open");
    let mut v = Values::default();
    for m in desc.metrics {
        let (Some(total), Some(slot)) = (m.thread_total, desc.slot(m.own)) else {
            continue;
        };
        let Some(total) = desc.thread_slot(total).and_then(|i| t.totals[i]) else {
            continue;
        };
        v.0[slot] = total.saturating_sub(own_sum.0[slot]);
        if let Some(c) = m.cumulated.and_then(|c| desc.slot(c)) {
            v.0[c] = v.0[slot];
        }
    }
    if v == Values::default() {
        return Ok(());
    }
    let node = Node {
        name: names.intern(NO_JAVA_FRAME),
        signature: NONE,
        parent: 0,
        depth: 1,
        class: false,
        line: NO_LINE,
        v,
        types: FrameCounts::default(),
    };
    t.tree.push(node, spill)
}

impl Parser {
    pub(super) fn open_calls(&mut self, kind: CallKind, e: &BytesStart) -> Result<Open, RawError> {
        self.kind = kind;
        let desc = kind.desc();
        let a = self.attrs(e)?;
        let live = match desc.live {
            Some(key) => self.boolean(&a, key)?.unwrap_or(false),
            None => false,
        };
        let live_rule = desc.live_rule.and_then(|key| a.get(key));
        let values = desc
            .section_values
            .iter()
            .map(|&(key, _)| self.number(&a, key))
            .collect::<Result<Vec<_>, _>>()?;
        // A second element of a section adds its threads to the first's.
        match self.snap.call_sections.iter_mut().find(|c| c.kind == kind) {
            Some(sec) => sec.live |= live,
            None => self.snap.call_sections.push(CallSection {
                kind,
                typed: false,
                live,
                live_rule,
                values,
                threads: Vec::new(),
            }),
        }
        Ok(Open::Calls)
    }

    pub(super) fn section(&mut self) -> &mut CallSection {
        let kind = self.kind;
        self.snap
            .call_sections
            .iter_mut()
            .find(|c| c.kind == kind)
            .expect("section opened before its threads")
    }

    pub(super) fn call_thread(&mut self, e: &BytesStart) -> Result<CallThread, RawError> {
        self.own_sum = Values::default();
        let a = self.attrs(e)?;
        let jvm_thread = match a.get(sampler::thread::JVM_THREAD).as_deref() {
            None => None,
            Some(v) => Some(JvmThread::from_name(v).ok_or_else(|| {
                self.err(format!(
                    "<{}> attribute {}={v:?} is not one of {}",
                    calls::THREAD,
                    sampler::thread::JVM_THREAD,
                    sampler::thread::JVM_THREAD_KINDS.join(", ")
                ))
            })?),
        };
        let mut totals = [None; MAX_THREAD_TOTALS];
        for (t, &(key, _)) in totals.iter_mut().zip(self.kind.desc().thread_totals) {
            *t = self.number(&a, key)?;
        }
        // Every section's thread has a name; the rest as the section has them.
        Ok(CallThread {
            name: self.required(&a, calls::NAME)?,
            cpu_time: self.number(&a, calls::CPU_TIME)?,
            elapsed_time: self.number(&a, sampler::thread::ELAPSED_TIME)?,
            is_alive: self.boolean(&a, calls::IS_ALIVE)?,
            virtual_threads: self.number(&a, calls::VIRTUAL_THREADS)?,
            ended_threads: self.number(&a, calls::ENDED_THREADS)?,
            totals,
            jvm_thread,
            tree: match &self.spill {
                Some(w) => Tree::spilled(w.pos()),
                None => Tree::new(),
            },
        })
    }

    /// A `true`/`false` attribute.
    pub(super) fn boolean(&self, a: &Attrs, key: &str) -> Result<Option<bool>, RawError> {
        match a.get(key).as_deref() {
            None => Ok(None),
            Some(profrj_format::TRUE) => Ok(Some(true)),
            Some(profrj_format::FALSE) => Ok(Some(false)),
            Some(v) => Err(self.err(format!(
                "{key}={v:?} is not {} or {}",
                profrj_format::TRUE,
                profrj_format::FALSE
            ))),
        }
    }

    /// Reads a node below `parent` (its index and depth): its index and depth.
    pub(super) fn call_node(
        &mut self,
        e: &BytesStart,
        parent: u32,
        parent_depth: u32,
    ) -> Result<(u32, u32), RawError> {
        let desc = self.kind.desc();
        // One pass over the attributes: this is the element a large snapshot is made of.
        let (mut name, mut signature, mut class, mut v) = (None, None, false, Values::default());
        let mut line = NO_LINE;
        let mut types = FrameCounts::default();
        // No duplicate check by quick-xml (quadratic in the attributes);
        // a known key given twice is caught here instead.
        let mut seen = 0u32;
        for a in e.attributes().with_checks(false) {
            let a = a.map_err(|err| self.err(format!("bad attribute: {err}")))?;
            // A key that is not UTF-8 is none of the format's: "" matches none.
            let key = std::str::from_utf8(a.key.as_ref()).unwrap_or("");
            // What the key is: name, signature, class marker, or a value's slot.
            let Some(bit) = node_key(desc, key) else {
                continue;
            };
            if seen & (1 << bit) != 0 {
                return Err(self.err(format!("<{}> has the attribute {key} twice", calls::NODE)));
            }
            seen |= 1 << bit;
            if bit == LINE_BIT {
                line = std::str::from_utf8(&a.value)
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
                    .filter(|&l| l != NO_LINE)
                    .ok_or_else(|| {
                        self.err(format!(
                            "<{}> attribute {key}={:?} is not a line number",
                            calls::NODE,
                            String::from_utf8_lossy(&a.value)
                        ))
                    })?;
                continue;
            }
            if bit == FRAME_TYPES_BIT || bit == SELF_TYPES_BIT {
                let into = if bit == FRAME_TYPES_BIT {
                    &mut types.through
                } else {
                    &mut types.own
                };
                let value = std::str::from_utf8(&a.value).unwrap_or("\u{fffd}");
                FrameCounts::read(into, value)
                    .map_err(|e| self.err(format!("<{}> attribute {key}: {e}", calls::NODE)))?;
                continue;
            }
            if bit < FIRST_VALUE {
                let s = a
                    .unescape_value()
                    .map_err(|err| self.err(format!("bad attribute value: {err}")))?;
                match bit {
                    NAME_BIT | SIGNATURE_BIT => {
                        let id = self.snap.names.intern(&unescape_name(&s));
                        *(if bit == NAME_BIT {
                            &mut name
                        } else {
                            &mut signature
                        }) = Some(id);
                    }
                    _ => {
                        class = match &*s {
                            profrj_format::TRUE => true,
                            profrj_format::FALSE => false,
                            v => {
                                return Err(self.err(format!(
                                    "<{}> attribute {key}={v:?} is not {} or {}",
                                    calls::NODE,
                                    profrj_format::TRUE,
                                    profrj_format::FALSE
                                )))
                            }
                        }
                    }
                }
                continue;
            }
            v.0[bit as usize - FIRST_VALUE as usize] = std::str::from_utf8(&a.value)
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .ok_or_else(|| {
                    self.err(format!(
                        "<{}> attribute {key}={:?} is not a non-negative integer",
                        calls::NODE,
                        String::from_utf8_lossy(&a.value)
                    ))
                })?;
        }
        let name = name.ok_or_else(|| {
            self.err(format!(
                "<{}> lacks the attribute {}",
                calls::NODE,
                calls::NAME
            ))
        })?;
        let err = self.err("more than 4 billion call-tree nodes in one thread".into());
        for (s, x) in self.own_sum.0.iter_mut().zip(v.0) {
            *s = s.saturating_add(x);
        }
        let depth = parent_depth + 1;
        let kind = self.kind;
        let sec = self.snap.call_sections.iter_mut().find(|c| c.kind == kind);
        let sec = sec.expect("open");
        sec.typed |= types.any();
        let tree = &mut sec.threads.last_mut().expect("open").tree;
        let id = u32::try_from(tree.len())
            .ok()
            .filter(|&i| i != NONE)
            .ok_or(err)?;
        let node = Node {
            name,
            signature: signature.unwrap_or(NONE),
            parent,
            depth,
            class,
            line,
            v,
            types,
        };
        tree.push(node, self.spill.as_mut()).map_err(|e| RawError {
            offset: self.offset,
            message: format!("the call trees' scratch file: {e}"),
            opened: None,
        })?;
        Ok((id, depth))
    }
}

/// A call section's tag to its kind.
pub(super) fn call_kind(tag: &str) -> Option<CallKind> {
    CallKind::ALL.into_iter().find(|k| k.tag() == tag)
}

/// The bits of a node's known attributes (for the duplicate check): its
/// name, its signature, its class marker, then one per value slot.
const NAME_BIT: u32 = 0;
const SIGNATURE_BIT: u32 = 1;
const CLASS_BIT: u32 = 2;
const LINE_BIT: u32 = 3;
const FRAME_TYPES_BIT: u32 = 4;
const SELF_TYPES_BIT: u32 = 5;
const FIRST_VALUE: u32 = 6;

/// Which of the section's node attributes `key` is, as its bit.
fn node_key(desc: &SectionDesc, key: &str) -> Option<u32> {
    if key == calls::NAME {
        Some(NAME_BIT)
    } else if desc.signature == Some(key) {
        Some(SIGNATURE_BIT)
    } else if desc.class_marker == Some(key) {
        Some(CLASS_BIT)
    } else if key == sampler::node::LINE {
        Some(LINE_BIT)
    } else if desc.tag == sampler::SECTION && key == sampler::node::FRAME_TYPES {
        Some(FRAME_TYPES_BIT)
    } else if desc.tag == sampler::SECTION && key == sampler::node::SELF_TYPES {
        Some(SELF_TYPES_BIT)
    } else {
        desc.slot(key).map(|i| FIRST_VALUE + i as u32)
    }
}
