//! Text that came from another process (an attach peer, a reply file) shown
//! on a terminal: its control characters are written out, so that no escape
//! sequence it carries reaches the terminal (which could retitle it, clear it,
//! rewrite what was printed before, or, on some terminals, answer back as if
//! typed).

use std::fmt::Write;

/// `text` with every control character escaped but newline and tab: C0
/// controls and DEL as `\xNN` (ESC is `\x1b`), C1 controls and the
/// bidirectional overrides (which reorder what is shown) as `\u{NNNN}`.
/// A backslash already in the text is left as it is.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            '\0'..='\x1f' | '\x7f' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() || is_bidi_control(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Unicode's explicit direction marks, embeddings, overrides and isolates.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn controls_are_written_out_newlines_and_tabs_kept() {
        assert_eq!(
            printable("a\x1b[2J\x07\r\n\tb\u{9b}c\u{202e}d\x7f\0é"),
            "a\\x1b[2J\\x07\\x0d\n\tb\\u{9b}c\\u{202e}d\\x7f\\x00é"
        );
        assert_eq!(printable("plain text: 1 / 2"), "plain text: 1 / 2");
    }
}
