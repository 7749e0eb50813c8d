//! `<coverage>`: per class, per method, the calls and one footprint per
//! source line from the method's first line to its last: -1 no code on
//! that line, 0 code never reached, n times it ran.

use super::XmlWriter;
use crate::model::Coverage;
use profrj_format::coverage as f;
use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};
use std::fmt::Write as _;
use std::io::{self, Write};

pub fn write<W: Write>(w: &mut XmlWriter<W>, c: &Coverage) -> io::Result<()> {
    for class in &c.classes {
        let mut el = BytesStart::new(f::CLASS);
        el.push_attribute((f::class::NAME, super::name(&class.name).as_ref()));
        if let Some(source) = &class.source {
            el.push_attribute((f::class::SOURCE, super::name(source).as_ref()));
        }
        if let Some(id) = class.id {
            el.push_attribute((f::class::ID, format!("{id:016x}").as_str()));
        }
        w.write_event(Event::Start(el))?;
        for m in &class.methods {
            let (first, prints) = footprints(m.lines.as_ref());
            let mut el = BytesStart::new(f::METHOD);
            el.push_attribute((f::method::NAME, super::name(&m.name).as_ref()));
            el.push_attribute((f::method::SIGNATURE, super::name(&m.descriptor).as_ref()));
            el.push_attribute((f::method::FIRST_LINE, first.to_string().as_str()));
            el.push_attribute((f::method::COUNT, m.calls.to_string().as_str()));
            if let Some(g) = m.generated {
                el.push_attribute((f::method::GENERATED, g));
            }
            w.write_event(Event::Start(el))?;
            w.write_event(Event::Start(BytesStart::new(f::FOOTPRINTS)))?;
            w.write_event(Event::Text(BytesText::new(&prints)))?;
            w.write_event(Event::End(BytesEnd::new(f::FOOTPRINTS)))?;
            if !m.branches.is_empty() {
                w.write_event(Event::Start(BytesStart::new(f::BRANCHES)))?;
                w.write_event(Event::Text(BytesText::new(&branches(&m.branches))))?;
                w.write_event(Event::End(BytesEnd::new(f::BRANCHES)))?;
            }
            if !m.instructions.is_empty() {
                let text = cells(&m.instructions);
                w.write_event(Event::Start(BytesStart::new(f::INSTRUCTIONS)))?;
                w.write_event(Event::Text(BytesText::new(&text)))?;
                w.write_event(Event::End(BytesEnd::new(f::INSTRUCTIONS)))?;
            }
            if let Some(filtered) = &m.filtered {
                let mut el = BytesStart::new(f::FILTERED);
                if !filtered.branches.is_empty() {
                    let indexes: Vec<String> =
                        filtered.branches.iter().map(u32::to_string).collect();
                    el.push_attribute((f::filtered::BRANCHES, indexes.join(" ").as_str()));
                }
                if !filtered.merged.is_empty() {
                    let pairs = f::filtered::merged_text(&filtered.merged);
                    el.push_attribute((f::filtered::MERGED, pairs.as_str()));
                }
                w.write_event(Event::Start(el))?;
                w.write_event(Event::Text(BytesText::new(&cells(&filtered.instructions))))?;
                w.write_event(Event::End(BytesEnd::new(f::FILTERED)))?;
            }
            w.write_event(Event::End(BytesEnd::new(f::METHOD)))?;
        }
        w.write_event(Event::End(BytesEnd::new(f::CLASS)))?;
    }
    Ok(())
}

/// The first line and the footprints' text (each count and a space);
/// [`f::method::NO_LINES`] and no text for a method without line numbers.
fn footprints(lines: Option<&(i64, Vec<i64>)>) -> (i64, String) {
    let Some((first, per_line)) = lines else {
        return (f::method::NO_LINES, String::new());
    };
    let mut out = String::with_capacity(per_line.len() * 3);
    for n in per_line {
        let _ = write!(out, "{n} ");
    }
    (*first, out)
}

/// `<instructions>`' (and `<filtered>`'s) text: `C/T` per footprint cell.
fn cells(all: &[(u32, u32)]) -> String {
    let mut text = String::with_capacity(all.len() * 4);
    for (k, (ran, all)) in all.iter().enumerate() {
        let _ = write!(text, "{}{ran}/{all}", if k > 0 { " " } else { "" });
    }
    text
}

/// `<branches>`' text: `LINE:N0,N1… ` per branching instruction.
fn branches(all: &[(i64, Vec<i64>)]) -> String {
    let mut out = String::with_capacity(all.len() * 10);
    for (k, (line, outcomes)) in all.iter().enumerate() {
        if k > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{line}:");
        for (i, n) in outcomes.iter().enumerate() {
            let _ = write!(out, "{}{n}", if i > 0 { "," } else { "" });
        }
    }
    out
}
