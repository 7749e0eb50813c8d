use profrj_bytecode::code::Insn;
use profrj_bytecode::edit::{edit_method, probe_everywhere};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::{parse_class, write_class};
use std::collections::HashMap;
use std::io::{Read, Write};

/// `iconst_1; pop`: stack-neutral, needs one extra stack slot.
fn probe() -> Vec<Insn> {
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

/// Instruments every method of `data`: entry, each line start, before returns.
/// Returns the new class (or the original if nothing applied) and refusals.
fn instrument(data: &[u8], refusals: &mut HashMap<String, usize>, edited: &mut usize) -> Vec<u8> {
    let mut class = parse_class(data).unwrap();
    for i in 0..class.methods.len() {
        let Some(edit) = probe_everywhere(&class, i, &probe(), 1) else {
            continue;
        };
        match edit_method(&mut class, i, &edit) {
            Ok(()) => *edited += 1,
            Err(e) => {
                let why = e.to_string().chars().take(60).collect();
                *refusals.entry(why).or_default() += 1
            }
        }
    }
    write_class(&class)
}

#[test]
fn instrumented_h2_runs_under_full_verification() {
    let src = "/usr/share/java/h2.jar";
    let dir = std::env::temp_dir().join(format!("profrj-edit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_jar = dir.join("h2-instrumented.jar");
    let mut zin = zip::ZipArchive::new(std::fs::File::open(src).unwrap()).unwrap();
    let mut zout = zip::ZipWriter::new(std::fs::File::create(&out_jar).unwrap());
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let (mut refusals, mut edited, mut classes) = (HashMap::new(), 0, 0);
    let (mut bytes_in, mut bytes_out) = (0usize, 0usize);
    for i in 0..zin.len() {
        let mut e = zin.by_index(i).unwrap();
        if e.is_dir() {
            continue;
        }
        let name = e.name().to_owned();
        let mut b = Vec::new();
        e.read_to_end(&mut b).unwrap();
        if name.ends_with(".class") {
            bytes_in += b.len();
            b = instrument(&b, &mut refusals, &mut edited);
            bytes_out += b.len();
            classes += 1;
        }
        zout.start_file(name, opts).unwrap();
        zout.write_all(&b).unwrap();
    }
    zout.finish().unwrap();
    eprintln!("{classes} classes, {edited} methods edited, refused: {refusals:?}; {bytes_in} -> {bytes_out} bytes");
    // Each edited method gains at least its entry and return probes (4 bytes).
    assert!(
        bytes_out >= bytes_in + 4 * edited,
        "the probes were not inserted"
    );
    let sql = "create table t(i int primary key, s varchar); insert into t select x, 'v'||x from system_range(1,2000); select count(*), sum(i), max(s) from t where i % 7 = 0";
    let run = |cp: &str, verify: bool| {
        let mut c = std::process::Command::new("java");
        if verify {
            c.arg("-Xverify:all");
        }
        let o = c
            .args([
                "-cp",
                cp,
                "org.h2.tools.Shell",
                "-url",
                "jdbc:h2:mem:t",
                "-sql",
                sql,
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.ends_with(" ms)"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let plain = run(src, false);
    let instrumented = run(&out_jar.display().to_string(), true);
    assert_eq!(plain, instrumented);
    assert!(plain.contains("285"), "{plain}");
    std::fs::remove_dir_all(&dir).unwrap();
    let refused: usize = refusals.values().sum();
    assert!(
        refused * 1000 < edited,
        "more than 0.1% refused: {refusals:?}"
    );
}
