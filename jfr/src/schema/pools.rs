//! The constant pools of a chunk as profrj writes them: threads, classes,
//! methods and their symbols, interned once each, then written as the
//! chunk's checkpoint with the fixed pools (frame types, thread states) and
//! the caller's stack traces. Apart from the events, which refer to these
//! pools by key.

use super::{frame_type, id, thread_state};
use crate::encode::Buf;
use crate::writer::ChunkWriter;
use std::collections::HashMap;
use std::io::{self, Seek, Write};

/// A thread as the `java.lang.Thread` pool holds it.
#[derive(Clone, Debug, Default)]
pub struct ThreadEntry {
    /// The name `jfr` and JMC show for the thread.
    pub name: String,
    /// The kernel's thread id (0: unknown).
    pub os_thread_id: u64,
    /// The Java thread id (the writer's key for the thread).
    pub java_thread_id: u64,
}

/// A stack frame: its method (a [`Pools::method`] key), line (-1: none),
/// bytecode index and frame type ([`frame_type`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The method's [`Pools::method`] key.
    pub method: u64,
    /// The source line (-1: no line table).
    pub line: i32,
    /// The bytecode index (-1: none, a native frame).
    pub bci: i32,
    /// A [`frame_type`] key.
    pub kind: u64,
}

/// A stack trace's pool value: `truncated`, then the frames, top first.
pub fn encode_stack(out: &mut Buf, truncated: bool, frames: &[Frame]) {
    out.boolean(truncated).varint(frames.len() as u64);
    for f in frames {
        out.varint(f.method)
            .long(f.line as i64)
            .long(f.bci as i64)
            .varint(f.kind);
    }
}

/// The small constant pools of a chunk, keys from 1 (0 is null): symbols,
/// packages, classes, methods and threads, each interned once. Stack traces
/// are the caller's, written when the pools are
/// ([`Pools::write_checkpoint`]).
#[derive(Default)]
pub struct Pools {
    symbols: Vec<String>,
    symbol_keys: HashMap<String, u64>,
    /// Package name symbol per package key.
    packages: Vec<u64>,
    package_keys: HashMap<u64, u64>,
    /// (key, name symbol, package key) per class.
    classes: Vec<(u64, u64, u64)>,
    class_keys: HashMap<String, u64>,
    /// (class key, name symbol, descriptor symbol, modifiers) per method key.
    methods: Vec<(u64, u64, u64, i32)>,
    method_keys: HashMap<(u64, u64, u64), u64>,
    threads: Vec<(u64, ThreadEntry)>,
}

impl Pools {
    /// A symbol's key, interned: the same text always gets the same key.
    pub fn symbol(&mut self, s: &str) -> u64 {
        if let Some(&k) = self.symbol_keys.get(s) {
            return k;
        }
        self.symbols.push(s.to_owned());
        let k = self.symbols.len() as u64;
        self.symbol_keys.insert(s.to_owned(), k);
        k
    }

    /// A class by its name as the JVM writes it internally
    /// (`java/lang/String`, `[B`): its package is everything before the
    /// last `/` (none for an array or the unnamed package).
    pub fn class(&mut self, internal_name: &str) -> u64 {
        if let Some(&k) = self.class_keys.get(internal_name) {
            return k;
        }
        let key = self.classes.len() as u64 + 1;
        self.class_keyed(key, internal_name);
        key
    }

    /// A class under the caller's key (a caller that names its own keys
    /// uses this for every class, never [`Pools::class`]).
    pub fn class_keyed(&mut self, key: u64, internal_name: &str) {
        if self.class_keys.contains_key(internal_name) {
            return;
        }
        let name = self.symbol(internal_name);
        let package = match internal_name.rfind('/') {
            Some(i) if !internal_name.starts_with('[') => {
                let sym = self.symbol(&internal_name[..i]);
                match self.package_keys.get(&sym) {
                    Some(&p) => p,
                    None => {
                        self.packages.push(sym);
                        let p = self.packages.len() as u64;
                        self.package_keys.insert(sym, p);
                        p
                    }
                }
            }
            _ => 0,
        };
        self.classes.push((key, name, package));
        self.class_keys.insert(internal_name.to_owned(), key);
    }

