//! LCOV's tracefile (geninfo(1)'s format, read by genhtml, Codecov, GitLab,
//! SonarQube…): one record per source file.
//!
//! ```text
//! TN:
//! SF:<root/>p/q/A.java
//! FN:<first line>,<Class.method descriptor>   per method with line numbers
//! FNDA:<calls>,<Class.method descriptor>
//! FNF:<methods>  FNH:<methods called>
//! DA:<line>,<count>                           per line with code, ascending
//! LF:<lines>  LH:<lines run>
//! end_of_record
//! ```
//!
//! A function's name is the class's simple name (with `$Inner`), the method
//! and its descriptor (`A$Inner.<init>()V`), unique in the file even for
//! overloads; a comma (allowed in a JVM name, LCOV's separator) becomes `_`.

use super::coverage::{by_source, line_totals, one_line, sum_lines, under_root};
use crate::snapshot::CoverageSection;
use std::fmt::Write as _;

pub fn lcov(cov: &CoverageSection, root: Option<&str>) -> String {
    let mut out = String::new();
    for file in by_source(cov) {
        let _ = writeln!(out, "TN:");
        let _ = writeln!(out, "SF:{}", one_line(&under_root(root, &file.path)));
        let mut functions: Vec<(u32, String, u64)> = Vec::new();
        for c in &file.classes {
            let simple = c.name.rsplit_once('.').map_or(c.name.as_str(), |(_, s)| s);
            for m in &c.methods {
                let Some(line) = m.first_line else { continue };
                let name = one_line(&format!("{simple}.{}{}", m.name, m.signature));
                functions.push((line, name.replace(',', "_"), m.count));
            }
        }
        functions.sort();
        // Two methods of one name (possible only in a damaged snapshot)
        // would be one function to LCOV: the first is kept.
        functions.dedup_by(|b, a| a.1 == b.1);
        for (line, name, _) in &functions {
            let _ = writeln!(out, "FN:{line},{name}");
        }
        for (_, name, calls) in &functions {
            let _ = writeln!(out, "FNDA:{calls},{name}");
        }
        let hit = functions.iter().filter(|f| f.2 > 0).count();
        let _ = writeln!(out, "FNF:{}", functions.len());
        let _ = writeln!(out, "FNH:{hit}");
        let lines = sum_lines(file.classes.iter().flat_map(|c| &c.methods));
        for (line, count) in &lines {
            let _ = writeln!(out, "DA:{line},{count}");
        }
        let (valid, covered) = line_totals(&lines);
        let _ = writeln!(out, "LF:{valid}");
        let _ = writeln!(out, "LH:{covered}");
        let _ = writeln!(out, "end_of_record");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::coverage::tests::section;

    #[test]
    fn records_per_file() {
        let text = lcov(&section(), Some("/src"));
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
