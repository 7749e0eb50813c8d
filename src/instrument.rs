//! `profrj instrument [--probes KINDS] IN.jar OUT.jar`: runs the bytecode
//! rewriter over every method of a jar without a JVM, inserting stack-neutral
//! marker probes (`iconst_1; pop`) at method entry, at every line start,
//! before every return and in a catch-all handler that rethrows — the
//! insertion points the profile and coverage modes use — and, with
//! `allocations`, a call `ALLOC_CALL(Object)` passing each new object or
//! array once constructed (the memory mode's points). The output runs like
//! the input (check it with `java -Xverify:all -cp OUT.jar …`, with the
//! allocation probe's class on the class path); the report says how many
//! methods were edited and why any were refused.

use crate::error::CliError;
use profrj_bytecode::code::{decode_code, Insn, VType};
use profrj_bytecode::edit::{
    add_counting, edit_method, line_probes, plan_counters, probe_allocations, probe_everywhere,
    AllocSite, AllocWhere, Edit, EditError, NewLocal,
};
use profrj_bytecode::opcodes::array_type::T_LONG;
use profrj_bytecode::opcodes::*;
use profrj_bytecode::{parse_class, write_class, ClassFile};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Input jar, or a directory of classes (e.g. `jimage extract` output).
    input: PathBuf,
    /// Output jar (written whole; classes that cannot be rewritten are copied unchanged).
    output: PathBuf,
    /// What to insert, comma-separated: entry, exit (before returns), catch
    /// (catch-all handler that rethrows), lines (before each line start),
    /// allocations (after each allocation, a call passing the new object),
    /// counters (the coverage mode's line counters: a `long[]` in a new local,
    /// `c[k]++` at each line entry point; replaces `lines`' markers).
    #[arg(long, default_value = "entry,exit,catch,lines", value_parser = parse_probes)]
    probes: Probes,
    /// The static method the allocation probes call, `pkg/Class.method`
    /// (descriptor `(Ljava/lang/Object;)V`); it needs to exist only when the
    /// rewritten classes run, not for verification.
    #[arg(long, default_value = "profrj/harness/AllocProbe.alloc")]
    alloc_call: String,
    /// `nop`s added to each line counter: a stress test that makes the
    /// insertions large enough to widen the conditionals of big methods.
    #[arg(long, default_value_t = 0)]
    pad_lines: usize,
}

/// Which probe kinds to insert.
#[derive(Clone, Copy, Default)]
struct Probes {
    entry: bool,
    exit: bool,
    catch: bool,
    lines: bool,
    allocations: bool,
    counters: bool,
}

fn parse_probes(s: &str) -> Result<Probes, CliError> {
    let mut p = Probes::default();
    for k in s.split(',') {
        match k.trim() {
            "entry" => p.entry = true,
            "exit" => p.exit = true,
            "catch" => p.catch = true,
            "lines" => p.lines = true,
            "allocations" => p.allocations = true,
            "counters" => p.counters = true,
            other => {
                return Err(CliError::Input(format!(
                "unknown probe kind {other:?} (entry, exit, catch, lines, allocations, counters)"
            )))
            }
        }
    }
    Ok(p)
}

