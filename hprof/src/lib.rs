//! HPROF binary heap dumps ("JAVA PROFILE 1.0.2", as HotSpot's heapDumper
//! writes them; 1.0.1 too), read by a bounded, slice-driven streaming
//! parser: the same code walks a whole memory-mapped file or a buffer the
//! caller refills, and never holds more than one item's fixed fields.
//!
//! A file is a header ([`Header::parse`]: the format string, the id size,
//! 4 or 8, and the dump's time), then records: a tag, a `u4` time offset,
//! a `u4` length and a body. A `HEAP_DUMP` or `HEAP_DUMP_SEGMENT` record's
//! body is sub-records (roots, class, instance and array dumps), each a tag
//! and fields with no length of its own.
//!
//! Using it: [`Scanner::next`] takes the bytes the caller has from the
//! scanner's offset and returns a [`Step`]: an [`Item`], the buffer bytes
//! it took and the bytes of its body (a symbol's text, a trace's frame ids,
//! an instance's field data, an array's elements) that follow and are the
//! caller's to read or skip; or how many bytes it needs; or the end. An
//! instance or an array is handed out as soon as its fixed fields are in
//! the buffer, with the absolute offsets of its trace serial (to patch it)
//! and of its data, so a 1 GB `byte[]` is never buffered. A CLASS_DUMP is
//! read whole (at most [`MAX_CLASS_DUMP`] bytes) and its constants, static
//! fields and field descriptors are iterators over the buffer.
//! [`Values`] reads an instance's fields given its classes' field lists.
//!
//! Nothing is trusted: a record's length is checked against the file (when
//! the caller gives its length), a sub-record against its segment, a count
//! against its record; a bad length, an unknown sub-record tag, a basic
//! type that does not exist or a cut file is an [`Error`] naming the
//! offset, never a panic, and no input makes the parser allocate.
//!
//! What HotSpot writes, in this order (checked by `tests/hotspot.rs` on
//! dumps of JDK 17.0.15 and 25 made by `HotSpotDiagnosticMXBean.dumpHeap`,
//! and on JDK 25 also by `jcmd GC.heap_dump -parallel=4`, whose dumper
//! threads write segment files that are then merged):
//! 1. the header, id size 8 on a 64-bit VM (compressed oops or not);
//! 2. `UTF8` records: every symbol (class, method, field and file names);
//! 3. `LOAD_CLASS` for every loaded class (array classes included, named
//!    in internal form: `java/lang/String`, `[I`, `[Ljava/lang/Object;`),
//!    each with trace serial 1 (JDK 17 writes a few hundred more of them
//!    than CLASS_DUMPs; JDK 25 as many);
//! 4. the thread stacks: first TRACE serial 1 with no frame, the "dummy"
//!    trace every object, class and root names (HotSpot records no
//!    allocation sites); then, thread by thread, its `FRAME`s and its
//!    `TRACE` (serials 2, 3, …; a thread with no Java frame has an empty
//!    one);
//! 5. `HEAP_DUMP_SEGMENT`s (a large array gets one of its own; no segment
//!    reaches 4 GiB), then one `HEAP_DUMP_END`, the last record.
//!    - JDK 17: every `CLASS_DUMP`, alone in the first segment; then the
//!      instances and arrays, mixed; the GC roots last (the thread objects
//!      and their frames' locals, JNI globals, sticky classes).
//!    - JDK 25, serial and parallel alike: the first segment holds every
//!      `CLASS_DUMP` then every root; the instances and arrays follow (in
//!      a parallel dump, segments of the threads in any order).
//!
//!    So the classes always come before their instances in HotSpot's dumps,
//!    but the format promises no order: a reader that needs a class before
//!    its instances, or the roots before the objects, makes a pass of its
//!    own. profrj's agent appends its own `TRACE`s and `FRAME`s after
//!    `HEAP_DUMP_END` (allocation sites), so a reader must not stop there.
#![deny(missing_docs)]

mod error;
mod header;
mod heap;
mod items;
mod scanner;
mod values;

pub use error::Error;
pub use header::{is_hprof, Header};
pub use heap::sub;
pub use items::{
    ClassDump, Constant, FieldDesc, Frame, Instance, Item, LoadClass, ObjArray, PrimArray, Root,
    RootKind, StartThread, Static, Trace,
};
pub use scanner::{tag, Scanner, Step, MAX_CLASS_DUMP};
pub use values::{ids, BasicType, IdSize, Value, Values};

#[cfg(test)]
mod tests;
