//! Writes a tiny recording (two samples, an allocation, a lock) to the
//! path given: a quick look at the format with `jfr print FILE`.

use profrj_jfr::encode::Buf;
use profrj_jfr::schema::{self, events, frame_type, thread_state, Frame, Pools, ThreadEntry};
use profrj_jfr::{ChunkWriter, Start};

fn main() -> std::io::Result<()> {
    let path = std::env::args().nth(1).expect("a path");
    let file = std::fs::File::create(path)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let start = Start {
        nanos: now,
        ticks: 1_000_000,
        ticks_per_second: 1_000_000_000,
    };
    let mut w = ChunkWriter::new(std::io::BufWriter::new(file), start)?;
    let mut pools = Pools::default();
    let main_class = pools.class("demo/Main");
    let m_main = pools.method(main_class, "main", "([Ljava/lang/String;)V", 9);
    let m_hot = pools.method(main_class, "hot", "()V", 10);
    let string = pools.class("java/lang/String");
    pools.thread(
        1,
        ThreadEntry {
            name: "main".into(),
            os_thread_id: 4242,
            java_thread_id: 1,
        },
    );
    let stacks = vec![
        vec![
            Frame { method: m_hot, line: 12, bci: 3, kind: frame_type::JAVA },
            Frame { method: m_main, line: 5, bci: 0, kind: frame_type::JAVA },
        ],
        vec![Frame { method: m_main, line: 6, bci: 4, kind: frame_type::JAVA }],
    ];
    w.event(|b| events::execution_sample(b, 1_000_100, 1, 1, thread_state::RUNNABLE))?;
    w.event(|b| events::execution_sample(b, 1_000_200, 1, 1, thread_state::RUNNABLE))?;
    w.event(|b| events::wall_clock_sample(b, 1_000_300, (1, 2, thread_state::SLEEPING), 3, 0))?;
    w.event(|b| events::allocation_sample(b, 1_000_400, (1, 2, string), 524_288, 24))?;
    w.event(|b| events::monitor_enter(b, (1_000_500, 2_000), (1, 1, string), 0, 77))?;
    w.event(|b| events::thread_park(b, (1_000_600, 3_000), (1, 1, string), 78))?;
    w.event(|b| events::os_information(b, 1_000_000, "Linux"))?;
    w.metadata(&schema::metadata_event(start.ticks))?;
    pools.write_checkpoint(&mut w, 1_001_000, stacks.len() as u64, |w| {
        let mut b = Buf::new();
        for (i, s) in stacks.iter().enumerate() {
            b.varint(i as u64 + 1);
            schema::encode_stack(&mut b, false, s);
        }
        w.raw(&b.bytes)
    })?;
    w.finish(1_000_000)?;
    Ok(())
}
