//! Text the agent writes into a snapshot's attributes. Names come from the
//! program (a thread may be named "\u{1}" or carry terminal escapes, a class
//! a lone surrogate), and XML 1.0 forbids most control characters outright:
//! one such character would make the whole snapshot unreadable. So every
//! name goes through [`name`], the format's escape
//! ([`profrj_format::names`]): a character XML 1.0 forbids is written
//! `\uXXXX` (four hex digits), and so are tab, newline and carriage return
//! (a parser reads them back as spaces in an attribute) and a lone
//! surrogate; a backslash is written `\\`. profrj's reader turns them all
//! back.

use std::borrow::Cow;

/// `s` escaped for a snapshot (borrowed when there is nothing to change,
/// the common case).
pub fn name(s: &str) -> Cow<'_, str> {
    profrj_format::names::escape(s)
}

/// [`name`], then XML's own escaping of `&<>"'`, for text formatted into an
/// element by hand.
pub fn attribute(s: &str) -> String {
    quick_xml::escape::escape(name(s).as_ref()).into_owned()
}

/// Attribute-escaped names by id, each escaped once: a call tree repeats
/// its names across nodes.
#[derive(Default)]
pub struct EscapedNames(Vec<Option<String>>);

impl EscapedNames {
    /// Name `id` (whose text is `raw`), escaped for an attribute.
    pub fn get(&mut self, id: u32, raw: &str) -> &str {
        let slot = id as usize;
        if self.0.len() <= slot {
            self.0.resize(slot + 1, None);
        }
        self.0[slot].get_or_insert_with(|| attribute(raw))
    }
}

/// Appends ` key="value"` to an element formatted by hand; `value` must
/// need no escaping (the output of [`attribute`]).
pub fn push_attribute(buf: &mut String, key: &str, value: &str) {
    buf.push(' ');
    buf.push_str(key);
    buf.push_str("=\"");
    buf.push_str(value);
    buf.push('"');
}

/// [`push_attribute`] for a number: digits by hand, since `write!` (the
/// formatting machinery per call) doubled the time of a million-node tree.
pub fn push_number(buf: &mut String, key: &str, n: u64) {
    let mut digits = [0u8; 20];
    push_attribute(buf, key, decimal(n, &mut digits));
}

/// `n` in decimal, written into the end of `digits`.
pub fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &str {
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&digits[i..]).unwrap_or("0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_backslashes_are_escaped() {
        assert!(matches!(name("main"), Cow::Borrowed("main")));
        assert_eq!(name("a\u{1}b"), "a\\u0001b");
        assert_eq!(name("\u{1b}[31mred"), "\\u001B[31mred");
        assert_eq!(name("c:\\x"), "c:\\\\x");
        assert_eq!(
            name("tab\tnl\n"),
            "tab\\u0009nl\\u000A",
            "kept through attribute normalisation"
        );
        assert_eq!(attribute("<\u{0}>"), "&lt;\\u0000&gt;");
        let mut buf = String::from("profile");
        push_attribute(&mut buf, "name", "a&amp;b");
        for n in [0, 7, 10, u64::MAX] {
            push_number(&mut buf, "n", n);
        }
        assert_eq!(
            buf,
            "profile name=\"a&amp;b\" n=\"0\" n=\"7\" n=\"10\" n=\"18446744073709551615\""
        );
    }
}
