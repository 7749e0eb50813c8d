use profrj_bytecode::code::{decode_code, encode_code, Code, Insn, Label};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::parse_class;
use std::io::Read;

fn code_bodies(data: &[u8], mut f: impl FnMut(&[u8])) {
    let class = parse_class(data).unwrap();
    let cp = &class.constant_pool;
    for m in &class.methods {
        for a in &m.attributes {
            if cp.utf8(a.name_index) == Some(b"Code") {
                f(&a.data);
            }
        }
    }
}

fn jar_classes(jar: &str, mut f: impl FnMut(&str, &[u8])) {
    let mut z = zip::ZipArchive::new(std::fs::File::open(jar).unwrap()).unwrap();
    for i in 0..z.len() {
        let mut e = z.by_index(i).unwrap();
        if e.name().ends_with(".class") {
            let mut b = Vec::new();
            e.read_to_end(&mut b).unwrap();
            let name = e.name().to_owned();
            f(&name, &b);
        }
    }
}

#[test]
fn every_method_of_real_jars_decodes_and_encodes_identically() {
    let mut methods = 0;
    for jar in [
        "/usr/share/java/groovy-all.jar",
        "/usr/share/java/jruby-core.jar",
        "/usr/share/java/clojure.jar",
        "/usr/share/java/jython.jar",
        "/usr/share/java/h2.jar",
    ] {
        jar_classes(jar, |name, data| {
            code_bodies(data, |body| {
                let code = decode_code(body).unwrap_or_else(|e| panic!("{jar}!{name}: {e}"));
                let (out, _) = encode_code(&code).unwrap();
                assert!(
                    out == body,
                    "{jar}!{name}: a method differs after decode/encode"
                );
                methods += 1;
            })
        });
    }
    eprintln!("{methods} methods identical");
    assert!(methods > 100_000);
}

/// `goto` over 40,000 bytes of `nop` must become `goto_w`, and `ifeq` an
/// inverted condition around a `goto_w`; decoding the result finds the same targets.
#[test]
fn far_branches_are_widened() {
    let mut insns = vec![
        Insn::Plain {
            op: ICONST_0,
            operands: Default::default(),
        },
        Insn::Branch {
            op: IFEQ,
            target: Label(0),
        }, // to the end
        Insn::Branch {
            op: GOTO,
            target: Label(0),
        }, // to the end
    ];
    insns.extend((0..40_000).map(|_| Insn::Plain {
        op: NOP,
        operands: Default::default(),
    }));
    insns.push(Insn::Plain {
        op: RETURN,
        operands: Default::default(),
    });
    let end = insns.len() as u32 - 1;
    let code = Code {
        max_stack: 1,
        max_locals: 1,
        insns,
        labels: vec![end],
        handlers: vec![],
        attributes: vec![],
        offsets: vec![],
    };
    let (body, offsets) = encode_code(&code).unwrap();
    let re = decode_code(&body).unwrap();
    // iconst_0, ifne +8, goto_w, goto_w, nops…, return
    assert!(
        matches!(re.insns[1], Insn::Branch { op: IFNE, .. }),
        "{:?}",
        re.insns[1]
    );
    assert!(matches!(re.insns[2], Insn::Branch { op: GOTO_W, .. }));
    assert!(matches!(re.insns[3], Insn::Branch { op: GOTO_W, .. }));
    let target_of = |i: usize| match re.insns[i] {
        Insn::Branch { target, .. } => re.labels[target.0 as usize],
        _ => unreachable!(),
    };
    let ret = re.insns.len() as u32 - 1;
    assert_eq!(target_of(2), ret, "widened conditional reaches return");
    assert_eq!(target_of(3), ret, "goto_w reaches return");
    assert_eq!(target_of(1), 3, "inverted condition skips the goto_w");
    assert_eq!(offsets.last(), Some(&(1 + 8 + 5 + 40_000 + 1)));
}

#[test]
fn code_over_64k_is_refused() {
    let insns = (0..70_000)
        .map(|_| Insn::Plain {
            op: NOP,
            operands: Default::default(),
        })
        .collect();
    let code = Code {
        max_stack: 0,
        max_locals: 0,
        insns,
        labels: vec![],
        handlers: vec![],
        attributes: vec![],
        offsets: vec![],
    };
    assert!(encode_code(&code).is_err());
}

#[test]
fn truncated_or_garbled_code_is_an_error_not_a_panic() {
    jar_classes("/usr/share/java/asm.jar", |_, data| {
        code_bodies(data, |body| {
            for cut in 0..body.len().min(300) {
                let _ = decode_code(&body[..cut]);
            }
            let mut b = body.to_vec();
            for i in 8..b.len().min(200) {
                let keep = b[i];
                b[i] = 0xff;
                let _ = decode_code(&b);
                b[i] = TABLESWITCH;
                let _ = decode_code(&b);
                b[i] = keep;
            }
        })
    });
}
