use profrj_bytecode::{parse_class, write_class};
use std::io::Read;

fn classes_of(jar: &str) -> Vec<(String, Vec<u8>)> {
    let f = std::fs::File::open(jar).unwrap_or_else(|e| panic!("{jar}: {e}"));
    let mut z = zip::ZipArchive::new(f).unwrap();
    let mut out = Vec::new();
    for i in 0..z.len() {
        let mut e = z.by_index(i).unwrap();
        if e.name().ends_with(".class") {
            let mut b = Vec::new();
            e.read_to_end(&mut b).unwrap();
            out.push((e.name().to_owned(), b));
        }
    }
    out
}

const JARS: &[&str] = &[
    "/usr/share/java/groovy-all.jar",
    "/usr/share/java/jruby-core.jar",
    "/usr/share/java/clojure.jar",
    "/usr/share/java/jython.jar",
    "/usr/share/java/h2.jar",
    "/usr/share/java/asm.jar",
];

#[test]
fn real_jars_round_trip_byte_identical() {
    for jar in JARS {
        let classes = classes_of(jar);
        let mut bytes = 0;
        for (name, data) in &classes {
            let class = parse_class(data).unwrap_or_else(|e| panic!("{jar}!{name}: {e}"));
            assert!(
                write_class(&class) == *data,
                "{jar}!{name} differs after a round trip"
            );
            bytes += data.len();
        }
        eprintln!(
            "{jar}: {} classes, {} MB, identical",
            classes.len(),
            bytes / 1_000_000
        );
        assert!(classes.len() > 10);
    }
}

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    let classes = classes_of("/usr/share/java/asm.jar");
    for (name, data) in classes.iter().take(40) {
        for cut in 0..data.len() {
            let e = parse_class(&data[..cut]);
            assert!(e.is_err(), "{name} cut at {cut} parsed");
            assert!(e.unwrap_err().offset <= cut);
        }
    }
}

/// Every class of the JDK 17 runtime image (all modules), extracted with `jimage`.
#[test]
fn jdk_runtime_image_round_trips_byte_identical() {
    let jdk = std::path::Path::new("/usr/lib/jvm/java-17-openjdk-amd64");
    let dir = std::env::temp_dir().join(format!("profrj-jimage-{}", std::process::id()));
    let status = std::process::Command::new(jdk.join("bin/jimage"))
        .args(["extract", "--dir"])
        .arg(&dir)
        .arg(jdk.join("lib/modules"))
        .status()
        .expect("jimage");
    assert!(status.success());
    let mut stack = vec![dir.clone()];
    let (mut n, mut bytes) = (0usize, 0usize);
    let t = std::time::Instant::now();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "class") {
                let data = std::fs::read(&p).unwrap();
                let class = parse_class(&data).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                assert!(write_class(&class) == data, "{} differs", p.display());
                n += 1;
                bytes += data.len();
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    eprintln!(
        "JDK image: {n} classes, {} MB, identical ({:.2} s incl. file reads)",
        bytes / 1_000_000,
        t.elapsed().as_secs_f64()
    );
    assert!(n > 20_000);
}

/// A field added to real classes reads back after every declared one, and
/// the rest of the class is unchanged; a second field of the same name is
/// refused.
#[test]
fn an_added_field_follows_the_declared_ones() {
    for (name, data) in classes_of("/usr/share/java/asm.jar").iter().take(200) {
        let mut class = parse_class(data).unwrap();
        let declared = class.fields.len();
        let at = class.add_field(0x1082, "$added", "I");
        assert_eq!(at, Some(declared), "{name}");
        assert_eq!(class.add_field(0x0002, "$added", "J"), None, "{name}");
        let bytes = write_class(&class);
        let back = parse_class(&bytes).unwrap();
        let cp = &back.constant_pool;
        let last = back.fields.last().unwrap();
        assert_eq!(cp.utf8(last.name_index), Some(&b"$added"[..]), "{name}");
        assert_eq!(cp.utf8(last.descriptor_index), Some(&b"I"[..]));
        assert_eq!(last.access_flags, 0x1082);
        assert_eq!(back.fields.len(), declared + 1);
        assert_eq!(back.methods.len(), class.methods.len());
    }
}
