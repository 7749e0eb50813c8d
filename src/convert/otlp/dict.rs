//! The request's dictionary (`ProfilesDictionary`): strings, functions,
//! locations and threads' attributes numbered as the first walk meets them
//! (bounded by the distinct frames and thread names), and the stack table,
//! whose bytes the first walk counts and a last walk writes, one stack per
//! node with a figure, in the order the samples number them.

use super::field;
use crate::snapshot::{CallSection, Names, NO_LINE};
use profrj_otlp::wire::{varint, Msg};
use std::collections::HashMap;
use std::io::{self, Write};

/// Bytes of a varint.
fn varint_len(v: u64) -> u64 {
    (64 - v.max(1).leading_zeros() as u64).div_ceil(7)
}

/// Bytes of a length-delimited field of `len` bytes, tag and length included.
pub fn field_len(field: u64, len: u64) -> u64 {
    varint_len(field << 3 | 2) + varint_len(len) + len
}

/// A length-delimited field's tag and length.
pub fn len_header(out: &mut dyn Write, field: u64, len: u64) -> io::Result<()> {
    let mut b = Vec::with_capacity(20);
    varint(&mut b, field << 3 | 2);
    varint(&mut b, len);
    out.write_all(&b)
}

pub struct Dictionary {
    strings: Vec<Box<str>>,
    string_index: HashMap<Box<str>, u32>,
    /// String index of a function's name -> its index.
    functions: HashMap<u32, u32>,
    function_table: Msg,
    /// A snapshot name's location without a line, by name id.
    plain: Vec<u32>,
    /// (name id, line) -> location index.
    with_line: HashMap<(u32, u32), u32>,
    /// Per location index from 1: its (function index, line).
    location_list: Vec<(u32, u32)>,
    /// A thread name -> its attribute's index.
    attributes: HashMap<String, u32>,
    attribute_table: Msg,
    /// The stack table's bytes.
    stack_table_len: u64,
}

impl Dictionary {
    pub fn new() -> Dictionary {
        let mut d = Dictionary {
            strings: Vec::new(),
            string_index: HashMap::new(),
            functions: HashMap::new(),
            function_table: Msg::default(),
            plain: Vec::new(),
            with_line: HashMap::new(),
            location_list: Vec::new(),
            attributes: HashMap::new(),
            attribute_table: Msg::default(),
            // Entry 0, the zero value.
            stack_table_len: field_len(field::DICT_STACK_TABLE, 0),
        };
        // Entry 0 of each table is its zero value.
        d.string("");
        let zero = Msg::default();
        d.function_table.msg(field::DICT_FUNCTION_TABLE, &zero);
        d.attribute_table.msg(field::DICT_ATTRIBUTE_TABLE, &zero);
        d
    }

    pub fn string(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.string_index.get(s) {
            return u64::from(i);
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.into());
        self.string_index.insert(s.into(), i);
        u64::from(i)
    }

    /// The location of snapshot name `name` (its text `text`) on `line`.
    pub fn location(&mut self, name: u32, text: &str, line: u32) -> u32 {
        if let Some(l) = self.location_of(name, line) {
            return l;
        }
        let s = self.string(text) as u32;
        let next = self.functions.len() as u32 + 1;
        let table = &mut self.function_table;
        let function = *self.functions.entry(s).or_insert_with(|| {
            let mut f = Msg::default();
            f.int(field::FUNCTION_NAME, u64::from(s));
            table.msg(field::DICT_FUNCTION_TABLE, &f);
            next
        });
        self.location_list.push((function, line));
        let l = self.location_list.len() as u32;
        if line == NO_LINE {
            if self.plain.len() <= name as usize {
                self.plain.resize(name as usize + 1, 0);
            }
            self.plain[name as usize] = l;
        } else {
            self.with_line.insert((name, line), l);
        }
        l
    }

    /// A location met before.
    fn location_of(&self, name: u32, line: u32) -> Option<u32> {
        if line == NO_LINE {
            self.plain.get(name as usize).copied().filter(|&l| l != 0)
        } else {
            self.with_line.get(&(name, line)).copied()
        }
    }

    pub fn thread_attribute(&mut self, name: &str) -> u64 {
        if let Some(&a) = self.attributes.get(name) {
            return u64::from(a);
        }
        let key = self.string("thread.name");
        self.string(name);
        let mut v = Msg::default();
        v.bytes(super::field::ANY_VALUE_STRING, name.as_bytes());
        let mut a = Msg::default();
        a.int(field::KEY_VALUE_AND_UNIT_KEY, key);
        a.msg(field::KEY_VALUE_AND_UNIT_VALUE, &v);
        self.attribute_table.msg(field::DICT_ATTRIBUTE_TABLE, &a);
        let i = self.attributes.len() as u32 + 1;
        self.attributes.insert(name.to_owned(), i);
        u64::from(i)
    }

