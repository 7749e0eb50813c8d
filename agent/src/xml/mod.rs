//! The ProfilerJ XML writer: a snapshot's [`crate::model`] as the document
//! `/work/shared/spec/profilerj-snapshot-format.txt` describes (and the
//! sections of profrj's own after the contract's four), with the names of
//! `profrj_format`, which the CLI reads with. The modes know nothing of
//! this: each hands its sections, and the layouts here say how each kind is
//! written; a section of a kind not listed is written in the shape of
//! `<alloc>` from its own names.
//!
//! - `trees`: call-tree sections (`<sampler>`, `<profile>`, `<alloc>`,
//!   `<lock>`, `<sites>`);
//! - `tables`: `<memory>`'s rows and `<lock>`'s monitor dump;
//! - `coverage`: `<coverage>`;

mod coverage;
mod indent;
mod tables;
mod trees;

pub use crate::escape::name;

use crate::model::{Part, Section, Snapshot, Value};
use indent::CappedIndent;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, Event};
use std::io::{self, Write};

/// The writer every section writes through: one space of indentation per
/// level, as ProfilerJ's snapshots were, up to
/// [`MAX_INDENT`](indent::MAX_INDENT) levels.
pub type XmlWriter<W> = quick_xml::Writer<CappedIndent<W>>;

/// Writes `snapshot` as a ProfilerJ document to `out`: the contract's
/// sections in order, then profrj's own.
pub fn write<W: Write>(snapshot: &Snapshot, out: W) -> io::Result<W> {
    let mut w = quick_xml::Writer::new_with_indent(CappedIndent::new(out), b' ', 1);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.write_event(Event::Start(BytesStart::new(profrj_format::DOC)))?;
    let contract = snapshot.sections.iter().filter(|s| !s.extra);
    let extra = snapshot.sections.iter().filter(|s| s.extra);
    for section in contract.chain(extra) {
        write_section(&mut w, snapshot, section)?;
    }
    w.write_event(Event::End(BytesEnd::new(profrj_format::DOC)))?;
    let mut out = w.into_inner().into_inner();
    out.write_all(b"\n")?;
    Ok(out)
}

fn write_section<W: Write>(
    w: &mut XmlWriter<W>,
    snapshot: &Snapshot,
    section: &Section,
) -> io::Result<()> {
    let mut el = BytesStart::new(section.name);
    for (key, value) in &section.attributes {
        match value {
            Value::Number(n) => el.push_attribute((*key, n.to_string().as_str())),
            Value::Flag(b) => el.push_attribute((*key, profrj_format::boolean(*b))),
            Value::Word(w) => el.push_attribute((*key, *w)),
        }
    }
    w.write_event(Event::Start(el))?;
    for part in &section.parts {
        match part {
            Part::Trees(t) => trees::write(w, snapshot, section.name, t)?,
            Part::Rows(r) => tables::write_rows(w, snapshot, section.name, r)?,
            Part::Coverage(c) => coverage::write(w, c)?,
            Part::Monitors(m) => tables::write_monitors(w, m)?,
        }
    }
    w.write_event(Event::End(BytesEnd::new(section.name)))?;
    Ok(())
}

/// The name of the thread with table id `id` (`None`, or one the table
/// lacks: `(unknown)`).
fn thread_name<'a>(snapshot: &Snapshot<'a>, id: Option<crate::threads::ThreadId>) -> &'a str {
    id.and_then(|t| snapshot.threads.get(t.0 as usize))
        .map_or("(unknown)", |r| r.name.as_str())
}

/// Marks a `<thread>` that is a group of virtual threads with how many
/// joined it (`virtualThreads`), or a group of ended threads with how many
/// were folded into it (`endedThreads`), profrj's own attributes; nothing
/// on a platform thread.
fn push_virtual_threads(
    el: &mut quick_xml::events::BytesStart,
    snapshot: &Snapshot,
    id: Option<crate::threads::ThreadId>,
) {
    let Some(t) = id.and_then(|t| snapshot.threads.get(t.0 as usize)) else {
        return;
    };
    if t.is_group() {
        el.push_attribute((
            profrj_format::calls::VIRTUAL_THREADS,
            t.virtual_threads.to_string().as_str(),
        ));
    }
    if t.ended_threads > 0 {
        el.push_attribute((
            profrj_format::calls::ENDED_THREADS,
            t.ended_threads.to_string().as_str(),
        ));
    }
}

/// The document of `sections` (with `threads` and `window`), as text: for
/// the tests that pin a section's bytes.
#[cfg(test)]
pub fn to_text(
    records: &[crate::threads::ThreadRecord],
    window: (u64, u64),
    sections: Vec<Section>,
) -> String {
    let threads = &crate::threads::shared(records);
    let snapshot = Snapshot {
        threads,
        window,
        sections,
    };
    String::from_utf8(write(&snapshot, Vec::new()).unwrap()).unwrap()
}
