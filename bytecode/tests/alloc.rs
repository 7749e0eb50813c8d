//! Allocation sites and code inserted after instructions, checked by running
//! rewritten classes on a real JVM under -Xverify:all: a probe after every
//! allocation counts objects by class, and the counts must be exactly what
//! the program allocates.

use profrj_bytecode::code::{decode_code, encode_code, Code, Insn};
use profrj_bytecode::edit::{
    allocation_sites, edit_method, probe_allocations, AllocKind, AllocSite, AllocWhere, Edit,
    EditError,
};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::{parse_class, write_class, ClassFile};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const JDK: &str = "/usr/lib/jvm/java-17-openjdk-amd64";

const ALLOCS: &str = r#"
import java.util.*;
public class Allocs {
    static class Base { final Object o; Base(Object o) { this.o = o; } }
    static class Sub extends Base {
        // An allocation before super(), on either branch of a conditional.
        Sub(boolean c) { super(c ? new StringBuilder("a") : new Object()); }
        Sub() { this(true); } // this(): no site
    }
    static int[] ints(int n) { return new int[n]; }
    // Bodies replaced by the test with hand-written code.
    static Object viaLocal() { return null; }
    static Object deeper() { return null; }
    static void gone() { }
    static int after(int x) { if (x > 0) x = -x; return x; }
    public static void main(String[] a) {
        List<Object> keep = new ArrayList<>();
        for (int i = 0; i < 10; i++) keep.add(new Sub(i % 2 == 0));
        keep.add(new Sub());
        long[][] m = new long[3][4];
        String[] s = new String[2];
        int[] x = ints(5);
        try {
            Object o = new Object();
            throw new IllegalStateException("x");
        } catch (IllegalStateException e) {
            keep.add(e);
        }
        new Object();
        Runnable r = () -> keep.add(new Object());
        r.run();
        keep.add(viaLocal());
        keep.add(deeper());
        gone();
        System.out.println(Counter.counts);
        System.out.println("after " + after(5) + " " + after(-3));
    }
}
"#;

const COUNTER: &str = r#"
import java.util.*;
public class Counter {
    static final Map<String, Integer> counts = new TreeMap<>();
    public static void alloc(Object o) { counts.merge(o.getClass().getName(), 1, Integer::sum); }
}
"#;

fn compile(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profrj-alloc-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("Allocs.java"), ALLOCS).unwrap();
    std::fs::write(dir.join("Counter.java"), COUNTER).unwrap();
    let ok = Command::new(Path::new(JDK).join("bin/javac"))
        .args(["-g", "--release", "17", "-d"])
        .arg(&dir)
        .arg(dir.join("Allocs.java"))
        .arg(dir.join("Counter.java"))
        .status()
        .unwrap()
        .success();
    assert!(ok, "javac failed");
    dir
}

