//! Methods javac generates that JaCoCo's report leaves out (the filters of
//! its `org.jacoco.core.internal.analysis.filter` package), told from the
//! class file: the snapshot names them (`<method generated="…">`) so that
//! `convert --to jacoco` leaves them out as JaCoCo does, while the other
//! formats and `report` keep every method.
//!
//! - `synthetic`: a synthetic method that is not a lambda's body (its
//!   SyntheticFilter): bridges, accessors, `$values`, `$deserializeLambda$`;
//! - `enum`: an enum's `values()` and `valueOf(String)` (EnumFilter), and
//!   its constructor when it only calls `Enum`'s (EnumEmptyConstructorFilter);
//! - `empty constructor`: a private no-argument constructor that only calls
//!   its superclass's (PrivateEmptyNoArgConstructorFilter).

use profrj_bytecode::code::{Code, Insn};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::ConstantPool;
use profrj_format::coverage::method::{EMPTY_CONSTRUCTOR, ENUM as ENUM_METHOD, SYNTHETIC};

const ACC_PRIVATE: u16 = 0x0002;
const ACC_SYNTHETIC: u16 = 0x1000;
const ENUM_CLASS: &str = "java/lang/Enum";

/// The class a method belongs to, as the filters need it.
pub(super) struct Owner<'a> {
    /// Internal name.
    pub(super) name: &'a str,
    /// The superclass's internal name (`None` for `java/lang/Object`).
    pub(super) super_name: Option<&'a str>,
}

/// Which of JaCoCo's filters leaves the method out, if one does.
pub(super) fn generated(
    owner: &Owner<'_>,
    cp: &ConstantPool<'_>,
    (name, descriptor, access): (&str, &str, u16),
    code: &Code<'_>,
) -> Option<&'static str> {
    if access & ACC_SYNTHETIC != 0 && !name.starts_with("lambda$") {
        return Some(SYNTHETIC);
    }
    let is_enum = owner.super_name == Some(ENUM_CLASS);
    let class = owner.name;
    if is_enum
        && ((name == "values" && descriptor == format!("()[L{class};"))
            || (name == "valueOf" && descriptor == format!("(Ljava/lang/String;)L{class};")))
    {
        return Some(ENUM_METHOD);
    }
    if name != "<init>" || access & ACC_PRIVATE == 0 {
        return None;
    }
    let super_name = owner.super_name.unwrap_or("java/lang/Object");
    match descriptor {
        "()V" if only_calls_super(cp, code, &[ALOAD_0], super_name, "()V") => {
            Some(EMPTY_CONSTRUCTOR)
        }
        "(Ljava/lang/String;I)V"
            if is_enum
                && only_calls_super(
                    cp,
                    code,
                    &[ALOAD_0, ALOAD_1, ILOAD_2],
                    ENUM_CLASS,
                    "(Ljava/lang/String;I)V",
                ) =>
        {
            Some(ENUM_METHOD)
        }
        _ => None,
    }
}

/// Is the code exactly `loads`, `invokespecial super_name.<init>(descriptor)`,
/// `return`?
fn only_calls_super(
    cp: &ConstantPool<'_>,
    code: &Code<'_>,
    loads: &[u8],
    super_name: &str,
    descriptor: &str,
) -> bool {
    let ops: Vec<(u8, &[u8])> = code
        .insns
        .iter()
        .map(|i| match i {
            Insn::Plain { op, operands } => Some((*op, operands.as_slice())),
            _ => None,
        })
        .collect::<Option<_>>()
        .unwrap_or_default();
    let [body @ .., (INVOKESPECIAL, target), (RETURN, [])] = ops.as_slice() else {
        return false;
    };
    if body.len() != loads.len() || body.iter().zip(loads).any(|(b, l)| b.0 != *l) {
        return false;
    }
    let Ok(index) = <[u8; 2]>::try_from(*target).map(u16::from_be_bytes) else {
        return false;
    };
    let owner = cp.member_class(index).and_then(|c| cp.class_name(c));
    let member = cp.member_name_and_descriptor(index);
    owner.as_deref() == Some(super_name)
        && member == Some((b"<init>".as_slice(), descriptor.as_bytes()))
}
