//! `<coverage>` summed over snapshots through one external sorter. Every
//! figure becomes a record whose key places it (class, then method, then
//! cell) and whose numbers sum; the sorter gives the records back in key
//! order, one per key, which is the order the output is written in.
//!
//! Keys: the class name (escaped as the snapshot writes it) and `\0`, then
//! - `\0` `id?` `source`: the class (one per distinct id and source);
//! - `\1` method `\0` signature `\0` firstline, then
//!   - `\0`: the method; `\1` cell: a footprint; `\2` branch outcome: a
//!     branch's outcome; `\3` cell: an instruction cell; `\4` cell: a
//!     `<filtered>` cell (what JaCoCo's filters inside a method ignore).
//!
//! Numbers (six; the last two are the smallest of a key's records, kept
//! whole, not summed): see each `push` below.
//!
//! Exactness: calls, footprints and branch outcomes are counts: they sum.
//! An instruction cell says how many of a line's instructions ran; two JVMs
//! that each ran some may have run the same or different ones, so a merged
//! cell is known only when at most one JVM ran any of them, or one ran them
//! all; else the method's `<instructions>` is left out (unknown). The
//! same for `<filtered>`, kept only with `<instructions>` and where every
//! input that had the method had it (the same class bytes give the same).

use super::{attr, Warnings};
use crate::error::CliError;
use crate::snapshot::{CoverageMethod, CoverageSection};
use crate::sort::{budget, Merged, Sorter};
use profrj_format::coverage as f;
use profrj_format::names::escape;
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

const WIDTH: usize = 6;
const TAIL: usize = 2;

const CLASS: u8 = 0;
const METHOD: u8 = 1;
const M_HEAD: u8 = 0;
const M_CELL: u8 = 1;
const M_BRANCH: u8 = 2;
const M_INSTR: u8 = 3;
const M_FILTERED: u8 = 4;

/// `generated`'s code in a record: its place in `GENERATED_KINDS` from 1
/// (0: none; a value unknown to this reader is none too).
fn generated_code(g: Option<&str>) -> u64 {
    g.and_then(|g| f::method::GENERATED_KINDS.iter().position(|&k| k == g))
        .map_or(0, |i| i as u64 + 1)
}

pub struct CoverageMerge {
    sorter: Sorter,
    any: bool,
}

/// The sorted records, ready to be written.
pub struct SortedCoverage {
    merged: Option<Merged>,
    files: Vec<String>,
    refusal: Option<String>,
}

impl CoverageMerge {
    pub fn new() -> Result<CoverageMerge, CliError> {
        Ok(CoverageMerge {
            sorter: Sorter::new(WIDTH, budget(32 << 20))?.min_tail(TAIL),
            any: false,
        })
    }

    /// Adds one input's section; `file`: its index among the inputs.
    pub fn add(&mut self, file: usize, cov: &CoverageSection) -> io::Result<()> {
        self.any = true;
        let file = file as u64;
        let mut key = Vec::new();
        for c in &cov.classes {
            key.clear();
            key.extend_from_slice(escape(&c.name).as_bytes());
            key.push(0);
            let class_len = key.len();
            key.push(CLASS);
            match c.id {
                Some(id) => {
                    key.push(1);
                    key.extend_from_slice(&id.to_be_bytes());
                }
                None => key.push(0),
            }
            key.extend_from_slice(escape(c.source.as_deref().unwrap_or("")).as_bytes());
            // inputs with the class, -, -, -, first file.
            self.sorter.push(&key, &[1, 0, 0, 0, file, 0])?;
            for m in &c.methods {
                key.truncate(class_len);
                self.add_method(&mut key, file, m)?;
            }
        }
        Ok(())
    }

