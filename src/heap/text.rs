//! The second pass: the text written as the dump is walked again. The
//! header, `THREAD START`/`END` (from START_THREAD and END_THREAD records,
//! which HotSpot does not write), every `TRACE` the dump has (from the
//! first pass), then the `HEAP DUMP` block (`entries.rs`), the `SITES`
//! block (`sites.rs`), or both.

use super::entries::Entries;
use super::input::Walk;
use super::sites::Sites;
use super::tables::{java_name, Tables};
use super::Fail;
use crate::hprof_text::{column, ctime};
use profrj_format::names::escape;
use std::io::{self, Write};

/// Which blocks, and the `heap=` the header names.
pub struct Options {
    pub dump: bool,
    pub sites: bool,
    pub heap: &'static str,
}

/// Writes the text, walking the dump a second time.
pub fn write(walk: &mut Walk, t: &Tables, o: &Options, out: &mut dyn Write) -> Result<(), Fail> {
    let date = ctime(walk.header.timestamp_ms / 1000);
    header(walk, o, &date, out)?;
    threads(t, out)?;
    traces(t, out)?;
    if o.dump {
        writeln!(
            out,
            "HEAP DUMP BEGIN ({} objects, {} bytes) {date}",
            t.objects, t.bytes
        )?;
    }
    let entries = Entries::new(t);
    let mut sites = Sites::new(t);
    walk.run(|item, body| -> Result<(), Fail> {
        if o.sites {
            sites.see(item);
        }
        if o.dump {
            entries.write(item, body, out)?;
        }
        Ok(())
    })?;
    if o.dump {
        writeln!(out, "HEAP DUMP END")?;
    }
    if o.sites {
        sites.write(&date, out)?;
    }
    Ok(())
}

fn header(walk: &Walk, o: &Options, date: &str, out: &mut dyn Write) -> io::Result<()> {
    write!(
        out,
        "JAVA PROFILE 1.0.1, created {date}\n\
         \n\
         Written by profrj {} (profrj convert --to hprof) from a binary heap dump\n\
         ({}, ids of {} bytes), in the layout of HPROF's java.hprof.txt with heap={}.\n\
         \n\
         TRACE         a TRACE record of the dump, innermost frame first (HotSpot:\n\
         \x20             each thread's stack; its TRACE 1, empty, is every object's:\n\
         \x20             HotSpot records no allocation sites).\n\
         HEAP DUMP     the dump's entries in its order: ROOT a GC root, CLS a class,\n\
         \x20             OBJ an instance, ARR an array, each with its non-null\n\
         \x20             references; ids in hex; sz is the bytes the dump holds for\n\
         \x20             it (field data or elements, no object header).\n\
         SITES         live bytes and objects per trace and class; a dump holds\n\
         \x20             only the living, so alloc'ed repeats live.\n\
         \n\
         --------\n\
         \n",
        env!("CARGO_PKG_VERSION"),
        walk.header.format,
        walk.header.id_size.bytes(),
        o.heap
    )
}

fn threads(t: &Tables, out: &mut dyn Write) -> io::Result<()> {
    for s in &t.threads {
        writeln!(
            out,
            "THREAD START (obj={:x}, id = {}, name=\"{}\", group=\"{}\")",
            s.object,
            s.serial,
            escape(t.symbol(s.name)),
            escape(t.symbol(s.group))
        )?;
    }
    for serial in &t.ended {
        writeln!(out, "THREAD END (id = {serial})")?;
    }
    Ok(())
}

fn traces(t: &Tables, out: &mut dyn Write) -> io::Result<()> {
    for tr in &t.traces {
        writeln!(out, "TRACE {}:", tr.serial)?;
        if tr.frames.is_empty() {
            writeln!(out, "\t<empty>")?;
        }
        for id in &tr.frames {
            writeln!(out, "\t{}", frame(t, *id))?;
        }
    }
    Ok(())
}

/// `class.method(File.java:LINE)`, as HPROF wrote a frame: `Unknown line`
/// for no line, `Compiled method`, `Native method`, `<Unknown Source>`
/// for a class without a source file; `?` where the dump names nothing.
fn frame(t: &Tables, id: u64) -> String {
    let Some(f) = t.frames.get(&id) else {
        return format!("?(<Unknown Source>:Unknown line) frame {id:x}");
    };
    let class = t
        .serials
        .get(&f.class_serial)
        .map_or_else(|| "?".to_owned(), |&c| java_name(t.class_name(c)));
    let file = match f.source {
        0 => "<Unknown Source>",
        s => t.symbol(s),
    };
    let line = match f.line {
        n if n > 0 => n.to_string(),
        -2 => "Compiled method".to_owned(),
        -3 => "Native method".to_owned(),
        _ => "Unknown line".to_owned(),
    };
    let head = format!("{class}.{}", t.symbol(f.method_name));
    format!("{}({}:{line})", column(&head), escape(file))
}
