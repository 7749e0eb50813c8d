//! `add_bootstrap_method` on a class without a BootstrapMethods attribute:
//! the second call adds to the attribute the first made (named by a
//! constant the first appended), never a second attribute (which the JVM
//! refuses: "Multiple BootstrapMethods attributes").

use profrj_bytecode::{parse_class, write_class};

fn plain_class() -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("profrj-bootstrap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("Plain.java"),
        "class Plain { int f() { return 1; } }",
    )
    .unwrap();
    let javac = std::env::var("JAVA_HOME")
        .map(|h| format!("{h}/bin/javac"))
        .unwrap_or_else(|_| "javac".into());
    let ok = std::process::Command::new(&javac)
        .args(["--release", "11", "-d"])
        .arg(&dir)
        .arg(dir.join("Plain.java"))
        .status()
        .unwrap_or_else(|e| panic!("cannot run {javac}: {e}"))
        .success();
    assert!(ok, "javac failed");
    let bytes = std::fs::read(dir.join("Plain.class")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

#[test]
fn two_bootstrap_methods_share_one_attribute() {
    let bytes = plain_class();
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