    /// A method of class `class` (a [`Pools::class`] key).
    pub fn method(&mut self, class: u64, name: &str, descriptor: &str, modifiers: i32) -> u64 {
        let (n, d) = (self.symbol(name), self.symbol(descriptor));
        if let Some(&k) = self.method_keys.get(&(class, n, d)) {
            return k;
        }
        self.methods.push((class, n, d, modifiers));
        let k = self.methods.len() as u64;
        self.method_keys.insert((class, n, d), k);
        k
    }

    /// A thread under the caller's key (never 0).
    pub fn thread(&mut self, key: u64, t: ThreadEntry) {
        self.threads.push((key, t));
    }

    /// Writes the chunk's checkpoint: these pools, the fixed ones (frame
    /// types, thread states) and `stacks` stack traces, which `write_stacks`
    /// writes (each a key then [`encode_stack`]'s bytes).
    pub fn write_checkpoint<W: Write + Seek>(
        &self,
        w: &mut ChunkWriter<W>,
        ticks: u64,
        stacks: u64,
        write_stacks: impl FnOnce(&mut ChunkWriter<W>) -> io::Result<()>,
    ) -> io::Result<()> {
        let sizes = [
            self.symbols.len(),
            self.packages.len(),
            self.classes.len(),
            self.methods.len(),
            self.threads.len(),
            stacks as usize,
        ];
        // An empty pool is not written (the JDK's reader refuses one).
        let pools = 2 + sizes.iter().filter(|&&n| n > 0).count() as u64;
        let at = w.begin_checkpoint(ticks, pools)?;
        let mut b = Buf::new();
        // Written out whenever it grows past 64 KiB.
        let flush = |w: &mut ChunkWriter<W>, b: &mut Buf, all: bool| -> io::Result<()> {
            if all || b.len() > 1 << 16 {
                w.raw(&b.bytes)?;
                b.clear();
            }
            Ok(())
        };
        b.varint(id::FRAME_TYPE)
            .varint(frame_type::NAMES.len() as u64);
        for (k, n) in frame_type::NAMES {
            b.varint(k).string(n);
        }
        b.varint(id::THREAD_STATE)
            .varint(thread_state::NAMES.len() as u64);
        for (k, n) in thread_state::NAMES {
            b.varint(k).string(n);
        }
        if !self.symbols.is_empty() {
            b.varint(id::SYMBOL).varint(self.symbols.len() as u64);
            for (i, s) in self.symbols.iter().enumerate() {
                b.varint(i as u64 + 1).string(s);
                flush(w, &mut b, false)?;
            }
        }
        if !self.packages.is_empty() {
            b.varint(id::PACKAGE).varint(self.packages.len() as u64);
            for (i, &name) in self.packages.iter().enumerate() {
                b.varint(i as u64 + 1).varint(name);
                flush(w, &mut b, false)?;
            }
        }
        if !self.classes.is_empty() {
            b.varint(id::CLASS).varint(self.classes.len() as u64);
            for &(key, name, package) in &self.classes {
                // classLoader null, modifiers unknown (0).
                b.varint(key)
                    .varint(0)
                    .varint(name)
                    .varint(package)
                    .varint(0);
                flush(w, &mut b, false)?;
            }
        }
        if !self.methods.is_empty() {
            b.varint(id::METHOD).varint(self.methods.len() as u64);
            for (i, &(class, name, desc, modifiers)) in self.methods.iter().enumerate() {
                b.varint(i as u64 + 1)
                    .varint(class)
                    .varint(name)
                    .varint(desc)
                    .long(modifiers as i64)
                    .boolean(false);
                flush(w, &mut b, false)?;
            }
        }
        if !self.threads.is_empty() {
            b.varint(id::THREAD).varint(self.threads.len() as u64);
            for (key, t) in &self.threads {
                b.varint(*key)
                    .string(&t.name)
                    .varint(t.os_thread_id)
                    .string(&t.name)
                    .varint(t.java_thread_id);
                flush(w, &mut b, false)?;
            }
        }
        if stacks > 0 {
            b.varint(id::STACK_TRACE).varint(stacks);
            flush(w, &mut b, true)?;
            write_stacks(w)?;
        }
        flush(w, &mut b, true)?;
        w.end_checkpoint(at)
    }
}
