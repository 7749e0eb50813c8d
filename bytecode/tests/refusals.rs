//! Each way the editor refuses a method is its own `EditError` variant, and
//! a refused method is left exactly as it was.

use profrj_bytecode::code::Insn;
use profrj_bytecode::edit::{allocation_sites, edit_method, Edit, EditError};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::{parse_class, write_class, ClassFile};
use std::collections::BTreeMap;
use std::io::Read;

/// `org/objectweb/asm/ClassVisitor` from Debian's ASM: any class with code
/// would do.
fn class_visitor() -> Vec<u8> {
    let f = std::fs::File::open("/usr/share/java/asm.jar").unwrap();
    let mut z = zip::ZipArchive::new(f).unwrap();
    let mut e = z.by_name("org/objectweb/asm/ClassVisitor.class").unwrap();
    let mut b = Vec::new();
    e.read_to_end(&mut b).unwrap();
    b
}

fn method_with_code(class: &ClassFile<'_>) -> usize {
    (0..class.methods.len())
        .find(|&i| class.method_code(i).is_some())
        .unwrap()
}

#[test]
fn each_cause_is_its_own_variant_and_the_class_is_unchanged() {
    let data = class_visitor();
    let mut class = parse_class(&data).unwrap();
    let i = method_with_code(&class);
    let n = class.methods.len();

    let e = edit_method(&mut class, n, &Edit::default()).unwrap_err();
    assert_eq!(e, EditError::NoSuchMethod);
    assert_eq!(allocation_sites(&class, n).unwrap_err(), e);

    // 70,000 `nop`s at entry: over the JVM's limit on code.
    let huge = Edit {
        entry: vec![Insn::plain(NOP, &[]); 70_000],
        ..Edit::default()
    };
    let e = edit_method(&mut class, i, &huge).unwrap_err();
    assert!(matches!(e, EditError::TooLarge(n) if n > 70_000), "{e:?}");
    assert!(e.to_string().contains("over the 65535-byte limit"), "{e}");

    // Code after an instruction past the last one: the caller's mistake.
    let past = Edit {
        after: BTreeMap::from([(u32::MAX, vec![Insn::plain(NOP, &[])])]),
        ..Edit::default()
    };
    let e = edit_method(&mut class, i, &past).unwrap_err();
    assert!(matches!(e, EditError::BadEdit(_)), "{e:?}");
    assert!(
        e.to_string().starts_with("after-code for instruction"),
        "{e}"
    );

    // Causes name kinds, not instances: one per variant.
    let causes = [
        EditError::NoSuchMethod.cause(),
        EditError::TooLarge(70_000).cause(),
        EditError::BadEdit("x".into()).cause(),
        EditError::BadEdit("y".into()).cause(),
    ];
    assert_eq!(causes[2], causes[3]);
    assert_ne!(causes[0], causes[1]);
    assert_eq!(write_class(&class), data, "a refusal changed the class");
}

#[test]
fn a_method_without_code_is_no_code() {
    let data = class_visitor();
    let mut class = parse_class(&data).unwrap();
    // Made abstract here: no stored class is needed that has one.
    let i = method_with_code(&class);
    let cp = &class.constant_pool;
    class.methods[i]
        .attributes
        .retain(|a| cp.utf8(a.name_index) != Some(b"Code"));
    let e = edit_method(&mut class, i, &Edit::default()).unwrap_err();
    assert_eq!(e, EditError::NoCode);
    assert_eq!(e.to_string(), "no code (abstract or native)");
    assert_eq!(allocation_sites(&class, i).unwrap_err(), EditError::NoCode);
}
