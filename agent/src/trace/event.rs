//! What a thread records into its ring: fixed-size events (32 bytes), in
//! the agent's own ids and clock ticks. The writer thread turns them into
//! TPTP elements, defining the ids they use on the way.

/// What happened. `Entry` is 0: a zeroed slot is a valid event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Kind {
    /// A call began: `method`, `ticket`, `depth`.
    Entry = 0,
    /// A call ended (returned or left by an exception): `method`, `ticket`,
    /// `depth` (its entry's).
    Exit,
    /// An exception was thrown in `method` (whose call is `ticket` at
    /// `depth`; 0/0 if that call is not open); `extra` is its class's type
    /// id. `ThrowNew`: an object not thrown before on this thread.
    Throw,
    ThrowNew,
    /// A handler in `method` (call `ticket` at `depth`) caught the
    /// exception of type `extra` last thrown on this thread.
    Catch,
    /// The thread's last event (the writer defines a thread at its first).
    ThreadEnd,
    /// `ticket` events of this thread were dropped (its ring was full,
    /// `overflow=drop`) before this one.
    Lost,
    /// A garbage collection began or ended (the writer's own queue).
    GcStart,
    GcFinish,
    /// `memory` tracked a new object made at allocation site `method` (the
    /// memory mode's site id); `b`: its weak reference (0 with tags).
    ObjAlloc,
    /// `alloc` sampled an object of type `extra`, `depth` bytes (capped).
    ObjSample,
    /// The object whose weak reference was `b` died (the writer's queue).
    ObjFree,
    /// `lock`: the thread is about to wait for, or has got, the monitor of
    /// an object of type `extra` whose identity hash is `b`.
    MonitorEnter,
    MonitorEntered,
    /// The ring's next events are the Java thread's with key `b` (a
    /// carrier's ring holds the events of every virtual thread it ran).
    Switch,
}

#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Event {
    pub kind: Kind,
    /// The registry's method id (probe events).
    pub method: u32,
    /// Clock ticks (`crate::tsc`).
    pub time: u64,
    /// Per-thread call number, from 1 (0: none).
    pub b: u64,
    /// Open traced calls on the thread, this one included.
    pub depth: u32,
    pub extra: u32,
}

impl Event {
    #[inline(always)]
    pub fn new(kind: Kind, method: u32, time: u64, b: u64, depth: u32) -> Self {
        Event {
            kind,
            method,
            time,
            b,
            depth,
            extra: 0,
        }
    }

    /// The ticket of a call event, the count of a `Lost` one.
    pub fn ticket(&self) -> u64 {
        self.b
    }
}

const _: () = assert!(std::mem::size_of::<Event>() == 32);
