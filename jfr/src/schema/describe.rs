//! How a type of the metadata event is described: its fields, its label and
//! category, and the annotations (timestamps, timespans, amounts) the JDK's
//! own recordings put on them. Apart from [`classes`](super::classes()) so
//! that the table of types reads as a list, not as the structs that spell
//! it out.

use super::id;
use crate::metadata::{Annotation, ClassDesc, FieldDesc, ANNOTATION_SUPER_TYPE, EVENT_SUPER_TYPE};

pub(super) fn ann(ty: u64, value: Option<&str>) -> Annotation {
    Annotation {
        ty,
        values: value
            .map(|v| vec![("value".to_owned(), v.to_owned())])
            .unwrap_or_default(),
    }
}

fn label(text: &str) -> Annotation {
    ann(id::LABEL, Some(text))
}

fn category(path: &[&str]) -> Annotation {
    Annotation {
        ty: id::CATEGORY,
        values: path
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("value-{i}"), (*p).to_owned()))
            .collect(),
    }
}

/// A field: plain, or constant pool (`cp`), with a label and more annotations.
pub(super) fn field(name: &'static str, ty: u64, text: &str, more: Vec<Annotation>) -> FieldDesc {
    let mut annotations = vec![label(text)];
    annotations.extend(more);
    FieldDesc {
        name,
        ty,
        cpool: false,
        array: false,
        annotations,
    }
}

pub(super) fn cp(name: &'static str, ty: u64, text: &str) -> FieldDesc {
    FieldDesc {
        cpool: true,
        ..field(name, ty, text, Vec::new())
    }
}

pub(super) fn start_time() -> FieldDesc {
    field(
        "startTime",
        id::LONG,
        "Start Time",
        vec![ann(id::TIMESTAMP, Some("TICKS"))],
    )
}

pub(super) fn duration() -> FieldDesc {
    field(
        "duration",
        id::LONG,
        "Duration",
        vec![ann(id::TIMESPAN, Some("TICKS"))],
    )
}

pub(super) fn plain(id: u64, name: &'static str) -> ClassDesc {
    ClassDesc {
        id,
        name,
        super_type: None,
        simple: false,
        fields: Vec::new(),
        annotations: Vec::new(),
    }
}

pub(super) fn class(
    id: u64,
    name: &'static str,
    text: &str,
    simple: bool,
    fields: Vec<FieldDesc>,
) -> ClassDesc {
    ClassDesc {
        simple,
        fields,
        annotations: vec![label(text)],
        ..plain(id, name)
    }
}

pub(super) fn event(
    id: u64,
    name: &'static str,
    text: &str,
    cat: &[&str],
    fields: Vec<FieldDesc>,
) -> ClassDesc {
    ClassDesc {
        super_type: Some(EVENT_SUPER_TYPE),
        fields,
        annotations: vec![label(text), category(cat)],
        ..plain(id, name)
    }
}

pub(super) fn annotation_type(id: u64, name: &'static str, fields: Vec<FieldDesc>) -> ClassDesc {
    ClassDesc {
        super_type: Some(ANNOTATION_SUPER_TYPE),
        fields,
        ..plain(id, name)
    }
}

pub(super) fn value_field(array: bool) -> FieldDesc {
    FieldDesc {
        name: "value",
        ty: id::STRING,
        cpool: false,
        array,
        annotations: Vec::new(),
    }
}