#[derive(Default)]
struct Report {
    classes: usize,
    unreadable: usize,
    methods: usize,
    edited: usize,
    refused: Refusals,
    bytes: usize,
    /// Allocation sites probed, and those skipped by where the object is.
    allocs: usize,
    skipped: HashMap<&'static str, usize>,
    /// Line entry points, and the counters they need (`plan_counters`).
    points: usize,
    counters: usize,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let t = std::time::Instant::now();
    let out = std::fs::File::create(&args.output)
        .map_err(|e| CliError::Input(format!("{}: {e}", args.output.display())))?;
    let mut zout = zip::ZipWriter::new(out);
    // A directory (e.g. a `jimage extract` of the JDK, 120 MB) is written
    // uncompressed: the output is for tools, and deflate would dominate.
    let method = if args.input.is_dir() {
        zip::CompressionMethod::Stored
    } else {
        zip::CompressionMethod::Deflated
    };
    let opts = zip::write::SimpleFileOptions::default().compression_method(method);
    let (owner, method) = args.alloc_call.rsplit_once('.').ok_or_else(|| {
        CliError::Input(format!(
            "--alloc-call {}: expected pkg/Class.method",
            args.alloc_call
        ))
    })?;
    let kinds = Kinds {
        probes: args.probes,
        owner,
        method,
        pad_lines: args.pad_lines,
    };
    let mut report = Report::default();
    for_each_input(&args.input, &mut |name, data| {
        let Some(mut data) = data else {
            return zout
                .add_directory(name, opts)
                .map_err(|e| CliError::Output(e.to_string()));
        };
        if name.ends_with(".class") {
            report.bytes += data.len();
            data = rewrite(data, &kinds, &mut report);
        }
        zout.start_file(name, opts)
            .map_err(|e| CliError::Output(e.to_string()))?;
        zout.write_all(&data)
            .map_err(|e| CliError::Output(e.to_string()))
    })?;
    zout.finish().map_err(|e| CliError::Output(e.to_string()))?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{} classes ({:.1} MB), {} methods with code: {} edited, {} refused; {} classes unreadable (copied as they were); {secs:.2} s",
        report.classes,
        report.bytes as f64 / 1e6,
        report.methods,
        report.edited,
        report.refused.total(),
        report.unreadable
    );
    for row in report.refused.rows() {
        println!("{row}");
    }
    if args.probes.counters {
        println!(
            "line entry points: {}, counters: {} (+1 per method where the first line cannot count calls)",
            report.points, report.counters
        );
    }
    if args.probes.allocations {
        let mut skipped: Vec<_> = report.skipped.into_iter().collect();
        skipped.sort();
        println!(
            "allocation sites: {} probed, {} skipped (object not on top of the stack: {skipped:?})",
            report.allocs,
            skipped.iter().map(|s| s.1).sum::<usize>()
        );
    }
    Ok(())
}

/// What `for_each_input` calls per entry: its name, its bytes (`None` for a directory).
type Visit<'a> = dyn FnMut(&str, Option<Vec<u8>>) -> Result<(), CliError> + 'a;

/// Calls `f` with each entry of a jar, or each file under a directory (named
/// by its relative path, `/`-separated, in sorted order); `None` data for a
/// directory entry of a jar.
fn for_each_input(input: &Path, f: &mut Visit<'_>) -> Result<(), CliError> {
    let at = |e: &dyn std::fmt::Display| CliError::Input(format!("{}: {e}", input.display()));
    if input.is_dir() {
        let mut files = Vec::new();
        let mut dirs = vec![input.to_path_buf()];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).map_err(|e| at(&e))? {
                let p = e.map_err(|e| at(&e))?.path();
                if p.is_dir() {
                    dirs.push(p);
                } else {
                    files.push(p);
                }
            }
        }
        files.sort();
        for p in files {
            let rel = p.strip_prefix(input).map_err(|e| at(&e))?;
            let name: Vec<_> = rel.iter().map(|c| c.to_string_lossy()).collect();
            let data =
                std::fs::read(&p).map_err(|e| CliError::Input(format!("{}: {e}", p.display())))?;
            f(&name.join("/"), Some(data))?;
        }
        return Ok(());
    }
    let file = std::fs::File::open(input).map_err(|e| at(&e))?;
    let mut zin = zip::ZipArchive::new(file).map_err(|e| at(&e))?;
    for i in 0..zin.len() {
        let mut entry = zin
            .by_index(i)
            .map_err(|e| CliError::Input(e.to_string()))?;
        let name = entry.name().to_owned();
        if entry.is_dir() {
            f(&name, None)?;
            continue;
        }
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| CliError::Input(format!("{name}: {e}")))?;
        f(&name, Some(data))?;
    }
    Ok(())
}

