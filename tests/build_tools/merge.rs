//! `profrj merge` of the forks' snapshots: the merged snapshot's coverage
//! equals the forks' summed here, method by method.

use crate::snapshots::{read_coverage, Coverage};
use std::path::{Path, PathBuf};

/// `profrj merge SNAPSHOTS… -o OUT` (OUT in `dir`), read back; it must be silent.
pub fn merged<'a>(snapshots: impl Iterator<Item = &'a PathBuf>, dir: &Path) -> Coverage {
    let out = dir.join("merged.xml");
    let mut args = vec!["merge".to_owned()];
    args.extend(snapshots.map(|p| p.display().to_string()));
    args.extend(["-o".to_owned(), out.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, text) = crate::common::profrj_run(&args);
    assert_eq!(code, 0, "profrj {args:?}: {text}");
    // Every input has class ids, and a coverage section only: nothing to warn of.
    assert!(text.is_empty(), "profrj merge said: {text}");
    read_coverage(&out)
}
