//! LCOV's tracefile (geninfo(1)'s format, read by genhtml, Codecov, GitLab,
//! SonarQube…): one record per source file.
//!
//! ```text
//! TN:
//! SF:<root/>p/q/A.java
//! FN:<first line>,<Class.method descriptor>   per method with line numbers
//! FNDA:<calls>,<Class.method descriptor>
//! FNF:<methods>  FNH:<methods called>
//! BRDA:<line>,<block>,<branch>,<taken>        per branch outcome (below)
//! BRF:<outcomes>  BRH:<outcomes taken>
//! DA:<line>,<count>                           per line with code, ascending
//! LF:<lines>  LH:<lines run>
//! end_of_record
//! ```
//!
//! A function's name is the class's simple name (with `$Inner`), the method
//! and its descriptor (`A$Inner.<init>()V`), unique in the file even for
//! overloads; a comma (allowed in a JVM name, LCOV's separator) becomes `_`.
//! Branches (from `<branches>`; none for a snapshot without them): a
//! `BRDA` per outcome of each branching instruction, the block the
//! instruction's rank on its line (over the file's methods, in order), the
//! branch the outcome's rank; `taken` its count, or `-` when the
//! instruction never ran (geninfo's word for a block never reached).
//! Names and paths are escaped as the snapshot escapes them (a control
//! character as `\uXXXX`, so no name can end a line). Written record by
//! record; what is held is the files' grouping of the section's classes.

use super::coverage::{
    branch_totals, by_source, escaped, line_totals, sum_branches, sum_lines, under_root,
};
use crate::snapshot::CoverageSection;
use std::io::{self, Write};

pub fn lcov(out: &mut dyn Write, cov: &CoverageSection, root: Option<&str>) -> io::Result<()> {
    for file in by_source(cov) {
        writeln!(out, "TN:")?;
        writeln!(out, "SF:{}", escaped(&under_root(root, &file.path)))?;
        let mut functions: Vec<(u32, String, u64)> = Vec::new();
        for c in &file.classes {
            let simple = c.name.rsplit_once('.').map_or(c.name.as_str(), |(_, s)| s);
            for m in &c.methods {
                let Some(line) = m.first_line else { continue };
                let name = escaped(&format!("{simple}.{}{}", m.name, m.signature));
                functions.push((line, name.replace(',', "_"), m.count));
            }
        }
        functions.sort();
        // Two methods of one name (possible only in a damaged snapshot)
        // would be one function to LCOV: the first is kept.
        functions.dedup_by(|b, a| a.1 == b.1);
        for (line, name, _) in &functions {
            writeln!(out, "FN:{line},{name}")?;
        }
        for (_, name, calls) in &functions {
            writeln!(out, "FNDA:{calls},{name}")?;
        }
        let hit = functions.iter().filter(|f| f.2 > 0).count();
        writeln!(out, "FNF:{}", functions.len())?;
        writeln!(out, "FNH:{hit}")?;
        let branches = sum_branches(file.classes.iter().flat_map(|c| &c.methods));
        for (line, on_line) in &branches {
            for (block, outcomes) in on_line.iter().enumerate() {
                let ran = outcomes.iter().any(|&n| n > 0);
                for (branch, n) in outcomes.iter().enumerate() {
                    match ran {
                        true => writeln!(out, "BRDA:{line},{block},{branch},{n}")?,
                        false => writeln!(out, "BRDA:{line},{block},{branch},-")?,
                    }
                }
            }
        }
        let (found, hit) = branch_totals(branches.values().flatten().copied());
        if found > 0 {
            writeln!(out, "BRF:{found}")?;
            writeln!(out, "BRH:{hit}")?;
        }
        let lines = sum_lines(file.classes.iter().flat_map(|c| &c.methods));
        for (line, count) in &lines {
            writeln!(out, "DA:{line},{count}")?;
        }
        let (valid, covered) = line_totals(&lines);
        writeln!(out, "LF:{valid}")?;
        writeln!(out, "LH:{covered}")?;
        writeln!(out, "end_of_record")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::coverage::tests::section;

    #[test]
    fn records_per_file() {
        let mut out = Vec::new();
        lcov(&mut out, &section(), Some("/src")).unwrap();
        let text = String::from_utf8(out).unwrap();
        let want = "TN:\nSF:/src/Top.kt\nFN:1,Top.f()V\nFNDA:1,Top.f()V\nFNF:1\nFNH:1\n\
                    DA:1,1\nLF:1\nLH:1\nend_of_record\n\
                    TN:\nSF:/src/p/q/A.java\n\
                    FN:3,A.<init>()V\nFN:10,A.lambda$run$0()V\nFN:10,A.run()V\nFN:20,A$Inner.<init>()V\n\
                    FNDA:2,A.<init>()V\nFNDA:5,A.lambda$run$0()V\nFNDA:3,A.run()V\nFNDA:0,A$Inner.<init>()V\n\
                    FNF:4\nFNH:3\n\
                    DA:3,2\nDA:5,2\nDA:10,8\nDA:11,0\nDA:13,3\nDA:20,0\nLF:6\nLH:4\nend_of_record\n";
        assert_eq!(text, want);
    }
}