fn marker() -> Vec<Insn> {
    vec![
        Insn::Plain {
            op: ICONST_1,
            operands: Default::default(),
        },
        Insn::Plain {
            op: POP,
            operands: Default::default(),
        },
    ]
}

struct Kinds<'a> {
    probes: Probes,
    owner: &'a str,
    method: &'a str,
    pad_lines: usize,
}

/// The edit for method `i`: the chosen kinds, merged. `Ok(None)` without code.
fn edit_for(
    class: &mut ClassFile<'_>,
    i: usize,
    kinds: &Kinds<'_>,
    call: Option<u16>,
    long_array: u16,
    report: &mut Report,
) -> Result<Option<Edit>, EditError> {
    let p = kinds.probes;
    let Some(all) = probe_everywhere(class, i, &marker(), 1) else {
        return Ok(None);
    };
    let mut edit = Edit {
        entry: if p.entry { all.entry } else { vec![] },
        before: if p.lines {
            all.before
        } else {
            Default::default()
        },
        before_returns: if p.exit { all.before_returns } else { vec![] },
        catch_all: all.catch_all.filter(|_| p.catch),
        extra_stack: 1,
        ..Edit::default()
    };
    if p.counters {
        add_counters(&mut edit, class, i, long_array, kinds.pad_lines, report);
    }
    if let Some(call) = call {
        let invoke = Insn::plain(INVOKESTATIC, &call.to_be_bytes());
        let skipped = RefCell::new(Vec::new());
        let probe = |s: &AllocSite| match s.at {
            AllocWhere::Top => vec![Insn::plain(DUP, &[]), invoke.clone()],
            AllocWhere::Local(l) => vec![Insn::local(ALOAD, l), invoke.clone()],
            AllocWhere::Stack(_) => {
                skipped.borrow_mut().push("deeper in the stack");
                vec![]
            }
            AllocWhere::Gone => {
                skipped.borrow_mut().push("no reference left");
                vec![]
            }
        };
        if let Some(a) = probe_allocations(class, i, &probe, 1)? {
            report.allocs += a.after.len();
            edit.after = a.after;
        }
        for why in skipped.into_inner() {
            *report.skipped.entry(why).or_default() += 1;
        }
    }
    Ok(Some(edit))
}

/// The coverage mode's line counters (as `agent/src/instrument/rewrite/coverage.rs`
/// inserts them, with a local array instead of the runtime's): at entry
/// `long[] c = new long[n + 1]` in a new local, and `c[k]++` before each
/// point [`plan_counters`] gives a counter (the others' counts follow from
/// those): ten bytes per counter instead of the markers' two (more with
/// `--pad-lines`), to find methods whose conditionals get widened.
fn add_counters(
    edit: &mut Edit,
    class: &mut ClassFile<'_>,
    i: usize,
    long_array: u16,
    pad: usize,
    report: &mut Report,
) {
    let (Some(lines), Some(code)) = (
        line_probes(class, i),
        class.method_code(i).and_then(|a| decode_code(&a.data).ok()),
    ) else {
        return;
    };
    let points: Vec<u32> = lines.points.iter().map(|p| p.0).collect();
    let plan = plan_counters(
        &code,
        &class.constant_pool,
        &points,
        !lines.first_counts_calls,
        class.constant_pool.utf8(class.methods[i].name_index) == Some(b"<init>"),
        true,
    );
    report.points += points.len();
    report.counters += plan.counters.len();
    let slot = lines.max_locals;
    let size = Insn::push_int(&mut class.constant_pool, plan.slots as i32);
    let mut entry = vec![size, Insn::plain(NEWARRAY, &[T_LONG])];
    entry.push(Insn::local(ASTORE, slot));
    edit.entry.splice(0..0, entry);
    edit.before.clear();
    // Padding first, so the counting code lands after it.
    for &ix in &plan.counters {
        let seq = edit.before.entry(ix).or_default();
        seq.extend(std::iter::repeat_n(Insn::plain(NOP, &[]), pad));
    }
    let array = NewLocal {
        slot,
        vtype: VType::Object(long_array),
    };
    add_counting(edit, &mut class.constant_pool, &plan, array, None);
}

