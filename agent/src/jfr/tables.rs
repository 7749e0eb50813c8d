//! What a recording's events refer to, interned once for the recording:
//! methods (resolved through JVMTI the first time a jmethodID is seen, on
//! the thread that saw it: name, descriptor, class, modifiers, line table),
//! classes, and stacks (keyed by their raw frames, so a stack seen before
//! costs one look-up). The writer takes what a file used from here when it
//! ends the file.

use crate::code_map::machine_code_name;
use crate::stack::{Frame, WordHasher};
use crate::vm::async_trace::failure_name;
use crate::vm::{Jni, Jvmti};
use profrj_format::frame_types::FrameType;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// The most words the stacks' keys may hold (32 MiB); past it a new stack
/// is recorded without one (stack 0) and counted.
const STACK_WORDS: usize = 1 << 22;
/// Frame name of a method id AsyncGetCallTrace could not name.
const UNKNOWN_METHOD: &str = "[unknown_method]";
/// Classes of the agent's own runtime, left off the top of stacks as the
/// sampler leaves them.
const AGENT_RUNTIME: &str = "profrj/runtime/";

/// A method as the recording describes it.
pub struct MethodInfo {
    /// Class name as the JVM writes it (`java/lang/String`; "" for a
    /// synthetic frame).
    pub class: String,
    pub name: String,
    pub descriptor: String,
    pub modifiers: i32,
    /// (first bytecode index, line), sorted.
    lines: Vec<(i64, i32)>,
}

impl MethodInfo {
    fn line(&self, bci: i32) -> i32 {
        let i = self
            .lines
            .partition_point(|&(start, _)| start <= bci as i64);
        match i {
            0 => -1,
            i => self.lines[i - 1].1,
        }
    }
}

/// A frame of a stored stack.
#[derive(Clone, Copy)]
pub struct FrameRec {
    pub method: u32,
    pub line: i32,
    pub bci: i32,
    pub native: bool,
    /// How the frame ran, where the sampler knew.
    pub kind: Option<FrameType>,
}

#[derive(Default)]
pub struct Tables {
    /// jmethodID -> method index (HotSpot never reuses a jmethodID).
    by_id: HashMap<usize, u32, BuildHasherDefault<WordHasher>>,
    /// Synthetic frames (`[GC_active]`, …) and frames of stubs and native
    /// code (`vtable stub`, `[libjvm.so]`) by name -> method index.
    synthetic: HashMap<String, u32>,
    pub methods: Vec<MethodInfo>,
    /// Class name as Java writes it -> class index (no conversion per event).
    by_java_name: HashMap<String, u32>,
    /// Internal class name -> class index (from 1).
    class_index: HashMap<String, u32>,
    pub classes: Vec<String>,
    /// Raw frames (method, bci and kind per frame) -> stack id (from 1),
    /// hashed a word at a time (alloc's hasher: SipHash costs ~1 ns a byte).
    stack_index: HashMap<Box<[u64]>, u32, BuildHasherDefault<WordHasher>>,
    /// Per stack id - 1: (first frame in `frames`, frames, truncated).
    pub stacks: Vec<(u32, u32, bool)>,
    pub frames: Vec<FrameRec>,
    words: usize,
    /// Stacks not stored (the table was full).
    pub unstored: u64,
    key: Vec<u64>,
}

impl Tables {
    /// The id of the stack `frames` (top first) keeps, its top `depth`
    /// frames (then marked truncated), the agent's own frames on top left
    /// out; 0 when the table is full.
    pub fn stack<F: Frame>(&mut self, jvmti: Jvmti, jni: &Jni, frames: &[F], depth: u32) -> u32 {
        let truncated = frames.len() > depth as usize;
        let kept = &frames[..frames.len().min(depth as usize)];
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        key.push(truncated as u64);
        for f in kept {
            let code = f.failure().map_or(0, |c| c as u32 as u64);
            // A stub's frame is told by its name number, native code's by its pc.
            let (word, kind) = match (f.stub(), f.native_code()) {
                (Some(stub), _) => (stub as u64, 1),
                (_, Some(pc)) => (pc as u64, 2),
                _ => (f.method() as u64, 0),
            };
            // One stack run two ways is two stacks (a type code above any
            // address's or name number's bits).
            let ran = f.kind().map_or(0, |t| t as u64);
            key.push(word | ran << 56);
            key.push(
                (f.bci() as u32 as u64) | (f.is_native() as u64) << 32 | kind << 33 | code << 35,
            );
        }
        let id = match self.stack_index.get(key.as_slice()) {
            Some(&id) => id,
            None if self.words + key.len() > STACK_WORDS => {
                self.unstored += 1;
                0
            }
            None => {
                let id = self.store(jvmti, jni, kept, truncated);
                self.words += key.len();
                self.stack_index.insert(key.as_slice().into(), id);
                id
            }
        };
        self.key = key;
        id
    }

