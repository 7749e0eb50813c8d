//! What the pages show, computed from a `<coverage>` section before any page
//! is written: per source line its count and status, per method, class and
//! package the figures of the summary tables.
//!
//! - A line's count is the sum over every method with code on it (a lambda
//!   on its enclosing method's line, field initialisers in two
//!   constructors), as LCOV's `DA` (`convert::coverage::sum_lines`).
//! - Its status: missed (count 0), partly (ran, but some branch outcome on
//!   it never taken, or some instruction on it never run where
//!   `<instructions>` says so), covered (ran, nothing known missed).
//! - A class's figures are `report`'s (`report::coverage_table`): lines with
//!   code counted once per class, methods run; a package's and the total are
//!   sums over classes. Branches (`<branches>`, profrj's extension) are
//!   summed where there are some: a figure of branches is `None` when no
//!   method of it has any (an older snapshot, or code without a branch).

use crate::convert::coverage::{package, source_path, sum_lines};
use crate::snapshot::{CoverageClass, CoverageMethod, CoverageSection};
use std::collections::BTreeMap;

/// Covered / total of something countable (lines, branches, methods).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ratio {
    pub covered: u64,
    pub total: u64,
}

impl Ratio {
    pub fn add(self, o: Ratio) -> Ratio {
        Ratio {
            covered: self.covered.saturating_add(o.covered),
            total: self.total.saturating_add(o.total),
        }
    }

    pub fn missed(self) -> u64 {
        self.total.saturating_sub(self.covered)
    }
}

/// Adds `b` to an optional ratio: unknown plus known is known.
fn add_known(a: Option<Ratio>, b: Option<Ratio>) -> Option<Ratio> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.add(b)),
        (a, b) => a.or(b),
    }
}

/// A method's instructions per footprint cell (run, all), from
/// `<instructions>` (docs/SNAPSHOT.md's profrj extension); `None` without
/// them (an older snapshot): a line is then partly covered by its branches
/// only.
fn instructions(m: &CoverageMethod) -> Option<impl Iterator<Item = Ratio> + '_> {
    m.instructions.as_ref().map(|cells| {
        cells.iter().map(|&(ran, all)| Ratio {
            covered: ran,
            total: all,
        })
    })
}

/// One source line with code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineFacts {
    pub count: u64,
    /// Branch outcomes taken / outcomes, when a method has branches on it.
    pub branches: Option<Ratio>,
    /// Instructions run / instructions, when known.
    pub instructions: Option<Ratio>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Covered,
    Partly,
    Missed,
}

impl Status {
    /// The row's CSS class.
    pub fn css(self) -> &'static str {
        match self {
            Status::Covered => "covered",
            Status::Partly => "partly",
            Status::Missed => "missed",
        }
    }
}

impl LineFacts {
    pub fn status(&self) -> Status {
        let missed = |r: Option<Ratio>| r.is_some_and(|r| r.missed() > 0);
        if self.count == 0 {
            Status::Missed
        } else if missed(self.branches) || missed(self.instructions) {
            Status::Partly
        } else {
            Status::Covered
        }
    }
}

/// Each line with code of `methods`, with its facts.
pub fn line_facts<'a>(
    methods: impl IntoIterator<Item = &'a CoverageMethod>,
) -> BTreeMap<u32, LineFacts> {
    let methods: Vec<&CoverageMethod> = methods.into_iter().collect();
    let mut lines: BTreeMap<u32, LineFacts> = sum_lines(methods.iter().copied())
        .into_iter()
        .map(|(line, count)| {
            (
                line,
                LineFacts {
                    count,
                    ..LineFacts::default()
                },
            )
        })
        .collect();
    for m in methods {
        // A branching instruction without a line, or on a line without
        // code (impossible from the agent), has no row to mark.
        for b in &m.branches {
            let Some(facts) = b.line.and_then(|l| lines.get_mut(&l)) else {
                continue;
            };
            let taken = b.outcomes.iter().filter(|&&n| n > 0).count() as u64;
            let r = Ratio {
                covered: taken,
                total: b.outcomes.len() as u64,
            };
            facts.branches = add_known(facts.branches, Some(r));
        }
        let (Some(first), Some(cells)) = (m.first_line, instructions(m)) else {
            continue;
        };
        for (i, r) in cells.enumerate() {
            let line = u32::try_from(i).ok().and_then(|i| i.checked_add(first));
            if let Some(facts) = line.and_then(|l| lines.get_mut(&l)) {
                facts.instructions = add_known(facts.instructions, Some(r));
            }
        }
    }
    lines
}

