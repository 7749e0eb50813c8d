//! Prints the order of an HPROF file's records and sub-records, runs of one
//! kind folded into one line (`kind ×count`): how the crate's notes on
//! HotSpot's order were checked. `cargo run --release -p profrj-hprof
//! --example hprof_order FILE`.

use profrj_hprof::{Header, Item, Scanner, Step};

fn kind(item: &Item) -> String {
    match item {
        Item::Utf8 { .. } => "UTF8".into(),
        Item::LoadClass(_) => "LOAD_CLASS".into(),
        Item::UnloadClass { .. } => "UNLOAD_CLASS".into(),
        Item::Frame(_) => "FRAME".into(),
        Item::Trace(t) => format!("TRACE(serial {}, {} frames)", t.serial, t.count),
        Item::StartThread(_) => "START_THREAD".into(),
        Item::EndThread { .. } => "END_THREAD".into(),
        Item::HeapDump {
            segment, length, ..
        } => format!(
            "{} of {length} bytes",
            if *segment {
                "HEAP_DUMP_SEGMENT"
            } else {
                "HEAP_DUMP"
            }
        ),
        Item::HeapDumpEnd { .. } => "HEAP_DUMP_END".into(),
        Item::Record { tag, .. } => format!("record 0x{tag:02x}"),
        Item::Root(r) => {
            let k = format!("{:?}", r.kind);
            format!("  ROOT {}", k.split([' ', '{']).next().unwrap_or(""))
        }
        Item::Class(_) => "  CLASS_DUMP".into(),
        Item::Instance(_) => "  INSTANCE_DUMP".into(),
        Item::ObjArray(_) => "  OBJ_ARRAY_DUMP".into(),
        Item::PrimArray(_) => "  PRIM_ARRAY_DUMP".into(),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: hprof_order FILE")?;
    let bytes = std::fs::read(path)?;
    let (header, start) = Header::parse(&bytes)?.ok_or("a cut header")?;
    println!("{header:?}");
    let mut s = Scanner::new(header.id_size, start as u64);
    s.set_file_len(bytes.len() as u64);
    let (mut last, mut run) = (String::new(), 0u64);
    loop {
        let at = s.position();
        let buf = bytes.get(at as usize..).unwrap_or(&[]);
        match s.next(buf, at)? {
            Step::Item { item, .. } => {
                let k = kind(&item);
                if k == last {
                    run += 1;
                } else {
                    if run > 0 {
                        println!("{last} x{run}");
                    }
                    (last, run) = (k, 1);
                }
            }
            Step::NeedMore { .. } => unreachable!("the whole file is in the buffer"),
            Step::End => break,
        }
    }
    println!("{last} x{run}");
    Ok(())
}