    fn store<F: Frame>(&mut self, jvmti: Jvmti, jni: &Jni, kept: &[F], truncated: bool) -> u32 {
        let start = self.frames.len() as u32;
        let mut own = true;
        for f in kept {
            let method = self.method(jvmti, jni, f);
            let info = &self.methods[method as usize];
            if own && info.class.starts_with(AGENT_RUNTIME) {
                continue;
            }
            own = false;
            self.frames.push(FrameRec {
                method,
                line: if f.is_native() {
                    -1
                } else {
                    info.line(f.bci())
                },
                bci: f.bci(),
                native: f.is_native(),
                kind: f.kind(),
            });
        }
        let n = self.frames.len() as u32 - start;
        self.stacks.push((start, n, truncated));
        self.stacks.len() as u32
    }

    /// A one-frame stack of a synthetic frame (a walk that failed).
    pub fn synthetic_stack(&mut self, name: &str) -> u32 {
        let method = self.synthetic_method(name);
        let key: Box<[u64]> = Box::new([u64::MAX, method as u64]);
        if let Some(&id) = self.stack_index.get(&key) {
            return id;
        }
        self.frames.push(FrameRec {
            method,
            line: -1,
            bci: -1,
            native: false,
            kind: None,
        });
        self.stacks.push((self.frames.len() as u32 - 1, 1, false));
        let id = self.stacks.len() as u32;
        self.stack_index.insert(key, id);
        id
    }

    fn synthetic_method(&mut self, name: &str) -> u32 {
        if let Some(&m) = self.synthetic.get(name) {
            return m;
        }
        // A descriptor the JDK's `jfr print` can take apart.
        self.methods.push(MethodInfo {
            class: String::new(),
            name: name.to_owned(),
            descriptor: "()V".to_owned(),
            modifiers: 0,
            lines: Vec::new(),
        });
        let m = self.methods.len() as u32 - 1;
        self.synthetic.insert(name.to_owned(), m);
        m
    }

    fn method<F: Frame>(&mut self, jvmti: Jvmti, jni: &Jni, f: &F) -> u32 {
        let id = f.method();
        if id.is_null() {
            if let Some(name) = machine_code_name(f) {
                return self.synthetic_method(&name);
            }
            return match f.failure() {
                Some(code) => self.synthetic_method(failure_name(code)),
                None => self.synthetic_method(UNKNOWN_METHOD),
            };
        }
        if let Some(&m) = self.by_id.get(&(id as usize)) {
            return m;
        }
        let info = resolve(jvmti, jni, id).unwrap_or_else(|| MethodInfo {
            class: String::new(),
            name: UNKNOWN_METHOD.to_owned(),
            descriptor: "()V".to_owned(),
            modifiers: 0,
            lines: Vec::new(),
        });
        self.methods.push(info);
        let m = self.methods.len() as u32 - 1;
        self.by_id.insert(id as usize, m);
        m
    }

    /// A class by its name as Java writes it (`java.lang.String`, `byte[]`):
    /// its index, from 1 (the recording's class key).
    pub fn class(&mut self, java_name: &str) -> u32 {
        if let Some(&c) = self.by_java_name.get(java_name) {
            return c;
        }
        let c = self.class_internal(&profrj_jfr::names::internal_type_name(java_name));
        self.by_java_name.insert(java_name.to_owned(), c);
        c
    }

    /// A class by its name as the JVM writes it (`java/lang/String`, `[B`).
    pub fn class_internal(&mut self, internal: &str) -> u32 {
        if let Some(&c) = self.class_index.get(internal) {
            return c;
        }
        self.classes.push(internal.to_owned());
        let c = self.classes.len() as u32;
        self.class_index.insert(internal.to_owned(), c);
        c
    }

    /// Frames of stack `id` (from 1).
    pub fn frames_of(&self, id: u32) -> (&[FrameRec], bool) {
        match self.stacks.get((id as usize).wrapping_sub(1)) {
            Some(&(start, n, truncated)) => (
                &self.frames[start as usize..(start + n) as usize],
                truncated,
            ),
            None => (&[], false),
        }
    }
}

/// Everything the recording says of a method, from JVMTI.
fn resolve(jvmti: Jvmti, jni: &Jni, method: jni_sys::jmethodID) -> Option<MethodInfo> {
    let (name, descriptor) = jvmti.method_name(method).ok()?;
    let class = jvmti.method_declaring_class(method).ok()?;
    let sig = jvmti.class_signature(class);
    jni.delete_local_ref(class);
    let sig = sig.ok()?;
    let class = sig
        .strip_prefix('L')
        .and_then(|s| s.strip_suffix(';'))
        .unwrap_or(&sig)
        .to_owned();
    let mut lines = jvmti.line_number_table(method).unwrap_or_default();
    lines.sort_unstable();
    Some(MethodInfo {
        class,
        name,
        descriptor,
        modifiers: jvmti.method_modifiers(method).unwrap_or(0),
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_bytecode_indexes() {
        let m = MethodInfo {
            class: "a/B".into(),
            name: "m".into(),
            descriptor: "()V".into(),
            modifiers: 0,
            lines: vec![(0, 10), (4, 11), (9, 13)],
        };
        assert_eq!(
            [0, 3, 4, 8, 9, 100].map(|b| m.line(b)),
            [10, 10, 11, 11, 13, 13]
        );
    }
}
