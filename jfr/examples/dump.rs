//! Prints the events profrj reads from a JFR file, one a line, with their
//! stacks top first: a look at what the reader makes of a recording.

fn main() {
    let path = std::env::args().nth(1).expect("a JFR file");
    let mut f = std::fs::File::open(path).expect("readable");
    let s = profrj_jfr::reader::read(&mut f, |c, r| {
        let thread = c.thread(r.thread).and_then(|t| c.thread_name(t));
        let frames: Vec<String> = c
            .stack(r.stack)
            .map(|s| {
                s.frames
                    .iter()
                    .map(|f| match c.method(f.method) {
                        Some(m) => {
                            format!("{}#{} {}.{}:{}", f.method, f.kind, m.class, m.name, f.line)
                        }
                        None => format!("?{}", f.method),
                    })
                    .collect()
            })
            .unwrap_or_default();
        println!(
            "{:?} {:?} stack {} [{}]",
            r.kind,
            thread,
            r.stack,
            frames.join(" | ")
        );
        Ok(())
    });
    eprintln!("{s:?}");
}