fn run(dir: &Path) -> String {
    let o = Command::new(Path::new(JDK).join("bin/java"))
        .args(["-Xverify:all", "-cp"])
        .arg(dir)
        .arg("Allocs")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn method(class: &ClassFile<'_>, name: &str) -> usize {
    let cp = &class.constant_pool;
    class
        .methods
        .iter()
        .position(|m| cp.utf8(m.name_index) == Some(name.as_bytes()))
        .unwrap()
}

/// Replaces the body of method `name` with `insns` (no attributes).
fn set_body(class: &mut ClassFile<'_>, name: &str, insns: Vec<Insn>, stack: u16, locals: u16) {
    let i = method(class, name);
    let cp = &class.constant_pool;
    let slot = class.methods[i]
        .attributes
        .iter()
        .position(|a| cp.utf8(a.name_index) == Some(b"Code"))
        .unwrap();
    let code = Code {
        max_stack: stack,
        max_locals: locals,
        insns,
        labels: vec![],
        handlers: vec![],
        attributes: vec![],
        offsets: vec![],
    };
    let (body, _) = encode_code(&code).unwrap();
    class.methods[i].attributes[slot].data = Cow::Owned(body);
}

fn u16op(op: u8, i: u16) -> Insn {
    Insn::plain(op, &i.to_be_bytes())
}

/// The probe for a site: `dup` or a load of the local, then `Counter.alloc`.
fn counting_probe(counter: u16) -> impl Fn(&AllocSite) -> Vec<Insn> {
    move |s: &AllocSite| match s.at {
        AllocWhere::Top => vec![Insn::plain(DUP, &[]), u16op(INVOKESTATIC, counter)],
        AllocWhere::Local(l) => vec![Insn::plain(ALOAD, &[l as u8]), u16op(INVOKESTATIC, counter)],
        AllocWhere::Stack(_) | AllocWhere::Gone => vec![],
    }
}

#[test]
fn probes_after_every_allocation_count_exactly_what_is_allocated() {
    let dir = compile("count");
    let before = run(&dir);
    assert!(before.contains("{}"), "{before}");
    let mut totals: BTreeMap<String, usize> = BTreeMap::new();
    for file in ["Allocs", "Allocs$Sub", "Allocs$Base"] {
        let path = dir.join(format!("{file}.class"));
        let data = std::fs::read(&path).unwrap();
        let mut class = parse_class(&data).unwrap();
        let object = class.constant_pool.class_index("java/lang/Object");
        if file == "Allocs" {
            // Object.<init>()V as the default constructor calls it (the pool
            // answers about entries as read, not appended ones).
            let init = {
                let cp = &class.constant_pool;
                let i = method(&class, "<init>");
                let a = class.methods[i]
                    .attributes
                    .iter()
                    .find(|a| cp.utf8(a.name_index) == Some(b"Code"))
                    .unwrap();
                match decode_code(&a.data).unwrap().insns[1] {
                    Insn::Plain {
                        op: INVOKESPECIAL,
                        operands,
                    } => u16::from_be_bytes([operands.as_slice()[0], operands.as_slice()[1]]),
                    ref x => panic!("{x:?}"),
                }
            };
            // new; astore_0; aload_0; invokespecial; aload_0; areturn: the object
            // is only in local 0 after its constructor.
            let body = vec![
                u16op(NEW, object),
                Insn::plain(ASTORE_0, &[]),
                Insn::plain(ALOAD_0, &[]),
                u16op(INVOKESPECIAL, init),
                Insn::plain(ALOAD_0, &[]),
                Insn::plain(ARETURN, &[]),
            ];
            set_body(&mut class, "viaLocal", body, 1, 1);
            // new; dup; aconst_null; swap; invokespecial; pop; areturn: one
            // slot above the object after its constructor.
            let body = vec![
                u16op(NEW, object),
                Insn::plain(DUP, &[]),
                Insn::plain(ACONST_NULL, &[]),
                Insn::plain(SWAP, &[]),
                u16op(INVOKESPECIAL, init),
                Insn::plain(POP, &[]),
                Insn::plain(ARETURN, &[]),
            ];
            set_body(&mut class, "deeper", body, 3, 0);
            // new; invokespecial; return: no reference left.
            let body = vec![
                u16op(NEW, object),
                u16op(INVOKESPECIAL, init),
                Insn::plain(RETURN, &[]),
            ];
            set_body(&mut class, "gone", body, 1, 0);
        }
        let counter =
            class
                .constant_pool
                .add_method_ref("Counter", "alloc", "(Ljava/lang/Object;)V");
        for i in 0..class.methods.len() {
            let cp = &class.constant_pool;
            let name = cp.text(class.methods[i].name_index).unwrap();
            let sites = allocation_sites(&class, i).unwrap();
            for s in &sites {
                let t = String::from_utf8(s.type_utf8(cp).unwrap()).unwrap();
                *totals.entry(format!("{name} {t} {:?}", s.at)).or_default() += 1;
            }
            let edit = probe_allocations(&class, i, &counting_probe(counter), 1)
                .unwrap()
                .unwrap();
            edit_method(&mut class, i, &edit).unwrap();
        }
        std::fs::write(&path, write_class(&class)).unwrap();
    }
    let sites: Vec<String> = totals.iter().map(|(k, v)| format!("{k} x{v}")).collect();
    let expected = [
        "<init> java/lang/Object Top x1",
        "<init> java/lang/StringBuilder Top x1",
        "deeper java/lang/Object Stack(1) x1",
        "gone java/lang/Object Gone x1",
        "ints [I Top x1",
        "lambda$main$0 java/lang/Object Top x1",
        "main Allocs$Sub Top x2",
        "main [Ljava/lang/String; Top x1",
        "main [[J Top x1",
        "main java/lang/IllegalStateException Top x1",
        "main java/lang/Object Top x2",
        "main java/util/ArrayList Top x1",
        "viaLocal java/lang/Object Local(0) x1",
    ];
    assert_eq!(sites, expected);
    let out = run(&dir);
    // Sub x11; StringBuilder x6 (5 + the this(true) one); Object: 5 in Sub,
    // try, statement, lambda, viaLocal (deeper and gone are not probed).
    assert!(
        out.contains(
            "{Allocs$Sub=11, [I=1, [Ljava.lang.String;=1, [[J=1, \
             java.lang.IllegalStateException=1, java.lang.Object=9, \
             java.lang.StringBuilder=6, java.util.ArrayList=1}"
        ),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Code after an instruction runs only when falling through from it; a jump
/// to the next instruction lands on the code inserted before that one.
#[test]
fn after_code_is_reached_only_by_falling_through() {
    let dir = compile("after");
    let path = dir.join("Allocs.class");
    let data = std::fs::read(&path).unwrap();
    let mut class = parse_class(&data).unwrap();
    let i = method(&class, "after");
    let cp = &class.constant_pool;
    let attr = class.methods[i]
        .attributes
        .iter()
        .find(|a| cp.utf8(a.name_index) == Some(b"Code"))
        .unwrap();
    let code = decode_code(&attr.data).unwrap();
    // iload_0; ifle L; iload_0; ineg; istore_0; L: iload_0; ireturn
    let store = code
        .insns
        .iter()
        .position(|x| matches!(x, Insn::Plain { op: ISTORE_0, .. }))
        .unwrap() as u32;
    let ret = store + 2;
    let iinc = |k: u8| vec![Insn::plain(IINC, &[0, k])];
    let mut edit = Edit {
        after: BTreeMap::from([(store, iinc(1))]),
        before: BTreeMap::from([(store + 1, iinc(100))]),
        ..Edit::default()
    };
    // Refused: code after a return, or past the end; the class is unchanged.
    for bad in [ret, code.insns.len() as u32] {
        let e = Edit {
            after: BTreeMap::from([(bad, iinc(1))]),
            ..Edit::default()
        };
        let why = edit_method(&mut class, i, &e).unwrap_err();
        assert!(matches!(why, EditError::BadEdit(_)), "{why:?}");
        let why = why.to_string();
        assert!(
            why.contains("fall through") || why.contains("past"),
            "{why}"
        );
    }
    assert_eq!(write_class(&class), data);
    edit_method(&mut class, i, &edit).unwrap();
    std::fs::write(&path, write_class(&class)).unwrap();
    let out = run(&dir);
    // after(5): -5, +1 (after), +100 (before L) = 96; after(-3): jumps to L: 97.
    assert!(out.contains("after 96 97"), "{out}");
    // Same edit, `after` alone: 5 -> -4, -3 -> -3.
    edit.before.clear();
    let mut class = parse_class(&data).unwrap();
    edit_method(&mut class, i, &edit).unwrap();
    std::fs::write(&path, write_class(&class)).unwrap();
    assert!(run(&dir).contains("after -4 -3"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn array_kinds_and_type_names() {
    let dir = compile("kinds");
    let data = std::fs::read(dir.join("Allocs.class")).unwrap();
    let class = parse_class(&data).unwrap();
    let sites = allocation_sites(&class, method(&class, "main")).unwrap();
    let kinds: Vec<_> = sites
        .iter()
        .filter(|s| !matches!(s.kind, AllocKind::Object { .. }))
        .map(|s| (s.kind, s.after == s.new_at))
        .collect();
    assert!(matches!(
        kinds.as_slice(),
        [
            (AllocKind::MultiArray { dims: 2, .. }, true),
            (AllocKind::ObjectArray { .. }, true)
        ]
    ));
    // Objects: the `new` comes before its constructor call.
    assert!(sites.iter().all(|s| s.new_at <= s.after));
    // A method without code: an error naming why.
    let abstract_like = class.methods.len();
    assert!(allocation_sites(&class, abstract_like).is_err());
    let why = allocation_sites(&class, abstract_like).unwrap_err();
    assert_eq!(why, EditError::NoSuchMethod);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The JVM test above can fail: the same probe placed after the `new` (the
/// object not yet constructed) is rejected by the verifier.
#[test]
fn a_probe_before_the_constructor_call_fails_verification() {
    let dir = compile("early");
    let path = dir.join("Allocs.class");
    let data = std::fs::read(&path).unwrap();
    let mut class = parse_class(&data).unwrap();
    let i = method(&class, "main");
    let site = allocation_sites(&class, i).unwrap()[0];
    assert!(site.new_at < site.after);
    let counter = class
        .constant_pool
        .add_method_ref("Counter", "alloc", "(Ljava/lang/Object;)V");
    let edit = Edit {
        after: BTreeMap::from([(
            site.new_at,
            vec![Insn::plain(DUP, &[]), u16op(INVOKESTATIC, counter)],
        )]),
        extra_stack: 1,
        ..Edit::default()
    };
    edit_method(&mut class, i, &edit).unwrap();
    std::fs::write(&path, write_class(&class)).unwrap();
    let o = Command::new(Path::new(JDK).join("bin/java"))
        .args(["-Xverify:all", "-cp"])
        .arg(&dir)
        .arg("Allocs")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("VerifyError"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
