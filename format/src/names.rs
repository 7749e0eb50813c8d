//! Java names as profrj holds and writes them, one scheme for the agent
//! (which reads them from the JVM) and the readers (which read them back
//! from a snapshot). docs/NAMES.md tells the why.
//!
//! The JVM hands out names (of classes, methods, threads, source files) in
//! modified UTF-8: each UTF-16 unit of the Java string encoded on its own
//! (a character beyond the Basic Multilingual Plane as its two surrogates,
//! three bytes each), and U+0000 as `C0 80`. A Java string can hold what no
//! Unicode text can: a surrogate without its other half (a lone surrogate).
//!
//! In a Rust `String`, profrj holds a Java string as its characters, except
//! a lone surrogate: that becomes a marker, the code point
//! `U+10F800 + (unit - 0xD800)` (the last 2,048 code points, private use
//! since Unicode 2.0). A character of the Java string that falls in that
//! range itself is held as its two surrogates' markers, so a marker always
//! stands for one UTF-16 unit, and the mapping is one to one:
//! [`java_units`] gives the Java string back.
//!
//! In a snapshot, [`escape`] writes a name as XML 1.0 can hold it: a control
//! character (U+0000 to U+001F, tab and line ends included: a parser would
//! turn them into spaces; U+007F to U+009F), U+FFFE, U+FFFF and a marker as `\uXXXX` (four hex
//! digits: the UTF-16 unit), a backslash as `\\`; everything else as itself.
//! [`unescape`] turns that back. Every writer of a text format, the agent's
//! snapshot and the CLI's converters alike, writes names through [`escape`],
//! so a name reads the same in a snapshot, a collapsed stack, a pprof string,
//! an LCOV record, a Cobertura attribute or an HPROF frame. It is also how a user types a name that a
//! command line cannot carry (`report --thread 'a\u0000b'`, `'x\uD83D'`).

use std::borrow::Cow;

/// The first marker: the one for unit 0xD800.
const MARKER_BASE: u32 = 0x10_F800;

/// The marker that stands for surrogate `unit` (0xD800 to 0xDFFF).
fn marker(unit: u16) -> char {
    char::from_u32(MARKER_BASE + (unit as u32 - 0xD800)).unwrap_or('\u{FFFD}')
}

/// The UTF-16 unit that `c` stands for, if it is a marker.
pub fn marker_unit(c: char) -> Option<u16> {
    let v = c as u32;
    (v >= MARKER_BASE).then(|| (v - MARKER_BASE + 0xD800) as u16)
}

/// Pushes a Java string's units, as they come, onto a `String`.
#[derive(Default)]
struct Builder {
    out: String,
    /// A high surrogate waiting for its low one.
    high: Option<u16>,
}

impl Builder {
    fn push(&mut self, unit: u16) {
        if let Some(high) = self.high.take() {
            if (0xDC00..=0xDFFF).contains(&unit) {
                let c = 0x10000 + (((high as u32) - 0xD800) << 10) + (unit as u32 - 0xDC00);
                if c >= MARKER_BASE {
                    // A real character in the markers' range: as its units.
                    self.out.push(marker(high));
                    self.out.push(marker(unit));
                } else {
                    self.out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                }
                return;
            }
            self.out.push(marker(high));
        }
        match unit {
            0xD800..=0xDBFF => self.high = Some(unit),
            0xDC00..=0xDFFF => self.out.push(marker(unit)),
            u => self
                .out
                .push(char::from_u32(u as u32).unwrap_or('\u{FFFD}')),
        }
    }

    fn push_char(&mut self, c: char) {
        let mut units = [0u16; 2];
        for &u in c.encode_utf16(&mut units).iter() {
            self.push(u);
        }
    }

    fn finish(mut self) -> String {
        if let Some(high) = self.high.take() {
            self.out.push(marker(high));
        }
        self.out
    }
}

/// A Java string from its UTF-16 units.
pub fn from_java_units(units: impl IntoIterator<Item = u16>) -> String {
    let mut b = Builder::default();
    units.into_iter().for_each(|u| b.push(u));
    b.finish()
}

/// The UTF-16 units of the Java string `s` holds.
pub fn java_units(s: &str) -> impl Iterator<Item = u16> + '_ {
    s.chars().flat_map(|c| {
        let mut units = [0u16; 2];
        let n = match marker_unit(c) {
            Some(u) => {
                units[0] = u;
                1
            }
            None => c.encode_utf16(&mut units).len(),
        };
        units.into_iter().take(n)
    })
}

