//! One value of any type the chunk's metadata declares, read as the
//! metadata describes it: primitives, strings, constant pool keys, and
//! structs and arrays of them, nesting bounded by [`MAX_VALUE_NESTING`].
//! Apart because the pools and the events both read their values with it.

use super::MAX_VALUE_NESTING;
use crate::decode::{Cursor, Error, JString, Result};
use crate::metadata::Types;

/// A value as the metadata describes it.
#[derive(Clone, Debug)]
pub(super) enum Value {
    Int(i64),
    Float,
    Str(JString),
    /// A constant pool key.
    Ref(u64),
    Obj(Vec<Value>),
    Arr(Vec<Value>),
}

impl Value {
    pub(super) fn int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Ref(k) => Some(*k as i64),
            _ => None,
        }
    }
    pub(super) fn key(&self) -> u64 {
        match self {
            Value::Ref(k) => *k,
            Value::Int(v) => *v as u64,
            _ => 0,
        }
    }
}

/// A value of type `ty` (`cpool`: a key), as the metadata describes it.
pub(super) fn value(
    c: &mut Cursor,
    types: &Types,
    ty: u64,
    cpool: bool,
    depth: usize,
) -> Result<Value> {
    if cpool {
        return Ok(Value::Ref(c.varint()?));
    }
    let Some(t) = types.get(&ty) else {
        return Err(c.error(Error::malformed, format!("a value of undeclared type {ty}")));
    };
    Ok(match t.name.as_str() {
        "boolean" | "byte" => Value::Int(c.u8()? as i8 as i64),
        "char" | "short" | "int" | "long" => Value::Int(c.varint()? as i64),
        "float" => {
            c.f32()?;
            Value::Float
        }
        "double" => {
            c.f64()?;
            Value::Float
        }
        "java.lang.String" => Value::Str(c.jstring()?),
        _ => {
            if depth >= MAX_VALUE_NESTING {
                return Err(c.error(Error::over_limit, "values nested too deep"));
            }
            let mut fields = Vec::with_capacity(t.fields.len());
            for f in &t.fields {
                fields.push(if f.array {
                    let n = c.count()?;
                    let mut items = Vec::new();
                    for _ in 0..n {
                        let before = c.position();
                        items.push(value(c, types, f.ty, f.cpool, depth + 1)?);
                        if c.position() == before {
                            return Err(c.error(Error::malformed, "an array element of no size"));
                        }
                    }
                    Value::Arr(items)
                } else {
                    value(c, types, f.ty, f.cpool, depth + 1)?
                });
            }
            // A simple type (one field) is its field's value.
            if fields.len() == 1 && !matches!(fields[0], Value::Arr(_)) {
                fields.pop().expect("one field")
            } else {
                Value::Obj(fields)
            }
        }
    })
}
