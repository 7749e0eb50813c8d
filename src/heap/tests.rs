//! The text of a hand-built dump, line for line, plain and gzipped; and
//! mutated and cut copies of it, which must give an error or a text,
//! never a panic.

use super::{convert, sniff, Heap};
use crate::test_dump::B;
use std::io::Write;
use std::path::{Path, PathBuf};

fn sample() -> Vec<u8> {
    let b = B::default;
    let strings = [
        (1, "p/Node"),
        (2, "next"),
        (3, "v"),
        (4, "java/lang/Object"),
        (5, "[Lp/Node;"),
        (6, "main"),
        (7, "()V"),
        (8, "Node.java"),
        (9, "a_long_field_name"),
    ];
    let mut f = B::start(&strings, &[(1, 0x100, 4), (2, 0x200, 1), (3, 0x300, 5)]);
    f = f.record(0x04, b().u4(0x50).u4(6).u4(7).u4(8).u4(2).u4(12));
    f = f.record(0x05, b().u4(1).u4(0).u4(0));
    f = f.record(0x05, b().u4(2).u4(1).u4(1).u4(0x50));
    // CLASS_DUMP: id, trace, super, loader, signers, domain, 2 reserved, size.
    let class = |id: u32, sup: u32, size: u32| {
        b().u1(0x20)
            .u4(id)
            .u4(1)
            .u4(sup)
            .u4(0)
            .u4(0)
            .u4(0)
            .u4(0)
            .u4(0)
            .u4(size)
            .u2(0)
    };
    let seg = b()
        .u1(0x05)
        .u4(0x100)
        .u1(0x08)
        .u4(0x900)
        .u4(1)
        .u4(2)
        .raw(&class(0x100, 0, 0).u2(0).u2(0).0)
        .raw(
            &class(0x200, 0x100, 8)
                .u2(1)
                .u4(9)
                .u1(2)
                .u4(0x600)
                .u2(2)
                .u4(2)
                .u1(2)
                .u4(3)
                .u1(10)
                .0,
        )
        .raw(&class(0x300, 0x100, 0).u2(0).u2(0).0)
        .u1(0x21)
        .u4(0x600)
        .u4(1)
        .u4(0x200)
        .u4(8)
        .u4(0x601)
        .u4(5)
        .u1(0x21)
        .u4(0x601)
        .u4(1)
        .u4(0x200)
        .u4(8)
        .u4(0)
        .u4(6)
        .u1(0x22)
        .u4(0x700)
        .u4(1)
        .u4(3)
        .u4(0x300)
        .u4(0x600)
        .u4(0)
        .u4(0x601)
        .u1(0x23)
        .u4(0x800)
        .u4(1)
        .u4(2)
        .u1(10)
        .u4(1)
        .u4(2);
    f = f.record(0x1c, seg);
    f.record(0x2c, b()).0
}

const TEXT: &str = "TRACE 1:
\t<empty>
TRACE 2:
\tp.Node.main(Node.java:12)
HEAP DUMP BEGIN (4 objects, 36 bytes) Thu Jan 01 00:00:00 1970
ROOT 100 (kind=<system class>, name=java/lang/Object)
ROOT 900 (kind=<thread>, id=1, trace=2)
CLS 100 (name=java/lang/Object, trace=1)
CLS 200 (name=p/Node, trace=1)
\tsuper\t\t100
\tstatic a_long_field_name\t600
CLS 300 (name=[Lp/Node;, trace=1)
\tsuper\t\t100
OBJ 600 (sz=8, trace=1, class=p/Node@200)
\tnext\t\t601
OBJ 601 (sz=8, trace=1, class=p/Node@200)
ARR 700 (sz=12, trace=1, nelems=3, elem type=p/Node@200)
\t[0]\t\t600
\t[2]\t\t601
ARR 800 (sz=8, trace=1, nelems=2, elem type=int)
HEAP DUMP END
SITES BEGIN (ordered by live bytes) Thu Jan 01 00:00:00 1970
          percent          live          alloc'ed  stack class
 rank   self  accum     bytes objs     bytes  objs trace name
    1 44.44% 44.44%        16    2        16     2 1 p.Node
    2 33.33% 77.78%        12    1        12     1 1 p.Node[]
    3 22.22% 100.00%         8    1         8     1 1 int[]
SITES END
";

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("profrj-heap-unit-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// The text of the dump in `path`, or the error.
fn text(path: &Path, out: &Path) -> Result<String, String> {
    let gz = sniff(path).ok_or("not a dump")?;
    convert(path, gz, Heap::All, None, Some(out)).map_err(|e| e.to_string())?;
    Ok(std::fs::read_to_string(out).unwrap())
}

#[test]
fn a_hand_built_dump_line_for_line() {
    let d = dir().join("exact");
    std::fs::create_dir_all(&d).unwrap();
    let (plain, gz, out) = (d.join("a.hprof"), d.join("a.hprof.gz"), d.join("out"));
    std::fs::write(&plain, sample()).unwrap();
    std::fs::write(&gz, gzip(&sample())).unwrap();
    for p in [&plain, &gz] {
        let t = text(p, &out).unwrap();
        let body = t.split("--------\n\n").nth(1).unwrap();
        assert_eq!(body, TEXT);
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn mutated_and_cut_dumps_never_panic() {
    let d = dir().join("fuzz");
    std::fs::create_dir_all(&d).unwrap();
    let good = sample();
    let (file, out) = (d.join("m.hprof"), d.join("out"));
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for round in 0..400 {
        let mut f = good.clone();
        if round % 2 == 0 {
            for _ in 0..1 + next() % 3 {
                let at = 31 + next() as usize % (f.len() - 31);
                f[at] = next() as u8;
            }
        } else {
            f.truncate(19 + next() as usize % (f.len() - 19));
        }
        for bytes in [f.clone(), gzip(&f)] {
            std::fs::write(&file, &bytes).unwrap();
            let _ = text(&file, &out);
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}
