//! The agent's dependency rules (docs/ARCHITECTURE.md), checked on its
//! source: no mode imports another mode or the top (`entry`, `agent`,
//! `session`, `registry`), nor the XML writer; the core imports no mode and
//! not the top; no mode keeps module statics or thread-locals (a mode's
//! lasting state is the host's, its per-thread state a slot of the thread's
//! record), except what a signal handler must reach.

use std::path::{Path, PathBuf};

/// The modes' folders, and the toy mode of `agent/src/toy_mode.rs` (a test).
const MODES: [&str; 9] = [
    "alloc", "coverage", "jfr", "lock", "memory", "profile", "sampler", "trace", "toy_mode",
];
const TOP: [&str; 4] = ["entry", "agent", "session", "registry"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("agent/src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level modules a file names as `crate::x` (also inside
/// `crate::{x, y::z}`), comments and its test module left out.
fn crate_modules(text: &str) -> Vec<String> {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    let code: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level names of the group: each item up to `::`, `,` or `}`.
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(std::mem::take(&mut item));
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    item.push(c);
                }
            }
            out.push(item);
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out.into_iter()
        .map(|i| i.trim().split("::").next().unwrap_or("").trim().to_owned())
        .filter(|n| !n.is_empty() && n != "self")
        .collect()
}

/// The module a file belongs to: its folder under `src/`, or its own name.
fn module_of(path: &Path) -> String {
    let rel = path.strip_prefix(src()).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_owned()
}

#[test]
fn modes_import_only_the_core_and_the_core_no_mode() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    assert!(files.len() > 50, "agent sources not found");
    let mut broken = Vec::new();
    for f in &files {
        let module = module_of(f);
        if module == "lib" || TOP.contains(&module.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let is_mode = MODES.contains(&module.as_str());
        for used in crate_modules(&text) {
            let forbidden = TOP.contains(&used.as_str())
                || (MODES.contains(&used.as_str()) && used != module)
                || (is_mode && used == "xml");
            if forbidden {
                broken.push(format!(
                    "{} ({}) imports crate::{used}",
                    f.strip_prefix(src()).unwrap().display(),
                    if is_mode { "a mode" } else { "the core" }
                ));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn modes_keep_no_statics_but_for_signal_handlers() {
    let mut broken = Vec::new();
    for mode in MODES {
        let mut files = Vec::new();
        match src().join(mode) {
            dir if dir.is_dir() => rust_files(&dir, &mut files),
            _ => files.push(src().join(format!("{mode}.rs"))),
        }
        for f in files {
            let rel = f.strip_prefix(src()).unwrap().display().to_string();
            if rel.starts_with("sampler/signal/") {
                continue; // what a signal handler reads: it has no other way in
            }
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().enumerate() {
                let l = line.trim_start();
                if l.starts_with("static ")
                    || l.starts_with("pub static ")
                    || l.contains("thread_local!")
                {
                    broken.push(format!("{rel}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// Every type a mode keeps per thread takes a slot of the thread's record,
/// and all of them can be on one thread (all modes running, a platform
/// thread touching each): a slot too few, and a mode records nothing there.
#[test]
fn a_thread_record_has_a_slot_for_every_value_type() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut types = Vec::new();
    for f in &files {
        if f.ends_with("per_thread/mod.rs") {
            continue; // its own tests' types
        }
        let text = std::fs::read_to_string(f).unwrap();
        for line in text.lines() {
            let line = line.trim_start();
            if line.starts_with("impl") && line.contains("ThreadValue for ") {
                types.push(format!("{}: {line}", f.display()));
            }
        }
    }
    let per_thread = std::fs::read_to_string(src().join("per_thread/mod.rs")).unwrap();
    let slots: usize = per_thread
        .lines()
        .find_map(|l| l.strip_prefix("pub const SLOTS: usize = "))
        .and_then(|v| v.trim_end_matches(';').parse().ok())
        .expect("per_thread/mod.rs declares `pub const SLOTS: usize = N;`");
    assert!(types.len() >= 9, "the scan found too few: {types:#?}");
    assert!(
        types.len() <= slots,
        "{} value types, {slots} slots (per_thread::SLOTS):\n{}",
        types.len(),
        types.join("\n")
    );
}

#[test]
fn imports_are_read_in_every_form() {
    let text = "use crate::{alloc, host::Host, vm::{Jni, Jvmti}};\nlet x = crate::trace::on(); // crate::lock\n";
    assert_eq!(crate_modules(text), ["alloc", "host", "vm", "trace"]);
}
