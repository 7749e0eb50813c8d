//! What one chunk's constant pools hold, as the caller looks it up: threads,
//! stack traces, methods and classes by key, their names resolved through
//! the symbol and string pools. Apart from `pools`, which fills it from the
//! file: this side is all the caller sees of the pools.

use super::java_type_name;
use crate::decode::JString;
use std::collections::HashMap;

/// A thread of the `java.lang.Thread` pool.
#[derive(Clone, Debug, Default)]
pub struct Thread {
    /// Its Java name, if it has one.
    pub java_name: Option<JString>,
    /// Its operating system name.
    pub os_name: Option<JString>,
    /// `Thread.getId()` (0: not a Java thread).
    pub java_thread_id: u64,
    /// The kernel's thread id.
    pub os_thread_id: u64,
}

/// A frame of a stack trace: pool keys of its method and frame type.
#[derive(Clone, Copy, Debug, Default)]
pub struct Frame {
    /// The method's key ([`Chunk::method`]).
    pub method: u64,
    /// The source line as recorded (-1: the frame type has no line field).
    pub line: i32,
    /// The bytecode index as recorded (-1: no such field).
    pub bci: i32,
    /// The frame type's key ([`Chunk::frame_type`]).
    pub kind: u64,
}

#[derive(Clone, Debug, Default)]
/// A stack trace of the `jdk.types.StackTrace` pool.
pub struct Stack {
    /// The recorder cut it at its depth limit: the bottom frames are missing.
    pub truncated: bool,
    /// Top frame first.
    pub frames: Vec<Frame>,
}

/// A method, resolved: its class as Java writes it (`java.lang.String`),
/// its name and descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Method {
    /// The declaring class, as Java writes it.
    pub class: String,
    /// The method's name (`<init>` for a constructor).
    pub name: String,
    /// Its JVM descriptor (`(I)V`).
    pub descriptor: String,
}

/// One chunk's header and constant pools.
#[derive(Default)]
pub struct Chunk {
    /// Its number in the file, from 0.
    pub index: usize,
    /// When the chunk started, in nanoseconds since the Unix epoch.
    pub start_nanos: u64,
    /// When it started on the events' clock.
    pub start_ticks: u64,
    /// The events' clock rate.
    pub ticks_per_second: u64,
    /// How long it covers, in nanoseconds.
    pub duration_nanos: u64,
    pub(super) strings: HashMap<u64, JString>,
    pub(super) symbols: HashMap<u64, JString>,
    pub(super) packages: HashMap<u64, u64>,
    /// Name symbol per class key.
    pub(super) classes: HashMap<u64, u64>,
    /// (class, name symbol, descriptor symbol) per method key.
    pub(super) methods: HashMap<u64, (u64, u64, u64)>,
    pub(super) threads: HashMap<u64, Thread>,
    pub(super) stacks: HashMap<u64, Stack>,
    pub(super) frame_types: HashMap<u64, JString>,
    pub(super) states: HashMap<u64, JString>,
}

impl Chunk {
    /// A string value, following a reference into the string pool.
    pub fn text(&self, s: &JString) -> Option<String> {
        match s {
            JString::Null => None,
            JString::Text(t) => Some(t.clone()),
            JString::Pool(k) => match self.strings.get(k)? {
                JString::Text(t) => Some(t.clone()),
                _ => None,
            },
        }
    }

    fn symbol(&self, key: u64) -> Option<String> {
        self.text(self.symbols.get(&key)?)
    }

    /// A thread of the `java.lang.Thread` pool by key.
    pub fn thread(&self, key: u64) -> Option<&Thread> {
        self.threads.get(&key)
    }

    /// A thread's name: its Java name, else its OS name.
    pub fn thread_name(&self, t: &Thread) -> Option<String> {
        t.java_name
            .as_ref()
            .and_then(|n| self.text(n))
            .or_else(|| t.os_name.as_ref().and_then(|n| self.text(n)))
    }

    /// A stack trace by key.
    pub fn stack(&self, key: u64) -> Option<&Stack> {
        self.stacks.get(&key)
    }

    /// A class's name as Java writes it: `java.lang.String`, `byte[]`,
    /// `java.lang.String[][]` (the file has `java/lang/String`, `[B`, …).
    pub fn class_name(&self, key: u64) -> Option<String> {
        Some(java_type_name(&self.symbol(*self.classes.get(&key)?)?))
    }

    /// A method by key, its names resolved through the symbol and class
    /// pools (empty where a pool lacks one).
    pub fn method(&self, key: u64) -> Option<Method> {
        let &(class, name, descriptor) = self.methods.get(&key)?;
        Some(Method {
            class: self.class_name(class).unwrap_or_default(),
            name: self.symbol(name).unwrap_or_default(),
            descriptor: self.symbol(descriptor).unwrap_or_default(),
        })
    }

    /// A frame type's name (`Interpreted`, `JIT compiled`, `Inlined`,
    /// `Native`, profrj's `Java`).
    pub fn frame_type(&self, key: u64) -> Option<String> {
        self.text(self.frame_types.get(&key)?)
    }

    /// A thread state's name (`STATE_RUNNABLE`).
    pub fn state(&self, key: u64) -> Option<String> {
        self.text(self.states.get(&key)?)
    }

    /// Nanoseconds since the Unix epoch of a time in ticks.
    pub fn ticks_to_epoch_nanos(&self, ticks: u64) -> u64 {
        let since = ticks.saturating_sub(self.start_ticks);
        self.start_nanos
            .saturating_add(scale(since, self.ticks_per_second))
    }
}

/// `ticks` at `per_second` as nanoseconds.
pub(super) fn scale(ticks: u64, per_second: u64) -> u64 {
    if per_second == 0 || per_second == 1_000_000_000 {
        return ticks;
    }
    (ticks as u128 * 1_000_000_000 / per_second as u128).min(u64::MAX as u128) as u64
}
