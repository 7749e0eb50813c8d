//! Any bytes: parse as a class; if that works, write it back (must be
//! identical), decode every method's code, and edit it. Nothing may panic,
//! hang or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use profrj_bytecode::code::{decode_code, Insn};
use profrj_bytecode::edit::{edit_method, Edit};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::{parse_class, write_class};

fuzz_target!(|data: &[u8]| {
    let Ok(mut class) = parse_class(data) else { return };
    assert_eq!(write_class(&class), data);
    for i in 0..class.methods.len() {
        let cp = &class.constant_pool;
        if let Some(a) = class.methods[i].attributes.iter().find(|a| cp.utf8(a.name_index) == Some(b"Code")) {
            let _ = decode_code(&a.data);
        }
        let probe = vec![Insn::plain(ICONST_1, &[]), Insn::plain(POP, &[])];
        let edit = Edit { entry: probe.clone(), catch_all: Some(probe.clone()), before_returns: probe, extra_stack: 1, ..Default::default() };
        let _ = edit_method(&mut class, i, &edit);
    }
    let _ = write_class(&class);
});
