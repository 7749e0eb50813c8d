//! Summing the forks' snapshots with a tool that already sums: each
//! snapshot converted to LCOV (`profrj convert --to lcov`), the tracefiles
//! added up by the `lcov` tool itself (`lcov -a`, Debian's lcov), and the
//! sum read back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one source file's record in the summed tracefile holds.
#[derive(Default, Debug)]
pub struct LcovFile {
    /// `DA:line,count`
    pub lines: BTreeMap<i64, i64>,
    /// `FNDA:count,name`
    pub calls: BTreeMap<String, u64>,
}

/// Converts each snapshot to LCOV in `dir`, sums the tracefiles with
/// `lcov -a`, and answers the sum by source file (`SF:`).
pub fn lcov_sum<'a>(
    snapshots: impl Iterator<Item = &'a PathBuf>,
    dir: &Path,
) -> BTreeMap<String, LcovFile> {
    let mut lcov = Command::new("lcov");
    lcov.arg("-q");
    for (i, snapshot) in snapshots.enumerate() {
        let info = dir.join(format!("fork{i}.info"));
        let (code, text) = crate::common::profrj_run(&[
            "convert",
            snapshot.to_str().unwrap(),
            "--to",
            "lcov",
            "-o",
            info.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "convert {}: {text}", snapshot.display());
        lcov.arg("-a").arg(info);
    }
    let all = dir.join("all.info");
    lcov.arg("-o").arg(&all);
    let out = lcov
        .output()
        .expect("no `lcov`: scripts/test-all --install-only installs Debian's lcov");
    assert!(
        out.status.success(),
        "lcov -a failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    read_tracefile(&std::fs::read_to_string(all).unwrap())
}

fn read_tracefile(text: &str) -> BTreeMap<String, LcovFile> {
    let mut files = BTreeMap::<String, LcovFile>::new();
    let mut current = None;
    for line in text.lines() {
        let (tag, value) = line.split_once(':').unwrap_or((line, ""));
        match tag {
            "SF" => current = Some(value.to_owned()),
            "DA" => {
                let mut f = value.split(',');
                let (n, count) = (f.next().unwrap(), f.next().unwrap());
                let file = files.entry(current.clone().unwrap()).or_default();
                let dup = file
                    .lines
                    .insert(n.parse().unwrap(), count.parse().unwrap());
                assert!(dup.is_none(), "{line} twice");
            }
            "FNDA" => {
                let (count, name) = value.split_once(',').unwrap();
                let file = files.entry(current.clone().unwrap()).or_default();
                file.calls.insert(name.to_owned(), count.parse().unwrap());
            }
            "end_of_record" => current = None,
            _ => {}
        }
    }
    files
}
