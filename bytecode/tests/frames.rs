use profrj_bytecode::code::{decode_code, decode_frames, encode_frames, initial_locals};
use profrj_bytecode::parse_class;

/// Every StackMapTable of the JDK image: decode to full frames, encode
/// compactly with the original offsets; count byte-identical results and
/// require decode(encode(frames)) == frames for all.
#[test]
fn jdk_image_stack_maps_round_trip() {
    let jdk = std::path::Path::new("/usr/lib/jvm/java-17-openjdk-amd64");
    let dir = std::env::temp_dir().join(format!("profrj-frames-{}", std::process::id()));
    assert!(std::process::Command::new(jdk.join("bin/jimage"))
        .args(["extract", "--dir"])
        .arg(&dir)
        .arg(jdk.join("lib/modules"))
        .status()
        .unwrap()
        .success());
    let (mut tables, mut identical) = (0, 0);
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "class") {
                continue;
            }
            let data = std::fs::read(&p).unwrap();
            let mut class = parse_class(&data).unwrap();
            let this_name = class.constant_pool.class_utf8(class.this_class).unwrap();
            let methods = class.methods.clone();
            for m in &methods {
                let cp = &mut class.constant_pool;
                let name = cp.utf8(m.name_index).unwrap();
                let shown = String::from_utf8_lossy(name);
                let desc = cp.utf8(m.descriptor_index).unwrap();
                let Some(code_attr) = m
                    .attributes
                    .iter()
                    .find(|a| cp.utf8(a.name_index) == Some(b"Code"))
                else {
                    continue;
                };
                let code = decode_code(&code_attr.data).unwrap();
                let Some(smt) = code
                    .attributes
                    .iter()
                    .find(|a| cp.utf8(a.name_index) == Some(b"StackMapTable"))
                else {
                    continue;
                };
                let is_static = m.access_flags & 0x0008 != 0;
                let initial = initial_locals(
                    desc,
                    (!is_static).then_some(this_name),
                    name == b"<init>",
                    &mut |n| cp.class_index(n),
                )
                .unwrap();
                let index_at = |o: u32| code.index_at(o);
                let frames = decode_frames(&smt.data, &initial, &index_at)
                    .unwrap_or_else(|e| panic!("{}: {shown}: {e}", p.display()));
                let offsets: Vec<usize> = code.offsets.iter().map(|&o| o as usize).collect();
                let out = encode_frames(&frames, &initial, &offsets);
                let again = decode_frames(&out, &initial, &index_at).unwrap();
                assert_eq!(again, frames, "{}: {shown}", p.display());
                tables += 1;
                identical += (out == *smt.data) as usize;
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    eprintln!("{tables} StackMapTables: all re-decode equal; {identical} byte-identical");
    assert!(tables > 50_000);
}
