//! The `<coverage>` section: per class (by name), per method, the calls and
//! one footprint per source line from the method's first line to its last:
//! -1 no code on that line, 0 code never reached, n times it ran.

use super::{Counts, MethodLines};
use crate::snapshot::XmlWriter;
use profrj_format::coverage as f;
use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};
use std::fmt::Write as _;
use std::io;

pub fn write_section(w: &mut XmlWriter, c: &Counts) -> io::Result<()> {
    w.write_event(Event::Start(BytesStart::new(f::SECTION)))?;
    for (name, class) in &c.classes {
        let mut el = BytesStart::new(f::CLASS);
        el.push_attribute((
            f::class::NAME,
            crate::xml::name(&name.replace('/', ".")).as_ref(),
        ));
        if let Some(source) = &class.source {
            el.push_attribute((f::class::SOURCE, crate::xml::name(source).as_ref()));
        }
        w.write_event(Event::Start(el))?;
        for &id in &class.methods {
            let m = &c.methods[id as usize];
            let counts = c.counts.get(id as usize).and_then(Option::as_ref);
            let (first, prints) = footprints(m, counts.map(Vec::as_slice));
            let mut el = BytesStart::new(f::METHOD);
            el.push_attribute((f::method::NAME, crate::xml::name(&m.name).as_ref()));
            el.push_attribute((
                f::method::SIGNATURE,
                crate::xml::name(&m.descriptor).as_ref(),
            ));
            el.push_attribute((f::method::FIRST_LINE, first.to_string().as_str()));
            let calls = counts.map_or(0, |c| m.calls(c));
            el.push_attribute((f::method::COUNT, calls.to_string().as_str()));
            w.write_event(Event::Start(el))?;
            w.write_event(Event::Start(BytesStart::new(f::FOOTPRINTS)))?;
            w.write_event(Event::Text(BytesText::new(&prints)))?;
            w.write_event(Event::End(BytesEnd::new(f::FOOTPRINTS)))?;
            w.write_event(Event::End(BytesEnd::new(f::METHOD)))?;
        }
        w.write_event(Event::End(BytesEnd::new(f::CLASS)))?;
    }
    w.write_event(Event::End(BytesEnd::new(f::SECTION)))?;
    Ok(())
}

/// The first line and the footprints text ([`f::method::NO_LINES`] for a
/// method without line numbers, with no footprints). `counts`: the method's counter array;
/// `None` when the method never ran.
pub fn footprints(m: &MethodLines, counts: Option<&[i64]>) -> (i64, String) {
    let (Some(&first), Some(&last)) = (m.lines.iter().min(), m.lines.iter().max()) else {
        return (f::method::NO_LINES, String::new());
    };
    let mut per_line: Vec<i64> = vec![-1; (last - first) as usize + 1];
    for (k, &line) in m.lines.iter().enumerate() {
        let n = counts.map_or(0, |c| m.point_count(k, c));
        let cell = &mut per_line[(line - first) as usize];
        *cell = (*cell).max(0) + n;
    }
    let mut out = String::with_capacity(per_line.len() * 3);
    for n in per_line {
        let _ = write!(out, "{n} ");
    }
    (first as i64, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(lines: &[u16]) -> MethodLines {
        MethodLines {
            class: "A".into(),
            name: "f".into(),
            descriptor: "()V".into(),
            lines: lines.to_vec(),
            counts: (1..=lines.len() as u32).map(|k| vec![(k, 1)]).collect(),
            slots: lines.len() + 1,
            calls_in_first_line: false,
        }
    }

    #[test]
    fn lines_sum_their_entry_points_and_gaps_are_minus_one() {
        // A loop header at line 10 entered twice (init, increment), body at 11.
        let lines = m(&[10, 11, 10, 13]);
        assert_eq!(
            footprints(&lines, Some(&[5, 5, 5000, 5000, 5])),
            (10, "5005 5000 -1 5 ".into())
        );
        assert_eq!(footprints(&lines, None), (10, "0 0 -1 0 ".into()));
        assert_eq!(footprints(&m(&[]), Some(&[3])), (-1, String::new()));
    }

    #[test]
    fn derived_points_are_sums_and_differences_of_counters() {
        // for (init 10; cond 10; step 10) body 11; after 13: the header's
        // condition = init + step, the exit = condition - body.
        let mut lines = m(&[10, 10, 11, 10, 13]);
        lines.counts = vec![
            vec![(1, 1)],
            vec![(1, 1), (3, 1)],
            vec![(2, 1)],
            vec![(3, 1)],
            vec![(1, 1), (3, 1), (2, -1)],
        ];
        lines.slots = 4;
        // 5 calls, 5000 iterations.
        assert_eq!(
            footprints(&lines, Some(&[5, 5, 5000, 5000])),
            (10, "10010 5000 -1 5 ".into())
        );
    }

    /// The bytes of a small section, pinned (the names are `profrj_format`'s,
    /// the layout the contract's; a change here changes the format).
    #[test]
    fn bytes_of_a_small_section() {
        let mut none = m(&[]);
        none.name = "<init>".into();
        let counts = Counts {
            classes: vec![(
                "p/A".into(),
                super::super::ClassLines {
                    source: Some("A.java".into()),
                    methods: vec![0, 1],
                },
            )],
            methods: vec![m(&[10, 12]), none],
            counts: vec![Some(vec![4, 4, 3]), None],
        };
        let text = crate::snapshot::written("coverage-bytes", |w| write_section(w, &counts));
        assert_eq!(
            text,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
 <coverage>
  <class name="p.A" source="A.java">
   <method name="f" signature="()V" firstline="10" count="4">
    <footprints>4 -1 3 </footprints>
   </method>
   <method name="&lt;init&gt;" signature="()V" firstline="-1" count="0">
    <footprints></footprints>
   </method>
  </class>
 </coverage>
</doc>
"#
        );
    }
}
