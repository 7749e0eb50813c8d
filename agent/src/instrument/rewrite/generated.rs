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
//!   its superclass's (PrivateEmptyNoArgConstructorFilter);
//! - `annotated`: the method or its class carries an annotation (visible
//!   or not) whose simple name contains `Generated` (AnnotationGeneratedFilter).

use profrj_bytecode::code::{Code, Insn};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::{Attribute, ConstantPool};
use profrj_format::coverage::method::{
    ANNOTATED, EMPTY_CONSTRUCTOR, ENUM as ENUM_METHOD, SYNTHETIC,
};

const ACC_PRIVATE: u16 = 0x0002;
const ACC_SYNTHETIC: u16 = 0x1000;
const ENUM_CLASS: &str = "java/lang/Enum";

/// The class a method belongs to, as the filters need it.
pub(super) struct Owner<'a> {
    /// Internal name.
    pub(super) name: &'a str,
    /// The superclass's internal name (`None` for `java/lang/Object`).
    pub(super) super_name: Option<&'a str>,
    /// The class is annotated `…Generated…` ([`annotated_generated`]).
    pub(super) annotated: bool,
}

/// Which of JaCoCo's filters leaves the method out, if one does.
pub(super) fn generated(
    owner: &Owner<'_>,
    cp: &ConstantPool<'_>,
    (name, descriptor, access): (&str, &str, u16),
    attributes: &[Attribute<'_>],
    code: &Code<'_>,
) -> Option<&'static str> {
    if access & ACC_SYNTHETIC != 0 && !name.starts_with("lambda$") {
        return Some(SYNTHETIC);
    }
    if owner.annotated || annotated_generated(cp, attributes) {
        return Some(ANNOTATED);
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

/// Do `attributes` (a class's or a method's) hold an annotation, visible
/// or not, whose simple name (after the last `/` or `$`) contains
/// `Generated`? Malformed annotations answer no.
pub(super) fn annotated_generated(cp: &ConstantPool<'_>, attributes: &[Attribute<'_>]) -> bool {
    attributes.iter().any(|a| {
        let name = cp.utf8(a.name_index).unwrap_or_default();
        (name == b"RuntimeVisibleAnnotations" || name == b"RuntimeInvisibleAnnotations")
            && annotation_types(&a.data).is_some_and(|types| {
                types.iter().any(|&t| {
                    let d = cp.utf8(t).unwrap_or_default();
                    let simple = d.rsplit(|&b| b == b'/' || b == b'$').next().unwrap_or(d);
                    simple.windows(9).any(|w| w == b"Generated")
                })
            })
    })
}

/// The type (a CONSTANT_Utf8 index of a descriptor) of each annotation of
/// an annotations attribute's body; `None` if malformed.
fn annotation_types(data: &[u8]) -> Option<Vec<u16>> {
    let mut r = Reader { data, at: 0 };
    let n = r.u2()?;
    let mut types = Vec::with_capacity(n as usize);
    for _ in 0..n {
        types.push(r.annotation(0)?);
    }
    Some(types)
}

/// Reads annotations (JVMS 4.7.16) far enough to step over them.
struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

/// Nested annotations and arrays deeper than this are refused (a class
/// file's bytes are not trusted to bound the recursion).
const MAX_NESTING: u32 = 32;

impl Reader<'_> {
    fn u1(&mut self) -> Option<u8> {
        let b = *self.data.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn u2(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes([self.u1()?, self.u1()?]))
    }

    /// One annotation: its type index.
    fn annotation(&mut self, depth: u32) -> Option<u16> {
        let kind = self.u2()?;
        for _ in 0..self.u2()? {
            self.u2()?; // element name
            self.element(depth + 1)?;
        }
        Some(kind)
    }

    fn element(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_NESTING {
            return None;
        }
        match self.u1()? {
            b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z' | b's' | b'c' => {
                self.u2()?;
            }
            b'e' => {
                self.u2()?;
                self.u2()?;
            }
            b'@' => {
                self.annotation(depth)?;
            }
            b'[' => {
                for _ in 0..self.u2()? {
                    self.element(depth + 1)?;
                }
            }
            _ => return None,
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::annotation_types;

    /// Two annotations, the first with an element of each kind (a nested
    /// annotation and an array among them): both types read; cut short or
    /// nested past the bound, none.
    #[test]
    fn annotation_types_step_over_every_element() {
        let mut body = vec![0, 2];
        // @T1(a = 1, b = E.X, c = @T3(), d = {1, 2}, e = String.class)
        body.extend([0, 7, 0, 5]);
        body.extend([0, 1, b'I', 0, 9]);
        body.extend([0, 1, b'e', 0, 10, 0, 11]);
        body.extend([0, 1, b'@', 0, 12, 0, 0]);
        body.extend([0, 1, b'[', 0, 2, b'I', 0, 9, b'I', 0, 9]);
        body.extend([0, 1, b'c', 0, 13]);
        // @T2
        body.extend([0, 8, 0, 0]);
        assert_eq!(annotation_types(&body), Some(vec![7, 8]));
        assert_eq!(annotation_types(&body[..body.len() - 1]), None);
        // An array in an array … 100 deep.
        let mut deep = vec![0, 1, 0, 7, 0, 1, 0, 1];
        for _ in 0..100 {
            deep.extend([b'[', 0, 1]);
        }
        deep.extend([b'I', 0, 9]);
        assert_eq!(annotation_types(&deep), None);
    }
}
