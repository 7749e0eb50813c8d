//! How a name is written into text: the one escape every writer uses, the
//! agent's snapshot and the CLI's converters alike, so a name reads the same
//! in a snapshot, a collapsed stack, a pprof string, an LCOV record, a
//! Cobertura attribute or an HPROF frame.
//!
//! Names come from the program: a thread may be named "\u{1}", a class may
//! carry an ANSI escape. A control character (Unicode's Cc: U+0000–U+001F,
//! U+007F–U+009F) and the two non-characters XML 1.0 forbids (U+FFFE,
//! U+FFFF) are written `\uXXXX`, four upper-case hex digits; tab, newline and
//! carriage return too (an XML parser turns them into spaces in an
//! attribute, a line-based format would start a new record). A backslash is
//! written `\\`, so the escape can be undone exactly. Everything else,
//! characters outside the Basic Multilingual Plane included, is written as
//! it is (UTF-8).
//!
//! A lone surrogate (a JVM string can hold one; no UTF-8 can) is written by
//! the agent as its escape, `\uD83D`. The CLI's reader cannot turn that one
//! back into a `char`, so a name read from a snapshot holds it as the six
//! characters `\uD83D`; [`decoded_name`] writes those as they are, so the
//! converters carry it through unchanged.

use std::borrow::Cow;

/// Is `c` written as `\uXXXX`?
pub fn escaped(c: char) -> bool {
    c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}'
}

/// `s`, a name as the program made it, with [`escaped`] characters as
/// `\uXXXX` and every backslash doubled (borrowed when nothing changes, the
/// common case). The agent writes every name through this.
pub fn name(s: &str) -> Cow<'_, str> {
    write(s, false)
}

/// `s`, a name read back from a snapshot, escaped as [`name`] does, except
/// that a lone surrogate's escape (`\uD800`–`\uDFFF`, which the reader
/// leaves as text) stays as it is. The CLI's writers use this.
pub fn decoded_name(s: &str) -> Cow<'_, str> {
    write(s, true)
}

fn write(s: &str, keep_surrogates: bool) -> Cow<'_, str> {
    if !s.chars().any(|c| c == '\\' || escaped(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for (i, c) in s.char_indices() {
        match c {
            '\\' if keep_surrogates && surrogate_escape(&s[i..]) => out.push('\\'),
            '\\' => out.push_str("\\\\"),
            c if escaped(c) => push_escape(&mut out, c),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Does `s` start with `\uD800`–`\uDFFF` (a lone surrogate's escape)?
fn surrogate_escape(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 6
        && b[1] == b'u'
        && b[2..6].iter().all(u8::is_ascii_hexdigit)
        && matches!(b[2], b'D' | b'd')
        && matches!(b[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
}

fn push_escape(out: &mut String, c: char) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let v = c as u32;
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[(v >> shift & 0xF) as usize] as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_backslashes() {
        assert!(matches!(name("main"), Cow::Borrowed("main")));
        assert_eq!(name("a\u{1}b"), "a\\u0001b");
        assert_eq!(name("\u{1b}[31mred"), "\\u001B[31mred");
        assert_eq!(name("c:\\x"), "c:\\\\x");
        assert_eq!(name("tab\tnl\ncr\r"), "tab\\u0009nl\\u000Acr\\u000D");
        assert_eq!(
            name("nul\u{0}del\u{7f}csi\u{9b}"),
            "nul\\u0000del\\u007Fcsi\\u009B"
        );
        assert_eq!(name("\u{fffe}\u{ffff}"), "\\uFFFE\\uFFFF");
        // Outside the BMP, and any other character: as it is.
        assert!(matches!(name("🦀 é 𠀀"), Cow::Borrowed("🦀 é 𠀀")));
    }

    #[test]
    fn surrogate_escapes_stay_only_in_decoded_names() {
        assert_eq!(name("a\\uD83Db"), "a\\\\uD83Db");
        assert_eq!(decoded_name("a\\uD83Db"), "a\\uD83Db");
        assert_eq!(
            decoded_name("\\udfff\\u0041\\\\"),
            "\\udfff\\\\u0041\\\\\\\\"
        );
        assert_eq!(decoded_name("\\uD7FF x\u{1}"), "\\\\uD7FF x\\u0001");
        assert_eq!(decoded_name("\\uD8"), "\\\\uD8");
    }
}