    fn add_method(&mut self, key: &mut Vec<u8>, file: u64, m: &CoverageMethod) -> io::Result<()> {
        key.push(METHOD);
        key.extend_from_slice(escape(&m.name).as_bytes());
        key.push(0);
        key.extend_from_slice(escape(&m.signature).as_bytes());
        key.push(0);
        key.extend_from_slice(&m.first_line.unwrap_or(u32::MAX).to_be_bytes());
        let method_len = key.len();
        key.push(M_HEAD);
        // calls, inputs with the method, inputs with <branches>, with
        // <instructions>; kept: the first file's number and `generated` (the
        // same class bytes give the same).
        let values = [
            m.count,
            1,
            // (Empty: none, or an older snapshot's unknown.)
            u64::from(!m.branches.is_empty()),
            u64::from(m.instructions.is_some()),
            file,
            generated_code(m.generated.as_deref()),
        ];
        self.sorter.push(key, &values)?;
        for (i, &n) in m.footprints.iter().enumerate() {
            key.truncate(method_len);
            key.push(M_CELL);
            key.extend_from_slice(&(i as u32).to_be_bytes());
            // has code (inputs), count.
            let values = [u64::from(n >= 0), n.max(0) as u64, 0, 0, 0, 0];
            self.sorter.push(key, &values)?;
        }
        let ignored: HashSet<u32> = m
            .filtered
            .iter()
            .flat_map(|f| f.branches.iter().copied())
            .collect();
        let merged: HashMap<u32, u32> = m
            .filtered
            .iter()
            .flat_map(|f| f.merged.iter().copied())
            .collect();
        for (b, point) in m.branches.iter().enumerate() {
            // 0 kept, 1 ignored, 2 + j a `finally` copy of branch j.
            let ignored = match (ignored.contains(&(b as u32)), merged.get(&(b as u32))) {
                (false, _) => 0,
                (true, None) => 1,
                (true, Some(&j)) => 2 + u64::from(j),
            };
            for (o, &n) in point.outcomes.iter().enumerate() {
                key.truncate(method_len);
                key.push(M_BRANCH);
                key.extend_from_slice(&(b as u32).to_be_bytes());
                key.extend_from_slice(&(o as u32).to_be_bytes());
                // count; kept: the line (+1, 0: none) and whether JaCoCo's
                // filters ignore the branch, or merge it, in every input
                // (the smallest: kept where an input kept it).
                let line = point.line.map_or(0, |l| u64::from(l) + 1);
                self.sorter.push(key, &[n, 0, 0, 0, line, ignored])?;
            }
        }
        for (i, &(c, t)) in m.instructions.iter().flatten().enumerate() {
            key.truncate(method_len);
            key.push(M_INSTR);
            key.extend_from_slice(&(i as u32).to_be_bytes());
            // inputs that ran some, -, -, -; kept: the fewest not run (the
            // most run) and the instructions.
            self.sorter
                .push(key, &[u64::from(c > 0), 0, 0, 0, t - c, t])?;
        }
        let filtered = m.filtered.iter().flat_map(|f| f.instructions.iter());
        for (i, &(c, t)) in filtered.enumerate() {
            key.truncate(method_len);
            key.push(M_FILTERED);
            key.extend_from_slice(&(i as u32).to_be_bytes());
            // inputs that ran some, inputs with it, -, -; kept as for
            // instructions.
            self.sorter
                .push(key, &[u64::from(c > 0), 1, 0, 0, t - c, t])?;
        }
        Ok(())
    }

    pub fn finish(self, files: &[String]) -> Result<SortedCoverage, CliError> {
        let merged = if self.any {
            Some(
                self.sorter
                    .finish()
                    .map_err(|e| CliError::Output(format!("merge's scratch file: {e}")))?,
            )
        } else {
            None
        };
        Ok(SortedCoverage {
            merged,
            files: files.to_vec(),
            refusal: None,
        })
    }
}

/// The method being written: what its closing needs.
#[derive(Default)]
struct OpenMethod {
    inputs: u64,
    with_branches: u64,
    with_instructions: u64,
    /// `<branches>`' text so far, and the branch being written.
    branches: String,
    branch: Option<u32>,
    /// `<instructions>`' text; `false` once a cell cannot be known.
    instructions: String,
    instructions_exact: bool,
    /// `<filtered>`: its branch indexes, its text, and `false` once a cell
    /// cannot be known or an input lacked it.
    filtered_branches: Vec<u32>,
    /// `(k, j)`: branch k a `finally` copy of branch j.
    merged_branches: Vec<(u32, u32)>,
    filtered: String,
    filtered_exact: bool,
}

impl SortedCoverage {
    /// Two different classes of one name met while writing: the command's
    /// error (the output is not made).
    pub fn refusal(&self) -> Option<CliError> {
        self.refusal.clone().map(CliError::Input)
    }