/// A summary row's figures: lines, branches (when known), methods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Figures {
    pub lines: Ratio,
    pub branches: Option<Ratio>,
    pub methods: Ratio,
}

impl Figures {
    pub fn add(self, o: Figures) -> Figures {
        Figures {
            lines: self.lines.add(o.lines),
            branches: add_known(self.branches, o.branches),
            methods: self.methods.add(o.methods),
        }
    }
}

/// The figures of `methods` (of one class: a line two of them share counts once).
pub fn figures<'a>(methods: impl IntoIterator<Item = &'a CoverageMethod> + Clone) -> Figures {
    let lines = line_facts(methods.clone());
    let branches = lines.values().fold(None, |b, f| add_known(b, f.branches));
    let mut m = Ratio::default();
    for method in methods {
        m.total += 1;
        m.covered += (method.count > 0) as u64;
    }
    Figures {
        lines: Ratio {
            covered: lines.values().filter(|f| f.count > 0).count() as u64,
            total: lines.len() as u64,
        },
        branches,
        methods: m,
    }
}

/// A class (its parts merged when the snapshot lists it twice).
pub struct ClassModel<'a> {
    pub name: &'a str,
    /// Its source path as javac lays it out (`p/q/A.java`).
    pub source: String,
    pub methods: Vec<&'a CoverageMethod>,
    pub figures: Figures,
    /// The first line of its code, to link to (`None` without line numbers).
    pub first_line: Option<u32>,
}

/// A package and its classes, by name.
pub struct PackageModel<'a> {
    pub name: &'a str,
    pub classes: Vec<ClassModel<'a>>,
    pub figures: Figures,
}