/// A name the JVM gave in modified UTF-8 (JNI, JVMTI, a class file's
/// constant pool). Bytes that are not modified UTF-8 (which the JVM never
/// hands out) become U+FFFD each; a four-byte UTF-8 sequence is taken as
/// the character it encodes.
pub fn decode_modified_utf8(bytes: &[u8]) -> String {
    // Most names are ASCII without NUL, and the same in both encodings.
    if bytes.iter().all(|&b| b != 0 && b < 0x80) {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut b = Builder::default();
    let mut i = 0;
    let cont = |k: usize| {
        bytes
            .get(k)
            .filter(|&&x| x & 0xC0 == 0x80)
            .map(|&x| (x & 0x3F) as u32)
    };
    while i < bytes.len() {
        let lead = bytes[i] as u32;
        let (value, len) = match lead {
            0x00..=0x7F => (Some(lead), 1),
            0xC0..=0xDF => (cont(i + 1).map(|c1| ((lead & 0x1F) << 6) | c1), 2),
            0xE0..=0xEF => (
                cont(i + 1)
                    .zip(cont(i + 2))
                    .map(|(c1, c2)| ((lead & 0x0F) << 12) | (c1 << 6) | c2),
                3,
            ),
            0xF0..=0xF7 => (
                cont(i + 1)
                    .zip(cont(i + 2))
                    .zip(cont(i + 3))
                    .map(|((c1, c2), c3)| ((lead & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3),
                4,
            ),
            _ => (None, 1),
        };
        match value {
            Some(v) if v > 0xFFFF => match char::from_u32(v) {
                Some(c) => b.push_char(c),
                None => b.push(0xFFFD),
            },
            Some(v) => b.push(v as u16),
            None => {
                b.push(0xFFFD);
                i += 1;
                continue;
            }
        }
        i += len;
    }
    b.finish()
}

/// The modified UTF-8 of the Java string `s` holds (what the JVM would
/// hand out for it).
pub fn to_modified_utf8(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 4);
    for u in java_units(s) {
        match u {
            0x0001..=0x007F => out.push(u as u8),
            0x0000 | 0x0080..=0x07FF => {
                out.push(0xC0 | (u >> 6) as u8);
                out.push(0x80 | (u & 0x3F) as u8);
            }
            _ => {
                out.push(0xE0 | (u >> 12) as u8);
                out.push(0x80 | ((u >> 6) & 0x3F) as u8);
                out.push(0x80 | (u & 0x3F) as u8);
            }
        }
    }
    out
}

/// Is `c` written as an escape: forbidden in XML 1.0, changed by a parser's
/// attribute normalisation (tab, newline, carriage return), a C1 control or
/// DEL (U+007F–U+009F: U+009B starts a terminal's control sequence as ESC
/// `[` does), or a marker?
pub fn escaped(c: char) -> bool {
    c.is_control() || matches!(c, '\u{FFFE}' | '\u{FFFF}') || marker_unit(c).is_some()
}

fn push_escape(out: &mut String, unit: u16) {
    out.push_str(&format!("\\u{unit:04X}"));
}

/// `s` as a snapshot writes it (see the module's comment); borrowed when
/// there is nothing to change, the common case.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c == '\\' || escaped(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if escaped(c) => push_escape(&mut out, marker_unit(c).unwrap_or(c as u16)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` for a terminal: control characters (a name may carry ANSI escape
/// sequences), U+FFFE, U+FFFF and markers as `\uXXXX`, never raw. Unlike
/// [`escape`], backslashes stay as they are.
pub fn shown(s: &str) -> Cow<'_, str> {
    let show = |c: char| c.is_control() || escaped(c);
    if !s.chars().any(show) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match marker_unit(c) {
            Some(unit) => push_escape(&mut out, unit),
            None if show(c) => push_escape(&mut out, c as u16),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A name as a snapshot wrote it (or a user typed it), decoded: `\\` is a
/// backslash, `\uXXXX` the UTF-16 unit XXXX (a surrogate pair's two escapes
/// the character, a lone surrogate its marker); any other backslash stands
/// for itself. A character of the markers' range written as itself is that
/// character (held as its surrogates' markers), never a lone surrogate.
pub fn unescape(s: &str) -> Cow<'_, str> {
    // A marker's UTF-8 starts with F4 (as every code point from U+100000).
    if !s.bytes().any(|b| b == b'\\' || b == 0xF4) {
        return Cow::Borrowed(s);
    }
    let mut b = Builder::default();
    let mut rest = s;
    while let Some(i) = rest.find('\\') {
        rest[..i].chars().for_each(|c| b.push_char(c));
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('\\') {
            b.push_char('\\');
            rest = tail;
            continue;
        }
        let unit = after
            .strip_prefix('u')
            .and_then(|h| h.get(..4))
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|h| u16::from_str_radix(h, 16).ok());
        match unit {
            Some(u) => {
                b.push(u);
                rest = &after[5..];
            }
            None => {
                b.push_char('\\');
                rest = after;
            }
        }
    }
    rest.chars().for_each(|c| b.push_char(c));
    Cow::Owned(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An emoji, U+0000, a lone high surrogate, a lone low one, a real
    /// character in the markers' range, and a backslash.
    fn odd_units() -> Vec<u16> {
        let mut u: Vec<u16> = "a".encode_utf16().collect();
        u.extend([0xD83D, 0xDE00, 0x0000, 0xD83D, b'b' as u16, 0xDC00]);
        u.extend("\u{10FFFD}\\".encode_utf16());
        u
    }

    #[test]
    fn java_strings_round_trip_through_every_form() {
        let units = odd_units();
        let s = from_java_units(units.iter().copied());
        assert_eq!(java_units(&s).collect::<Vec<_>>(), units);
        assert!(s.starts_with("a\u{1F600}\u{0}"));
        assert_eq!(marker_unit(s.chars().nth(3).unwrap()), Some(0xD83D));
        // Modified UTF-8, as the JVM writes it (Java's DataOutputStream.writeUTF).
        let mutf8 = to_modified_utf8(&s);
        assert_eq!(&mutf8[..10], b"a\xED\xA0\xBD\xED\xB8\x80\xC0\x80\xED");
        assert_eq!(decode_modified_utf8(&mutf8), s);
        // Escaped for a snapshot, and back.
        let written = escape(&s);
        assert_eq!(
            written, "a\u{1F600}\\u0000\\uD83Db\\uDC00\\uDBFF\\uDFFD\\\\",
            "the emoji as itself; NUL, surrogates alone and the markers' range escaped"
        );
        assert_eq!(unescape(&written), s);
        assert_eq!(
            shown(&s),
            "a\u{1F600}\\u0000\\uD83Db\\uDC00\\uDBFF\\uDFFD\\"
        );
    }

    #[test]
    fn decoding_is_lenient_and_ascii_is_borrowed_through() {
        assert_eq!(
            decode_modified_utf8(b"java/lang/String"),
            "java/lang/String"
        );
        assert_eq!(decode_modified_utf8("caf\u{e9}".as_bytes()), "caf\u{e9}");
        // Standard UTF-8's four bytes (never from the JVM) as the character.
        assert_eq!(decode_modified_utf8("\u{1F600}".as_bytes()), "\u{1F600}");
        // A stray continuation byte, a truncated sequence.
        assert_eq!(
            decode_modified_utf8(b"a\x80b\xE2\x82"),
            "a\u{FFFD}b\u{FFFD}\u{FFFD}"
        );
        assert!(matches!(escape("main"), Cow::Borrowed("main")));
        assert!(matches!(unescape("main"), Cow::Borrowed("main")));
    }

    #[test]
    fn unescape_keeps_what_is_not_an_escape() {
        assert_eq!(unescape("odd\\u0001one"), "odd\u{1}one");
        assert_eq!(unescape("back\\\\slash"), "back\\slash");
        assert_eq!(unescape("a\\x\\u12"), "a\\x\\u12");
        assert_eq!(unescape("\\uD83D\\uDE00"), "\u{1F600}");
        assert_eq!(
            unescape("\\uDE00\\uD83D"),
            format!("{}{}", marker(0xDE00), marker(0xD83D))
        );
        // What a command line passes as it is.
        assert_eq!(unescape("C:\\temp"), "C:\\temp");
        // A raw character of the markers' range is that character (held as
        // its two surrogates' markers), as its escapes would be.
        let raw = unescape("\u{10F83D}");
        assert_eq!(raw, unescape("\\uDBFE\\uDC3D"));
        assert_eq!(java_units(&raw).collect::<Vec<_>>(), [0xDBFE, 0xDC3D]);
    }
}
