//! docs/OPTIONS.md's tables, rendered from the rows `help` prints (the
//! agent's own options and each registered mode's), so the page cannot drift
//! from the parser. The page's hand-written text lives outside two marker
//! lines; only what lies between them is generated.
//!
//! Regenerate after changing an option:
//! `UPDATE_OPTIONS_DOC=1 cargo test --release -p profrj-agent --lib options_doc`
//! (without the variable, the test fails when the page and the code differ).

use super::{ModeOptions, Opt, Takes, OPTIONS};

/// The line before the generated tables.
pub const BEGIN: &str =
    "<!-- BEGIN GENERATED: the option rows in code; regenerate, do not edit (see the top) -->";
/// The line after them.
pub const END: &str = "<!-- END GENERATED -->";

/// The generated part: the commands, each mode's options (the mode's own row
/// first), then the settings every mode shares, in `help`'s order.
pub fn markdown(modes: &[&ModeOptions]) -> String {
    let mut s = String::new();
    s.push_str("## Commands\n\n");
    s.push_str("One per option string; `start` when none is named. Each later load of the agent in the same JVM (`profrj attach`, `jcmd`) is a command to the running agent.\n\n");
    s.push_str("| command | meaning |\n|---|---|\n");
    for o in OPTIONS.iter().filter(|o| o.takes == Takes::Command) {
        let meaning = o.meaning.strip_prefix("command: ").unwrap_or(o.meaning);
        s.push_str(&format!("| {} | {} |\n", code(o.syntax), cell(meaning)));
    }
    s.push_str("\n## Modes\n\nNaming a mode asks for it; the options under it are its settings.\n");
    for mode in modes {
        let Some((own, settings)) = mode.options.split_first() else {
            continue;
        };
        s.push_str(&format!("\n### {}\n\n", mode.mode()));
        let mut notes = Vec::new();
        if mode.default_mode {
            notes.push("The mode of a `start` that names none.");
        }
        if mode.records_others {
            notes.push(
                "It records the other modes' events; named alone, the default mode comes with it.",
            );
        }
        for n in notes {
            s.push_str(&format!("{n}\n\n"));
        }
        s.push_str("| option | default | meaning |\n|---|---|---|\n");
        for o in std::iter::once(own).chain(settings) {
            row(&mut s, o);
        }
    }
    s.push_str("\n## The agent's own settings\n\n");
    s.push_str("| option | default | taken by | meaning |\n|---|---|---|---|\n");
    for o in OPTIONS.iter().filter(|o| o.takes != Takes::Command) {
        let takes = match o.takes {
            Takes::Start => "`start`",
            Takes::StartOrDump => "`start`, `dump`",
            Takes::StartOrHeapDump => "`start`, `heapdump`",
            Takes::Any | Takes::Command => "every command",
        };
        s.push_str(&format!(
            "| {} | {} | {takes} | {} |\n",
            code(o.syntax),
            default(o),
            cell(o.meaning)
        ));
    }
    s
}

fn row(s: &mut String, o: &Opt) {
    s.push_str(&format!(
        "| {} | {} | {} |\n",
        code(o.syntax),
        default(o),
        cell(o.meaning)
    ));
}

fn default(o: &Opt) -> String {
    if o.default.is_empty() {
        String::new()
    } else {
        cell(o.default)
    }
}

/// `x` in a table cell as code (a `|` escaped: GitHub's tables split at it
/// even inside backticks).
fn code(x: &str) -> String {
    format!("`{}`", x.replace('|', "\\|"))
}

/// Text in a table cell: `|` escaped, `<section>` names not read as HTML.
fn cell(x: &str) -> String {
    x.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `page` with its generated part replaced by `generated`; `None` if the page
/// lacks the two marker lines.
pub fn splice(page: &str, generated: &str) -> Option<String> {
    let start = page.find(BEGIN)? + BEGIN.len();
    let end = start + page[start..].find(END)?;
    Some(format!("{}\n{generated}{}", &page[..start], &page[end..]))
}

#[cfg(test)]
mod tests {
    use super::{markdown, splice};

    /// docs/OPTIONS.md holds exactly the rows `help` prints; with
    /// `UPDATE_OPTIONS_DOC=1` the test rewrites the page instead.
    #[test]
    fn options_doc_matches_the_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/OPTIONS.md");
        let page = std::fs::read_to_string(path).expect("docs/OPTIONS.md");
        let generated = markdown(&crate::registry::mode_options());
        let want = splice(&page, &generated).expect("docs/OPTIONS.md lacks the marker lines");
        if std::env::var_os("UPDATE_OPTIONS_DOC").is_some() {
            if want != page {
                std::fs::write(path, &want).expect("write docs/OPTIONS.md");
            }
            return;
        }
        assert!(
            want == page,
            "docs/OPTIONS.md differs from the option rows in code; regenerate it: \
             UPDATE_OPTIONS_DOC=1 cargo test --release -p profrj-agent --lib options_doc"
        );
    }

    /// Every option appears in the generated page, with its default.
    #[test]
    fn options_doc_lists_every_option() {
        let modes = crate::registry::mode_options();
        let page = markdown(&modes);
        for o in crate::options::all_options(&modes) {
            let syntax = format!("`{}`", o.syntax.replace('|', "\\|"));
            assert!(page.contains(&syntax), "{} missing", o.syntax);
        }
        assert!(page.contains("| `depth=N` | 2048 | `start` |"));
    }

    /// Every option string in the page's examples parses.
    #[test]
    fn options_doc_examples_parse() {
        let page = include_str!("../../../docs/OPTIONS.md");
        let strings: Vec<&str> = (page.lines())
            .filter_map(|l| {
                let (_, rest) = l
                    .split_once("libprofrj.so=")
                    .or_else(|| l.split_once("profrj attach PID "))?;
                rest.split_whitespace()
                    .next()
                    .map(|s| s.trim_end_matches('`'))
            })
            .collect();
        assert!(strings.len() >= 4, "{strings:?}");
        for s in strings {
            if let Err(e) = crate::registry::parse_options(Some(s)) {
                panic!("docs/OPTIONS.md's example '{s}' does not parse: {e}");
            }
        }
    }

    #[test]
    fn splice_keeps_the_hand_written_text() {
        let page = format!("top\n{}\nold\n{}\nfoot\n", super::BEGIN, super::END);
        let new = splice(&page, "new\n").unwrap();
        assert_eq!(
            new,
            format!("top\n{}\nnew\n{}\nfoot\n", super::BEGIN, super::END)
        );
    }
}