/// The section's packages, by name; each one's classes by name.
pub fn packages(cov: &CoverageSection) -> Vec<PackageModel<'_>> {
    let mut by_name: BTreeMap<&str, Vec<&CoverageClass>> = BTreeMap::new();
    for c in &cov.classes {
        by_name.entry(c.name.as_str()).or_default().push(c);
    }
    let mut by_package: BTreeMap<&str, Vec<ClassModel>> = BTreeMap::new();
    for (name, parts) in by_name {
        let methods: Vec<&CoverageMethod> = parts.iter().flat_map(|c| &c.methods).collect();
        // The first part naming a source names the file (as `report`).
        let named = parts
            .iter()
            .find(|c| c.source.is_some())
            .unwrap_or(&parts[0]);
        let class = ClassModel {
            name,
            source: source_path(named),
            figures: figures(methods.iter().copied()),
            first_line: methods
                .iter()
                .filter_map(|m| m.first_line.filter(|_| !m.footprints.is_empty()))
                .min(),
            methods,
        };
        by_package.entry(package(parts[0])).or_default().push(class);
    }
    by_package
        .into_iter()
        .map(|(name, classes)| PackageModel {
            name,
            figures: classes
                .iter()
                .fold(Figures::default(), |f, c| f.add(c.figures)),
            classes,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::coverage::tests::{method, section};
    use crate::snapshot::CoverageBranch;

    #[test]
    fn statuses() {
        let f = |count, branches: Option<(u64, u64)>, instr: Option<(u64, u64)>| {
            let r = |(covered, total)| Ratio { covered, total };
            LineFacts {
                count,
                branches: branches.map(r),
                instructions: instr.map(r),
            }
            .status()
        };
        assert_eq!(f(0, None, None), Status::Missed);
        assert_eq!(f(0, Some((0, 2)), Some((0, 3))), Status::Missed);
        assert_eq!(f(3, None, None), Status::Covered);
        assert_eq!(f(3, Some((2, 2)), Some((3, 3))), Status::Covered);
        assert_eq!(f(3, Some((1, 2)), None), Status::Partly);
        assert_eq!(f(3, None, Some((2, 3))), Status::Partly);
    }

    #[test]
    fn packages_and_figures() {
        let cov = section();
        let pk = packages(&cov);
        let names: Vec<_> = pk.iter().map(|p| p.name).collect();
        assert_eq!(names, ["", "p.q"]);
        let a = &pk[1].classes[0];
        assert_eq!((a.name, a.source.as_str()), ("p.q.A", "p/q/A.java"));
        // Lines 3, 5, 10 (run and lambda share it), 11, 13; methods 4, all run.
        assert_eq!(
            a.figures.lines,
            Ratio {
                covered: 4,
                total: 5
            }
        );
        assert_eq!(
            a.figures.methods,
            Ratio {
                covered: 4,
                total: 4
            }
        );
        assert_eq!(a.figures.branches, None);
        assert_eq!(a.first_line, Some(3));
        assert_eq!(
            pk[1].classes[1].source, "p/q/A.java",
            "A$Inner's outer file"
        );
        assert_eq!(
            pk[1].figures.lines,
            Ratio {
                covered: 4,
                total: 6
            }
        );
        let lines = line_facts([&method("m", Some(7), 2, &[2, -1, 0])]);
        assert_eq!(lines.keys().copied().collect::<Vec<_>>(), [7, 9]);
        assert_eq!(lines[&9].status(), Status::Missed);
    }

    /// Branches of two methods on one line add up; one outcome never taken
    /// makes a line that ran partly covered; a branch without a line, or
    /// on a line without code, marks nothing.
    #[test]
    fn branches_per_line_and_class() {
        let branch = |line, outcomes: &[u64]| CoverageBranch {
            line,
            outcomes: outcomes.to_vec(),
        };
        let mut a = method("a", Some(10), 4, &[4, 4, -1]);
        a.branches = vec![
            branch(Some(10), &[3, 1]),
            branch(Some(11), &[0, 4]),
            branch(None, &[0, 0]),
            branch(Some(12), &[0, 0]),
        ];
        let mut b = method("b", Some(11), 1, &[1]);
        b.branches = vec![branch(Some(11), &[1, 0, 0])];
        let lines = line_facts([&a, &b]);
        let r = |covered, total| Some(Ratio { covered, total });
        assert_eq!(lines[&10].branches, r(2, 2));
        assert_eq!(lines[&10].status(), Status::Covered);
        assert_eq!(lines[&11].branches, r(2, 5));
        assert_eq!((lines[&11].count, lines[&11].status()), (5, Status::Partly));
        let f = figures([&a, &b]);
        assert_eq!(f.branches, r(4, 7));
        assert_eq!(figures([&method("c", Some(1), 1, &[1])]).branches, None);
    }

    /// `<instructions>` as the reader keeps them: a line that ran with an
    /// instruction never run is partly covered; two methods on one line add
    /// up; a bad token is one clear error.
    #[test]
    fn instructions_from_a_snapshot() {
        use crate::snapshot::parse_bytes;
        let xml = |tokens: &str| {
            format!(
                r#"<doc><coverage><class name="p.A" source="A.java">
                <method name="f" signature="()V" firstline="5" count="2"><footprints>2 -1 2 0</footprints>
                <branches>5:2,0</branches><instructions>{tokens}</instructions></method>
                <method name="g" signature="()V" firstline="7" count="1"><footprints>1</footprints>
                <instructions>2/2</instructions></method>
                </class></coverage></doc>"#
            )
        };
        let snap = parse_bytes(xml("4/4 0/0 3/5 0/2").as_bytes()).unwrap();
        let class = &snap.coverage.as_ref().unwrap().classes[0];
        assert_eq!(
            class.methods[0].instructions.as_deref(),
            Some(&[(4, 4), (0, 0), (3, 5), (0, 2)][..])
        );
        let lines = line_facts(&class.methods);
        let r = |covered, total| Some(Ratio { covered, total });
        assert_eq!(lines[&5].instructions, r(4, 4));
        assert_eq!(lines[&5].status(), Status::Partly, "a branch never taken");
        assert_eq!(lines[&7].instructions, r(5, 7));
        assert_eq!((lines[&7].count, lines[&7].status()), (3, Status::Partly));
        assert_eq!(lines[&8].status(), Status::Missed);
        for bad in ["3/2", "x/2", "3"] {
            let e = parse_bytes(xml(bad).as_bytes()).unwrap_err().to_string();
            assert!(e.contains("instructions") && e.contains(bad), "{e}");
        }
    }
}
