//! What `coverage` hands a snapshot: per class (by name), per method, the
//! calls and each source line's count from the method's first line to its
//! last: -1 no code on that line, 0 code never reached, n times it ran.

use super::{Counts, MethodLines};
use crate::model::{Coverage, CoveredClass, CoveredMethod, Filtered, Part, Section};

/// The `coverage` section of `c`.
pub fn section(c: &Counts) -> Section {
    let classes = c
        .classes
        .iter()
        .map(|(name, class)| CoveredClass {
            name: name.replace('/', "."),
            source: class.source.clone(),
            id: class.id,
            methods: class
                .methods
                .iter()
                .map(|&id| {
                    let m = &c.methods[id as usize];
                    let counts = c.counts.get(id as usize).and_then(Option::as_ref);
                    let (instructions, filtered) = instructions(m, counts.map(Vec::as_slice));
                    CoveredMethod {
                        name: m.name.clone(),
                        descriptor: m.descriptor.clone(),
                        calls: counts.map_or(0, |c| m.calls(c)),
                        lines: lines(m, counts.map(Vec::as_slice)),
                        branches: m.branch_counts(counts.map(Vec::as_slice)),
                        instructions,
                        filtered,
                        generated: m.generated,
                    }
                })
                .collect(),
        })
        .collect();
    Section {
        name: profrj_format::coverage::SECTION,
        extra: false,
        attributes: Vec::new(),
        parts: vec![Part::Coverage(Coverage { classes })],
    }
}

/// The first line and each line's count from it (`None` for a method
/// without line numbers). `counts`: the method's counter array; `None`
/// when the method never ran.
pub fn lines(m: &MethodLines, counts: Option<&[i64]>) -> Option<(i64, Vec<i64>)> {
    let (Some(&first), Some(&last)) = (m.lines.iter().min(), m.lines.iter().max()) else {
        return None;
    };
    let mut per_line: Vec<i64> = vec![-1; (last - first) as usize + 1];
    for (k, &line) in m.lines.iter().enumerate() {
        let n = counts.map_or(0, |c| m.point_count(k, c));
        let cell = &mut per_line[(line - first) as usize];
        *cell = (*cell).max(0) + n;
    }
    Some((first as i64, per_line))
}

/// Per footprint cell, (instructions run, instructions), for a method with
/// line numbers and its instructions known; and what of them and of its
/// branches JaCoCo's filters inside a method ignore, when they ignore any.
fn instructions(m: &MethodLines, counts: Option<&[i64]>) -> (Vec<(u32, u32)>, Option<Filtered>) {
    let (Some(&first), Some(&last)) = (m.lines.iter().min(), m.lines.iter().max()) else {
        return (Vec::new(), None);
    };
    if m.insns.is_empty() {
        return (Vec::new(), None);
    }
    let (all, ignored) = m.instruction_counts(first, last, counts);
    let filtered = (!ignored.is_empty() || !m.filtered.branches.is_empty()).then(|| Filtered {
        instructions: ignored,
        branches: m.filtered.branches.clone(),
        merged: m.filtered.merged_branches.clone(),
    });
    (all, filtered)
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
            branches: Vec::new(),
            insns: Vec::new(),
            filtered: Default::default(),
            runs: Vec::new(),
            generated: None,
        }
    }

    #[test]
    fn lines_sum_their_entry_points_and_gaps_are_minus_one() {
        // A loop header at line 10 entered twice (init, increment), body at 11.
        let lines = m(&[10, 11, 10, 13]);
        assert_eq!(
            super::lines(&lines, Some(&[5, 5, 5000, 5000, 5])),
            Some((10, vec![5005, 5000, -1, 5]))
        );
        assert_eq!(super::lines(&lines, None), Some((10, vec![0, 0, -1, 0])));
        assert_eq!(super::lines(&m(&[]), Some(&[3])), None);
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
            super::lines(&lines, Some(&[5, 5, 5000, 5000])),
            Some((10, vec![10010, 5000, -1, 5]))
        );
    }

    /// profrj's extension elements, pinned: `<branches>` (one token per
    /// branching instruction) and `<instructions>` (one per footprint cell).
    #[test]
    fn bytes_of_branches_and_instructions() {
        // Lines 10 and 12; a conditional on 10 (fell: slot 1, jumped: slot 2),
        // a switch on 12 (three targets); instructions: 3 on line 10 that
        // ran with slot 1, 2 on line 12 that never ran (slot 3).
        let mut m = m(&[10, 12]);
        m.slots = 4;
        m.branches = vec![
            (10, vec![vec![(1, 1)], vec![(2, 1)]]),
            (12, vec![vec![(3, 1)], vec![(0, 1), (1, -1)], vec![]]),
        ];
        m.insns = vec![(10, 3, 0), (12, 2, 1)];
        m.runs = vec![vec![vec![(1, 1)]], vec![vec![(3, 1)]]];
        let counts = Counts {
            classes: vec![(
                "A".into(),
                super::super::ClassLines {
                    source: None,
                    id: None,
                    methods: vec![0],
                },
            )],
            methods: vec![m],
            counts: vec![Some(vec![7, 5, 2, 0])],
        };
        let text = crate::xml::to_text(&[], (0, 0), vec![section(&counts)]);
        assert!(
            text.contains(
                "<footprints>5 -1 2 </footprints>\n    <branches>10:5,2 12:0,2,0</branches>\n    <instructions>3/3 0/0 0/2</instructions>\n"
            ),
            "{text}"
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
                    id: Some(0x0123_4567_89ab_cdef),
                    methods: vec![0, 1],
                },
            )],
            methods: vec![m(&[10, 12]), none],
            counts: vec![Some(vec![4, 4, 3]), None],
        };
        let text = crate::xml::to_text(&[], (0, 0), vec![section(&counts)]);
        assert_eq!(
            text,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
 <coverage>
  <class name="p.A" source="A.java" id="0123456789abcdef">
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