/// The class with every method edited that can be, or unchanged.
fn rewrite(data: Vec<u8>, kinds: &Kinds<'_>, report: &mut Report) -> Vec<u8> {
    report.classes += 1;
    let Ok(mut class) = parse_class(&data) else {
        report.unreadable += 1;
        return data;
    };
    // One Methodref per class for the allocation probe.
    let call = kinds.probes.allocations.then(|| {
        class
            .constant_pool
            .add_method_ref(kinds.owner, kinds.method, "(Ljava/lang/Object;)V")
    });
    let long_array = match kinds.probes.counters {
        true => class.constant_pool.class_index("[J"),
        false => 0,
    };
    for i in 0..class.methods.len() {
        let edit = match edit_for(&mut class, i, kinds, call, long_array, report) {
            Ok(Some(edit)) => edit,
            Ok(None) => continue,
            Err(e) => {
                report.methods += 1;
                report.refused.add(&e, || method_name(&class, i));
                continue;
            }
        };
        report.methods += 1;
        match edit_method(&mut class, i, &edit) {
            Ok(()) => report.edited += 1,
            Err(e) => report.refused.add(&e, || method_name(&class, i)),
        }
    }
    write_class(&class)
}

/// `pkg/Class.name(descriptor)` of method `i`, for messages.
fn method_name(class: &ClassFile<'_>, i: usize) -> String {
    let cp = &class.constant_pool;
    let m = &class.methods[i];
    format!(
        "{}.{}{}",
        cp.class_name(class.this_class).unwrap_or_default(),
        cp.text(m.name_index).unwrap_or_default(),
        cp.text(m.descriptor_index).unwrap_or_default()
    )
}

/// Refused methods by cause ([`EditError::cause`]), each with the first
/// refusal's method and detail as an example: details name instructions and
/// offsets, so counting by them split one cause over many rows.
#[derive(Default)]
struct Refusals(HashMap<&'static str, (usize, String)>);

impl Refusals {
    fn add(&mut self, e: &EditError, method: impl FnOnce() -> String) {
        let row = self
            .0
            .entry(e.cause())
            .or_insert_with(|| (0, format!("{}: {e}", method())));
        row.0 += 1;
    }

    fn total(&self) -> usize {
        self.0.values().map(|r| r.0).sum()
    }

    /// One line per cause, the most frequent first (then by name, so the
    /// report does not change from run to run).
    fn rows(&self) -> Vec<String> {
        let mut rows: Vec<_> = self.0.iter().collect();
        rows.sort_by_key(|(cause, (n, _))| (std::cmp::Reverse(*n), **cause));
        rows.into_iter()
            .map(|(cause, (n, example))| format!("  refused {n:>6}: {cause} (e.g. {example})"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_counted_by_cause_with_an_example() {
        let mut r = Refusals::default();
        let m = |name: &str| {
            let name = name.to_owned();
            move || name
        };
        for (i, e) in [
            EditError::Malformed("instruction 3: stack underflow".into()),
            EditError::TooLarge(70_000),
            EditError::Malformed("line entry at 9, not an instruction".into()),
            EditError::Malformed("truncated table".into()),
        ]
        .iter()
        .enumerate()
        {
            r.add(e, m(&format!("A.m{i}()V")));
        }
        assert_eq!(r.total(), 4);
        assert_eq!(
            r.rows(),
            [
                "  refused      3: malformed code (e.g. A.m0()V: instruction 3: stack underflow)",
                "  refused      1: code too large after editing \
                 (e.g. A.m1()V: code would be 70000 bytes, over the 65535-byte limit)",
            ]
        );
    }
}