    pub fn write(&mut self, w: &mut dyn Write, warn: &mut Warnings) -> io::Result<()> {
        let Some(mut merged) = self.merged.take() else {
            return Ok(());
        };
        writeln!(w, " <{}>", f::SECTION)?;
        let mut class: Option<Vec<u8>> = None;
        // The open class's records (id, source, first file), and whether
        // its element is out: it is written before its first method, once
        // every record of it (one per distinct id and source) is in.
        let mut heads: Vec<(Option<u64>, Vec<u8>, u64)> = Vec::new();
        let mut written = false;
        let mut method: Option<OpenMethod> = None;
        while let Some((key, v)) = merged.next_record()? {
            let Some(zero) = key.iter().position(|&b| b == 0) else {
                return Err(io::Error::other("a coverage record without a class"));
            };
            let (name, rest) = (&key[..zero], &key[zero + 1..]);
            if class.as_deref() != Some(name) {
                if let Some(prev) = class.take() {
                    close_method(w, method.take(), warn)?;
                    if !written {
                        write_class(w, &prev, &heads, warn)?;
                    }
                    writeln!(w, "  </{}>", f::CLASS)?;
                }
                class = Some(name.to_vec());
                heads.clear();
                written = false;
            }
            match rest.split_first() {
                Some((&CLASS, head)) => {
                    let (id, source) = match head.split_first() {
                        Some((1, h)) if h.len() >= 8 => (
                            Some(u64::from_be_bytes(h[..8].try_into().expect("8"))),
                            &h[8..],
                        ),
                        Some((_, h)) => (None, h),
                        None => (None, head),
                    };
                    heads.push((id, source.to_vec(), v[4]));
                    if let Some(msg) = self.conflict(name, &heads) {
                        self.refusal = Some(msg);
                        return Err(io::Error::other("two classes of one name"));
                    }
                }
                Some((&METHOD, m)) => {
                    if !written {
                        write_class(w, name, &heads, warn)?;
                        written = true;
                    }
                    self.method_record(w, m, v, &mut method, warn)?;
                }
                _ => return Err(io::Error::other("an unknown coverage record")),
            }
        }
        if let Some(prev) = class.take() {
            close_method(w, method.take(), warn)?;
            if !written {
                write_class(w, &prev, &heads, warn)?;
            }
            writeln!(w, "  </{}>", f::CLASS)?;
        }
        writeln!(w, " </{}>", f::SECTION)
    }

    /// Two distinct ids among a name's classes: the refusal's text.
    fn conflict(&self, name: &[u8], heads: &[(Option<u64>, Vec<u8>, u64)]) -> Option<String> {
        let (a, fa) = heads.iter().find_map(|(id, _, f)| id.map(|i| (i, *f)))?;
        let (b, fb) = heads
            .iter()
            .find_map(|(id, _, f)| id.filter(|&i| i != a).map(|i| (i, *f)))?;
        let file = |i: u64| self.files.get(i as usize).cloned().unwrap_or_default();
        Some(format!(
            "class {} is two different classes: id {a:016x} in {} and id {b:016x} in {} \
             (the class changed between the runs); merge refuses to add them up",
            String::from_utf8_lossy(name),
            file(fa),
            file(fb)
        ))
    }

