//! `add_bootstrap_method` on a class without a BootstrapMethods attribute:
//! the second call adds to the attribute the first made (named by a
//! constant the first appended), never a second attribute (which the JVM
//! refuses: "Multiple BootstrapMethods attributes").

mod javac;

use profrj_bytecode::{parse_class, write_class};

#[test]
fn two_bootstrap_methods_share_one_attribute() {
    let bytes = javac::compile("Plain", "class Plain { int f() { return 1; } }", &[]);
    let mut class = parse_class(&bytes).unwrap();
    let named = |c: &profrj_bytecode::ClassFile<'_>| {
        c.attributes
            .iter()
            .filter(|a| c.constant_pool.utf8(a.name_index) == Some(b"BootstrapMethods"))
            .count()
    };
    assert_eq!(named(&class), 0);
    let h1 = class
        .constant_pool
        .add_static_method_handle("p/Probe", "one", "()V");
    let h2 = class
        .constant_pool
        .add_static_method_handle("p/Probe", "two", "()V");
    assert_eq!(class.add_bootstrap_method(h1), Some(0));
    assert_eq!(class.add_bootstrap_method(h2), Some(1));
    let written = write_class(&class);
    let again = parse_class(&written).unwrap();
    assert_eq!(named(&again), 1);
    let a = again
        .attributes
        .iter()
        .find(|a| again.constant_pool.utf8(a.name_index) == Some(b"BootstrapMethods"))
        .unwrap();
    // Count 2, then (handle, 0 arguments) twice.
    assert_eq!(&a.data[..2], &[0, 2]);
    assert_eq!(a.data.len(), 2 + 2 * 4);
}