    /// The attribute of a thread name met before.
    pub fn attribute_of(&self, name: &str) -> u64 {
        self.attributes.get(name).map_or(0, |&a| u64::from(a))
    }

    /// Counts a stack of `path`'s locations (root first).
    pub fn count_stack(&mut self, path: &[u32]) {
        let packed: u64 = path.iter().map(|&l| varint_len(u64::from(l))).sum();
        self.stack_table_len += field_len(field::DICT_STACK_TABLE, stack_entry_len(packed));
    }

    fn location_msg(m: &mut Msg, (function, line_number): (u32, u32)) {
        let mut line = Msg::default();
        line.int(field::LINE_FUNCTION_INDEX, u64::from(function));
        if line_number != NO_LINE {
            line.int(field::LINE_LINE, u64::from(line_number));
        }
        m.buf.clear();
        m.msg(field::LOCATION_LINES, &line);
    }

    /// Writes the dictionary: its length, then its tables; the stack table
    /// from a walk of `sections` (each with its weights' slots) that
    /// numbers stacks as the samples did.
    pub fn write(
        &self,
        out: &mut dyn Write,
        names: &Names,
        sections: Vec<(&CallSection, &[(usize, u64)])>,
    ) -> io::Result<()> {
        let mut m = Msg::default();
        let mut len =
            field_len(field::DICT_MAPPING_TABLE, 0) + field_len(field::DICT_LOCATION_TABLE, 0);
        for &l in &self.location_list {
            Self::location_msg(&mut m, l);
            len += field_len(field::DICT_LOCATION_TABLE, m.buf.len() as u64);
        }
        len += self.function_table.buf.len() as u64 + field_len(field::DICT_LINK_TABLE, 0);
        for s in &self.strings {
            len += field_len(field::DICT_STRING_TABLE, s.len() as u64);
        }
        len += self.attribute_table.buf.len() as u64 + self.stack_table_len;
        len_header(out, field::REQUEST_DICTIONARY, len)?;
        len_header(out, field::DICT_MAPPING_TABLE, 0)?;
        len_header(out, field::DICT_LOCATION_TABLE, 0)?;
        for &l in &self.location_list {
            Self::location_msg(&mut m, l);
            len_header(out, field::DICT_LOCATION_TABLE, m.buf.len() as u64)?;
            out.write_all(&m.buf)?;
        }
        out.write_all(&self.function_table.buf)?;
        len_header(out, field::DICT_LINK_TABLE, 0)?;
        for s in &self.strings {
            len_header(out, field::DICT_STRING_TABLE, s.len() as u64)?;
            out.write_all(s.as_bytes())?;
        }
        out.write_all(&self.attribute_table.buf)?;
        // The stack table: entry 0, then a stack per node with a figure,
        // its locations leaf first.
        len_header(out, field::DICT_STACK_TABLE, 0)?;
        let mut packed = Vec::new();
        let mut entry = Vec::new();
        for (sec, slots) in sections {
            for t in &sec.threads {
                let mut path: Vec<u32> = Vec::new();
                for n in t.tree.walk() {
                    path.truncate(n.depth as usize - 1);
                    let l = self
                        .location_of(n.name, n.line)
                        .unwrap_or_else(|| panic!("{} met in the first walk", names.get(n.name)));
                    path.push(l);
                    if figures(slots, &n.v.0).is_none() {
                        continue;
                    }
                    packed.clear();
                    for &l in path.iter().rev() {
                        varint(&mut packed, u64::from(l));
                    }
                    entry.clear();
                    let body = stack_entry_len(packed.len() as u64);
                    if !packed.is_empty() {
                        varint(&mut entry, field::STACK_LOCATION_INDICES << 3 | 2);
                        varint(&mut entry, packed.len() as u64);
                    }
                    len_header(out, field::DICT_STACK_TABLE, body)?;
                    out.write_all(&entry)?;
                    out.write_all(&packed)?;
                }
            }
        }
        Ok(())
    }
}

/// A node's weights (by slot, scaled): `None` when all are zero (no
/// sample, no stack).
pub fn figures(slots: &[(usize, u64)], v: &[u64]) -> Option<Vec<u64>> {
    let f: Vec<u64> = slots
        .iter()
        .map(|&(slot, scale)| v[slot].saturating_mul(scale))
        .collect();
    f.iter().any(|&x| x != 0).then_some(f)
}

/// Bytes of a stack entry whose packed locations take `packed` bytes.
fn stack_entry_len(packed: u64) -> u64 {
    if packed == 0 {
        0
    } else {
        field_len(field::STACK_LOCATION_INDICES, packed)
    }
}
