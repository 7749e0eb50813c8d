//! Indentation with a ceiling. The snapshot is indented one space per level
//! so a person can read it, but a call tree as deep as the program's stack
//! would make the indentation quadratic in the depth: a 50,000-deep
//! recursion's profile was 2.5 GB of which 9.5 MB was not spaces. Past
//! [`MAX_INDENT`] levels the lines stay at that indentation; the document is
//! the same XML (only whitespace between elements differs).

use std::io::{self, Write};

/// The most spaces a line of a snapshot starts with.
pub const MAX_INDENT: usize = 64;

/// A writer that passes everything through except the spaces beyond
/// [`MAX_INDENT`] at the start of a line. quick-xml writes an element's
/// indentation as a newline and then spaces; nothing else in a snapshot
/// starts a line with spaces (names never hold a newline: they are escaped).
pub struct CappedIndent<W> {
    inner: W,
    /// At a line's start: how many more leading spaces may pass.
    leading: Option<usize>,
}

impl<W: Write> CappedIndent<W> {
    pub fn new(inner: W) -> Self {
        CappedIndent {
            inner,
            leading: None,
        }
    }

    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for CappedIndent<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while !rest.is_empty() {
            if let Some(allowed) = self.leading {
                let spaces = rest.iter().take_while(|&&b| b == b' ').count();
                self.inner.write_all(&rest[..spaces.min(allowed)])?;
                rest = &rest[spaces..];
                if rest.is_empty() {
                    self.leading = Some(allowed.saturating_sub(spaces));
                    break;
                }
                self.leading = None;
            }
            match rest.iter().position(|&b| b == b'\n') {
                None => {
                    self.inner.write_all(rest)?;
                    break;
                }
                Some(i) => {
                    self.inner.write_all(&rest[..=i])?;
                    self.leading = Some(MAX_INDENT);
                    rest = &rest[i + 1..];
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quick_xml::events::{BytesEnd, BytesStart, Event};

    #[test]
    fn lines_past_the_ceiling_keep_its_indentation() {
        let depth = 200;
        let mut w = quick_xml::Writer::new_with_indent(CappedIndent::new(Vec::new()), b' ', 1);
        for i in 0..depth {
            let mut el = BytesStart::new("profile");
            el.push_attribute(("name", format!("a  b{i}").as_str()));
            w.write_event(Event::Start(el)).unwrap();
        }
        for _ in 0..depth {
            w.write_event(Event::End(BytesEnd::new("profile"))).unwrap();
        }
        let text = String::from_utf8(w.into_inner().into_inner()).unwrap();
        let indents: Vec<usize> = text
            .lines()
            .map(|l| l.len() - l.trim_start().len())
            .collect();
        assert_eq!(indents.iter().max(), Some(&MAX_INDENT));
        assert_eq!(
            indents[..=MAX_INDENT],
            (0..=MAX_INDENT).collect::<Vec<_>>()[..]
        );
        assert_eq!(indents[depth - 1], MAX_INDENT, "the deepest line");
        // Spaces inside a line are kept.
        assert!(text.contains("name=\"a  b199\""));
        assert_eq!(text.lines().count(), 2 * depth);
    }

    #[test]
    fn indentation_split_across_writes() {
        let mut w = CappedIndent::new(Vec::new());
        w.write_all(b"<a>\n").unwrap();
        for _ in 0..100 {
            w.write_all(b" ").unwrap();
        }
        w.write_all(b"<b/>\n  x  \n").unwrap();
        let text = String::from_utf8(w.into_inner()).unwrap();
        assert_eq!(
            text,
            format!("<a>\n{}<b/>\n  x  \n", " ".repeat(MAX_INDENT))
        );
    }
}
