//! Any bytes: read as a JFR recording with profrj's reader (`profrj-jfr`),
//! every event's thread, stack, frames and class resolved. It must return
//! (an error or the events), never panic, loop or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = std::io::Cursor::new(data);
    let _ = profrj_jfr::reader::read(&mut input, |c, r| {
        if let Some(t) = c.thread(r.thread) {
            let _ = c.thread_name(t);
        }
        if let Some(s) = c.stack(r.stack) {
            for f in &s.frames {
                let _ = (c.method(f.method), c.frame_type(f.kind));
            }
        }
        let _ = c.class_name(r.class);
        Ok(())
    });
});