    fn method_record(
        &self,
        w: &mut dyn Write,
        m: &[u8],
        v: &[u64],
        open: &mut Option<OpenMethod>,
        warn: &mut Warnings,
    ) -> io::Result<()> {
        // method \0 signature \0 firstline(4) kind …
        let bad = || io::Error::other("a malformed coverage record");
        let n0 = m.iter().position(|&b| b == 0).ok_or_else(bad)?;
        let n1 = n0 + 1 + m[n0 + 1..].iter().position(|&b| b == 0).ok_or_else(bad)?;
        let rest = &m[n1 + 1..];
        if rest.len() < 5 {
            return Err(bad());
        }
        let first = u32::from_be_bytes(rest[..4].try_into().expect("4"));
        let tail = &rest[5..];
        let index = |at: usize| -> io::Result<u32> {
            let b = tail.get(at..at + 4).ok_or_else(bad)?;
            Ok(u32::from_be_bytes(b.try_into().expect("4")))
        };
        match rest[4] {
            M_HEAD => {
                close_method(w, open.take(), warn)?;
                let name = String::from_utf8_lossy(&m[..n0]);
                let sig = String::from_utf8_lossy(&m[n0 + 1..n1]);
                let first = if first == u32::MAX {
                    f::method::NO_LINES.to_string()
                } else {
                    first.to_string()
                };
                let kind = (v[5] as usize).checked_sub(1);
                let generated = match kind.and_then(|k| f::method::GENERATED_KINDS.get(k)) {
                    Some(g) => format!(r#" {}="{g}""#, f::method::GENERATED),
                    None => String::new(),
                };
                writeln!(
                    w,
                    r#"   <method {}="{}" {}="{}" {}="{first}" {}="{}"{generated}>"#,
                    f::method::NAME,
                    attr(&name),
                    f::method::SIGNATURE,
                    attr(&sig),
                    f::method::FIRST_LINE,
                    f::method::COUNT,
                    v[0]
                )?;
                write!(w, "    <{}>", f::FOOTPRINTS)?;
                *open = Some(OpenMethod {
                    inputs: v[1],
                    with_branches: v[2],
                    with_instructions: v[3],
                    instructions_exact: true,
                    filtered_exact: true,
                    ..Default::default()
                });
            }
            M_CELL => {
                let n = if v[0] == 0 { -1 } else { v[1] as i64 };
                write!(w, "{n} ")?;
            }
            M_BRANCH => {
                let o = open.as_mut().ok_or_else(bad)?;
                let (b, line) = (index(0)?, v[4]);
                let same = o.branch == Some(b);
                if same {
                    o.branches.push(',');
                } else {
                    if o.branch.is_some() {
                        o.branches.push(' ');
                    }
                    let line = if line == 0 {
                        "-1".to_owned()
                    } else {
                        (line - 1).to_string()
                    };
                    o.branches.push_str(&line);
                    o.branches.push(':');
                    o.branch = Some(b);
                }
                o.branches.push_str(&v[0].to_string());
                if v[5] >= 1 && o.filtered_branches.last() != Some(&b) {
                    o.filtered_branches.push(b);
                    if let Some(j) = v[5].checked_sub(2) {
                        o.merged_branches.push((b, j as u32));
                    }
                }
            }
            M_FILTERED => {
                let o = open.as_mut().ok_or_else(bad)?;
                let (ran_in, inputs, not_run, total) = (v[0], v[1], v[4], v[5]);
                if (ran_in > 1 && not_run > 0) || inputs != o.inputs {
                    o.filtered_exact = false;
                }
                if !o.filtered.is_empty() {
                    o.filtered.push(' ');
                }
                o.filtered.push_str(&format!("{}/{total}", total - not_run));
            }
            M_INSTR => {
                let o = open.as_mut().ok_or_else(bad)?;
                let (ran_in, not_run, total) = (v[0], v[4], v[5]);
                if ran_in > 1 && not_run > 0 {
                    o.instructions_exact = false;
                }
                if !o.instructions.is_empty() {
                    o.instructions.push(' ');
                }
                o.instructions
                    .push_str(&format!("{}/{total}", total - not_run));
            }
            _ => return Err(bad()),
        }
        Ok(())
    }
}

/// The class's element: its id (the one id its records have, if any),
/// and the first source named. A class some input gave without an id is
/// merged by name, with a warning.
fn write_class(
    w: &mut dyn Write,
    name: &[u8],
    heads: &[(Option<u64>, Vec<u8>, u64)],
    warn: &mut Warnings,
) -> io::Result<()> {
    let id = heads.iter().find_map(|h| h.0);
    if heads.iter().any(|h| h.0.is_none()) {
        warn.classes_without_id += 1;
    }
    let source = heads
        .iter()
        .map(|h| h.1.as_slice())
        .find(|s| !s.is_empty())
        .unwrap_or_default();
    let name = String::from_utf8_lossy(name);
    write!(w, r#"  <{} {}="{}""#, f::CLASS, f::class::NAME, attr(&name))?;
    if !source.is_empty() {
        let source = String::from_utf8_lossy(source);
        write!(w, r#" {}="{}""#, f::class::SOURCE, attr(&source))?;
    }
    if let Some(id) = id {
        write!(w, r#" {}="{id:016x}""#, f::class::ID)?;
    }
    writeln!(w, ">")
}

/// Ends the open method: its footprints, then its branches and
/// instructions where every input that had the method had them (and, for
/// instructions, where the union is known).
fn close_method(w: &mut dyn Write, m: Option<OpenMethod>, warn: &mut Warnings) -> io::Result<()> {
    let Some(m) = m else { return Ok(()) };
    writeln!(w, "</{}>", f::FOOTPRINTS)?;
    if m.with_branches == m.inputs && !m.branches.is_empty() {
        writeln!(w, "    <{0}>{1}</{0}>", f::BRANCHES, m.branches)?;
    } else if m.with_branches > 0 {
        warn.branches_unknown += 1;
    }
    if m.with_instructions == m.inputs && m.instructions_exact && !m.instructions.is_empty() {
        writeln!(w, "    <{0}>{1}</{0}>", f::INSTRUCTIONS, m.instructions)?;
        if m.filtered_exact && !m.filtered.is_empty() {
            let indexes: Vec<String> = m.filtered_branches.iter().map(u32::to_string).collect();
            let mut branches = match indexes.is_empty() {
                true => String::new(),
                false => format!(r#" {}="{}""#, f::filtered::BRANCHES, indexes.join(" ")),
            };
            if !m.merged_branches.is_empty() {
                let pairs = f::filtered::merged_text(&m.merged_branches);
                branches += &format!(r#" {}="{pairs}""#, f::filtered::MERGED);
            }
            writeln!(w, "    <{0}{branches}>{1}</{0}>", f::FILTERED, m.filtered)?;
        }
    } else if m.with_instructions > 0 {
        warn.instructions_unknown += 1;
    }
    writeln!(w, "   </{}>", f::METHOD)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::parse_bytes;

    fn merged(inputs: &[&str]) -> Result<(String, Warnings), String> {
        let mut m = CoverageMerge::new().unwrap();
        for (i, xml) in inputs.iter().enumerate() {
            let snap = parse_bytes(xml.as_bytes()).unwrap();
            m.add(i, snap.coverage.as_ref().unwrap()).unwrap();
        }
        let files: Vec<String> = (0..inputs.len()).map(|i| format!("in{i}.xml")).collect();
        let mut sorted = m.finish(&files).unwrap();
        let mut out = Vec::new();
        let mut warn = Warnings::default();
        let result = sorted.write(&mut out, &mut warn);
        if let Some(r) = sorted.refusal() {
            return Err(r.to_string());
        }
        result.unwrap();
        Ok((String::from_utf8(out).unwrap(), warn))
    }

    fn snapshot(id: &str, method: &str) -> String {
        format!(
            r#"<doc><coverage><class name="p.A" source="A.java"{id}>{method}</class></coverage></doc>"#
        )
    }

    /// `generated` is kept: each of its values, and none where absent.
    #[test]
    fn generated_is_kept() {
        let id = r#" id="00000000000000bb""#;
        let methods = |g: &[&str]| -> String {
            g.iter()
                .enumerate()
                .map(|(i, g)| {
                    let attr = match *g {
                        "" => String::new(),
                        g => format!(r#" generated="{g}""#),
                    };
                    format!(
                        r#"<method name="m{i}" signature="()V" firstline="3" count="1"{attr}><footprints>1 </footprints></method>"#
                    )
                })
                .collect()
        };
        let kinds = ["synthetic", "enum", "empty constructor", ""];
        let a = snapshot(id, &methods(&kinds));
        let (xml, _) = merged(&[&a, &a]).unwrap();
        let snap = parse_bytes(format!("<doc>{xml}</doc>").as_bytes()).unwrap();
        let got: Vec<Option<String>> = snap.coverage.unwrap().classes[0]
            .methods
            .iter()
            .map(|m| m.generated.clone())
            .collect();
        let want: Vec<Option<String>> = kinds
            .iter()
            .map(|k| (!k.is_empty()).then(|| k.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    /// Branches sum outcome by outcome; instructions are kept where the
    /// union is known (one input ran some, or one ran all) and left out
    /// otherwise; footprints sum cell by cell, -1 stays -1.
    #[test]
    fn branches_and_instructions() {
        let id = r#" id="00000000000000aa""#;
        let a = snapshot(
            id,
            r#"<method name="f" signature="()V" firstline="3" count="2"><footprints>2 -1 1 </footprints>
               <branches>3:1,1 5:0,1,0</branches><instructions>4/4 0/0 1/3</instructions></method>
               <method name="g" signature="()V" firstline="9" count="1"><footprints>1 </footprints>
               <instructions>1/2</instructions></method>"#,
        );
        let b = snapshot(
            id,
            r#"<method name="f" signature="()V" firstline="3" count="1"><footprints>1 -1 0 </footprints>
               <branches>3:0,1 5:1,0,0</branches><instructions>4/4 0/0 0/3</instructions></method>
               <method name="g" signature="()V" firstline="9" count="3"><footprints>3 </footprints>
               <instructions>2/2</instructions></method>"#,
        );
        let (xml, warn) = merged(&[&a, &b]).unwrap();
        let snap = parse_bytes(format!("<doc>{xml}</doc>").as_bytes()).unwrap();
        let c = &snap.coverage.unwrap().classes[0];
        assert_eq!(c.id, Some(0xaa));
        let f = &c.methods[0];
        assert_eq!((f.count, f.footprints.clone()), (3, vec![3, -1, 1]));
        let br = &f.branches;
        assert_eq!((br[0].line, br[0].outcomes.clone()), (Some(3), vec![1, 2]));
        assert_eq!(
            (br[1].line, br[1].outcomes.clone()),
            (Some(5), vec![1, 1, 0])
        );
        assert_eq!(f.instructions, Some(vec![(4, 4), (0, 0), (1, 3)]));
        // g: one ran 1 of 2, the other all 2: the union is all.
        assert_eq!(c.methods[1].instructions, Some(vec![(2, 2)]));
        assert_eq!(warn.instructions_unknown, 0);
        // Two inputs each ran 1 of 3 on one line: which ones is unknown.
        let d = b.replace("0/3", "1/3");
        let (xml, warn) = merged(&[&a, &d]).unwrap();
        assert!(!xml.contains("1/3") && !xml.contains("2/3"), "{xml}");
        assert_eq!(warn.instructions_unknown, 1);
    }

    /// `<filtered>` merges as `<instructions>` does (a cell known where one
    /// input ran none of its instructions or one ran them all), its branch
    /// indexes and `finally` copies kept; an input without it (or a cell
    /// not known) drops it.
    #[test]
    fn filtered_merges_as_instructions() {
        let id = r#" id="00000000000000aa""#;
        let method = |prints: &str, branches: &str, insns: &str, filtered: &str| {
            snapshot(
                id,
                &format!(
                    r#"<method name="f" signature="()V" firstline="3" count="1"><footprints>{prints}</footprints>
                       <branches>{branches}</branches><instructions>{insns}</instructions>{filtered}</method>"#
                ),
            )
        };
        let a = method(
            "1 1 ",
            "3:1,0 3:0,1 4:1,0",
            "6/8 2/2",
            r#"<filtered branches="0 1" merged="1:2">4/6 0/0</filtered>"#,
        );
        let b = method(
            "1 1 ",
            "3:0,0 3:1,0 4:0,1",
            "8/8 2/2",
            r#"<filtered branches="0 1" merged="1:2">6/6 0/0</filtered>"#,
        );
        let (xml, _) = merged(&[&a, &b]).unwrap();
        let snap = parse_bytes(format!("<doc>{xml}</doc>").as_bytes()).unwrap();
        let f = &snap.coverage.unwrap().classes[0].methods[0];
        let filtered = f.filtered.as_ref().expect("kept");
        assert_eq!(filtered.branches, vec![0, 1]);
        assert_eq!(filtered.merged, vec![(1, 2)]);
        assert_eq!(filtered.instructions, vec![(6, 6), (0, 0)]);
        assert_eq!(f.instructions, Some(vec![(8, 8), (2, 2)]));
        // One input without <filtered> (an older agent's): not known.
        let c = method("1 1 ", "3:0,0 3:1,0 4:0,1", "8/8 2/2", "");
        let (xml, _) = merged(&[&a, &c]).unwrap();
        assert!(!xml.contains("<filtered"), "{xml}");
    }

    #[test]
    fn two_ids_are_refused_and_no_id_merges_by_name() {
        let m = r#"<method name="f" signature="()V" firstline="3" count="1"><footprints>1 </footprints></method>"#;
        let a = snapshot(r#" id="00000000000000aa""#, m);
        let b = snapshot(r#" id="00000000000000bb""#, m);
        let old = snapshot("", m);
        let Err(err) = merged(&[&a, &old, &b]) else {
            panic!("two ids merged");
        };
        assert!(err.contains("class p.A"), "{err}");
        assert!(err.contains("in0.xml") && err.contains("in2.xml"), "{err}");
        let (xml, warn) = merged(&[&old, &a]).unwrap();
        assert!(xml.contains(r#"id="00000000000000aa""#), "{xml}");
        assert!(xml.contains(r#"count="2""#), "{xml}");
        assert_eq!(warn.classes_without_id, 1);
    }
}
