//! Indentation with a ceiling. The snapshot is indented one space per level
//! so a person can read it, but a call tree as deep as the program's stack
//! would make the indentation quadratic in the depth: a 50,000-deep
//! recursion's profile was 2.5 GB of which 9.5 MB was not spaces. Past
//! [`MAX_INDENT`] levels the lines stay at that indentation; the document is
//! the same XML (only whitespace between elements differs).

use std::io::{self, Write};

/// The most spaces a line of a snapshot starts with.
pub const MAX_INDENT: usize = 64;

/// A writer that passes everything through except the indentation beyond
/// [`MAX_INDENT`] spaces. quick-xml writes an element's indentation as two
/// writes, `"\n"` and then its buffer of spaces; that second write is cut to
/// [`MAX_INDENT`]. Nothing else is looked at (two comparisons per write: the
/// writer formats a million nodes a second), so any other text, a newline
/// and spaces inside one write included, passes as it is.
pub struct CappedIndent<W> {
    inner: W,
    /// The last write was `"\n"`.
    after_newline: bool,
}

impl<W: Write> CappedIndent<W> {
    pub fn new(inner: W) -> Self {
        CappedIndent {
            inner,
            after_newline: false,
        }
    }

    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for CappedIndent<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        // quick-xml's indentation is a buffer of its indent character only.
        let indentation = self.after_newline && buf.first() == Some(&b' ');
        self.after_newline = buf == b"\n";
        if indentation {
            self.inner.write_all(&buf[..buf.len().min(MAX_INDENT)])
        } else {
            self.inner.write_all(buf)
        }
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
    fn only_the_indentation_write_is_cut() {
        let mut w = CappedIndent::new(Vec::new());
        let deep = " ".repeat(100);
        w.write_all(b"<a>").unwrap();
        w.write_all(b"\n").unwrap();
        w.write_all(deep.as_bytes()).unwrap();
        w.write_all(b"<b/>").unwrap();
        w.write_all(format!("\n{deep}x").as_bytes()).unwrap();
        w.write_all(deep.as_bytes()).unwrap();
        let text = String::from_utf8(w.into_inner()).unwrap();
        let cut = " ".repeat(MAX_INDENT);
        assert_eq!(text, format!("<a>\n{cut}<b/>\n{deep}x{deep}"));
    }
}
