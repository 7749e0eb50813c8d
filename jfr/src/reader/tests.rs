use super::*;
use crate::encode::Buf;
use crate::schema::{self, events, frame_type, thread_state, Frame as WFrame, Pools, ThreadEntry};
use crate::{ChunkWriter, Start};
use std::io::Cursor as IoCursor;

/// A small recording: two threads, two stacks, one event of each kind.
fn recording() -> Vec<u8> {
    let start = Start {
        nanos: 1_700_000_000_000_000_000,
        ticks: 5_000,
        ticks_per_second: 1_000_000_000,
    };
    let mut w = ChunkWriter::new(IoCursor::new(Vec::new()), start).unwrap();
    let mut pools = Pools::default();
    let main = pools.class("demo/Main");
    let hot = pools.method(main, "hot", "()V", 0);
    let run = pools.method(main, "main", "([Ljava/lang/String;)V", 9);
    let stream = pools.class("java/io/FileInputStream");
    let read = pools.method(stream, "read0", "()I", 0);
    let bytes = pools.class("[B");
    for (k, n) in [(1, "main"), (2, "worker")] {
        pools.thread(
            k,
            ThreadEntry {
                name: n.into(),
                os_thread_id: 100 + k,
                java_thread_id: k,
            },
        );
    }
    let java = |method, line| WFrame {
        method,
        line,
        bci: 1,
        kind: frame_type::JAVA,
    };
    let stacks = [
        (false, vec![java(hot, 3), java(run, 9)]),
        (
            true,
            vec![
                WFrame {
                    method: read,
                    line: -1,
                    bci: -1,
                    kind: frame_type::NATIVE,
                },
                java(run, 10),
            ],
        ),
    ];
    w.event(|b| events::execution_sample(b, 6_000, 1, 1, thread_state::RUNNABLE))
        .unwrap();
    w.event(|b| events::wall_clock_sample(b, 6_100, (2, 2, thread_state::SLEEPING), 4, 0))
        .unwrap();
    w.event(|b| events::allocation_sample(b, 6_200, (1, 1, bytes), 1000, 250))
        .unwrap();
    w.event(|b| events::monitor_enter(b, (6_300, 700), (2, 1, main), 0, 0))
        .unwrap();
    w.event(|b| events::thread_park(b, (6_400, 800), (2, 2, bytes), 0))
        .unwrap();
    w.event(|b| events::os_information(b, 6_500, "Linux"))
        .unwrap();
    w.metadata(&schema::metadata_event(start.ticks)).unwrap();
    pools
        .write_checkpoint(&mut w, 7_000, stacks.len() as u64, |w| {
            let mut b = Buf::new();
            for (i, (t, s)) in stacks.iter().enumerate() {
                b.varint(i as u64 + 1);
                schema::encode_stack(&mut b, *t, s);
            }
            w.raw(&b.bytes)
        })
        .unwrap();
    w.finish(2_000).unwrap().into_inner()
}

/// An event read: kind, thread name, frames as `Class.method:line`, class.
type Read = (Kind, String, Vec<String>, Option<String>);

/// Every event read.
fn read_all(bytes: &[u8]) -> Result<Vec<Read>> {
    let mut out = Vec::new();
    read(&mut IoCursor::new(bytes), |c, r| {
        let thread = c
            .thread(r.thread)
            .and_then(|t| c.thread_name(t))
            .unwrap_or_default();
        let frames = c
            .stack(r.stack)
            .map(|s| {
                s.frames
                    .iter()
                    .map(|f| {
                        let m = c.method(f.method).unwrap_or(Method {
                            class: "?".into(),
                            name: "?".into(),
                            descriptor: String::new(),
                        });
                        let native = c.frame_type(f.kind).as_deref() == Some("Native");
                        format!(
                            "{}.{}{}:{}",
                            m.class,
                            m.name,
                            if native { "!" } else { "" },
                            f.line
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push((r.kind, thread, frames, c.class_name(r.class)));
        Ok(())
    })?;
    Ok(out)
}

#[test]
fn what_is_written_reads_back() {
    let got = read_all(&recording()).unwrap();
    assert_eq!(got.len(), 5, "{got:?}");
    assert_eq!(
        got[0].0,
        Kind::Sample {
            count: 1,
            running: true
        }
    );
    assert_eq!(got[0].1, "main");
    assert_eq!(got[0].2, ["demo.Main.hot:3", "demo.Main.main:9"]);
    assert_eq!(
        got[1].0,
        Kind::Sample {
            count: 4,
            running: false
        }
    );
    assert_eq!(
        got[1].2,
        ["java.io.FileInputStream.read0!:-1", "demo.Main.main:10"]
    );
    assert_eq!(
        got[2].0,
        Kind::Allocation {
            weight: 1000,
            size: Some(250)
        }
    );
    assert_eq!(got[2].3.as_deref(), Some("byte[]"));
    assert_eq!(
        got[3].0,
        Kind::Lock {
            duration_ns: 700,
            park: false
        }
    );
    assert_eq!(got[3].3.as_deref(), Some("demo.Main"));
    assert_eq!(
        got[4].0,
        Kind::Lock {
            duration_ns: 800,
            park: true
        }
    );
}

#[test]
fn two_chunks_read_in_order() {
    let mut two = recording();
    two.extend(recording());
    let mut chunks = Vec::new();
    let s = read(&mut IoCursor::new(&two), |c, _| {
        chunks.push(c.index);
        Ok(())
    })
    .unwrap();
    assert_eq!(s.chunks, 2);
    assert_eq!(chunks, [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
}

#[test]
fn every_cut_is_an_error_not_a_panic() {
    let full = recording();
    assert!(matches!(
        read_all(&[]).unwrap_err(),
        Error::Malformed { offset: 0, .. }
    ));
    // Cut inside the header, or after it (the header's size is the
    // whole chunk's): the reader says so before reading anything else.
    for n in 1..full.len() {
        match read_all(&full[..n]).map(|events| events.len()) {
            Err(Error::Truncated { offset, .. }) => {
                assert_eq!(offset, if n < 68 { 0 } else { 8 }, "cut at {n}")
            }
            other => panic!("a file cut at {n} bytes: {other:?}"),
        }
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    let full = recording();
    let mut x: u32 = 12345;
    for i in 0..full.len() {
        for v in [0u8, 0xff, 0x80, 0x7f] {
            let mut bad = full.clone();
            bad[i] = v;
            let _ = read_all(&bad);
        }
        // And a random byte at a random second place.
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let mut bad = full.clone();
        bad[i] ^= x as u8;
        let j = (x as usize >> 8) % bad.len();
        bad[j] = (x >> 16) as u8;
        let _ = read_all(&bad);
    }
}

#[test]
fn an_unfinished_chunk_is_refused() {
    let mut bytes = recording();
    bytes[64] = 1; // file state: still being written
    let e = read_all(&bytes).unwrap_err();
    assert!(
        matches!(e, Error::Unsupported { offset: 0, .. }) && e.to_string().contains("unfinished"),
        "{e}"
    );
    let mut bytes = recording();
    bytes[24..32].copy_from_slice(&0u64.to_be_bytes()); // no metadata yet
    let e = read_all(&bytes).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
}
