//! `profrj instrument IN.jar OUT.jar`: runs the bytecode rewriter over every
//! method of a jar without a JVM, inserting stack-neutral marker probes
//! (`iconst_1; pop`) at method entry, at every line start, before every
//! return and in a catch-all handler that rethrows (not yet in constructors)
//! — the insertion points the profile and coverage modes use. The output
//! runs like the input (check it with `java -Xverify:all -cp OUT.jar …`); the
//! report says how many methods were edited and why any were refused.

use profrj_bytecode::code::Insn;
use profrj_bytecode::edit::{edit_method, probe_everywhere};
use profrj_bytecode::{parse_class, write_class};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Input jar.
    input: PathBuf,
    /// Output jar (written whole; classes that cannot be rewritten are copied unchanged).
    output: PathBuf,
}

#[derive(Default)]
struct Report {
    classes: usize,
    unreadable: usize,
    methods: usize,
    edited: usize,
    refused: HashMap<String, usize>,
    bytes: usize,
}

pub fn run(args: Args) -> Result<(), String> {
    let t = std::time::Instant::now();
    let input =
        std::fs::File::open(&args.input).map_err(|e| format!("{}: {e}", args.input.display()))?;
    let mut zin =
        zip::ZipArchive::new(input).map_err(|e| format!("{}: {e}", args.input.display()))?;
    let out = std::fs::File::create(&args.output)
        .map_err(|e| format!("{}: {e}", args.output.display()))?;
    let mut zout = zip::ZipWriter::new(out);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut report = Report::default();
    for i in 0..zin.len() {
        let mut entry = zin.by_index(i).map_err(|e| e.to_string())?;
        let name = entry.name().to_owned();
        if entry.is_dir() {
            zout.add_directory(name, opts).map_err(|e| e.to_string())?;
            continue;
        }
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| format!("{name}: {e}"))?;
        if name.ends_with(".class") {
            report.bytes += data.len();
            data = rewrite(data, &mut report);
        }
        zout.start_file(name, opts).map_err(|e| e.to_string())?;
        zout.write_all(&data).map_err(|e| e.to_string())?;
    }
    zout.finish().map_err(|e| e.to_string())?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{} classes ({:.1} MB), {} methods with code: {} edited, {} refused; {} classes unreadable (copied as they were); {secs:.2} s",
        report.classes,
        report.bytes as f64 / 1e6,
        report.methods,
        report.edited,
        report.refused.values().sum::<usize>(),
        report.unreadable
    );
    let mut reasons: Vec<_> = report.refused.into_iter().collect();
    reasons.sort_by_key(|r| std::cmp::Reverse(r.1));
    for (why, n) in reasons {
        println!("  refused {n:>6}: {why}");
    }
    Ok(())
}

fn marker() -> Vec<Insn> {
    vec![
        Insn::Plain {
            op: 0x04,
            operands: Default::default(),
        },
        Insn::Plain {
            op: 0x57,
            operands: Default::default(),
        },
    ]
}

/// The class with every method edited that can be, or unchanged.
fn rewrite(data: Vec<u8>, report: &mut Report) -> Vec<u8> {
    report.classes += 1;
    let Ok(mut class) = parse_class(&data) else {
        report.unreadable += 1;
        return data;
    };
    for i in 0..class.methods.len() {
        let Some(edit) = probe_everywhere(&class, i, &marker(), 1) else {
            continue;
        };
        report.methods += 1;
        match edit_method(&mut class, i, &edit) {
            Ok(()) => report.edited += 1,
            Err(e) => *report.refused.entry(e.0).or_default() += 1,
        }
    }
    write_class(&class)
}
