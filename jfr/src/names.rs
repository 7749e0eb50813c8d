//! Type names both ways: as the JVM writes them in a recording
//! (`java/lang/String`, `[B`) and as Java writes them (`java.lang.String`,
//! `byte[]`), which is how profrj's snapshots name classes.

/// A JVM type name (`java/lang/String`, `[B`, `[[Ljava/lang/Object;`) as
/// Java writes it.
pub fn java_type_name(internal: &str) -> String {
    let dims = internal.bytes().take_while(|&b| b == b'[').count();
    if dims == 0 {
        return internal.replace('/', ".");
    }
    let elem = &internal[dims..];
    let base = match elem {
        "B" => "byte".to_owned(),
        "C" => "char".to_owned(),
        "D" => "double".to_owned(),
        "F" => "float".to_owned(),
        "I" => "int".to_owned(),
        "J" => "long".to_owned(),
        "S" => "short".to_owned(),
        "Z" => "boolean".to_owned(),
        e => e
            .strip_prefix('L')
            .map(|e| e.strip_suffix(';').unwrap_or(e))
            .unwrap_or(e)
            .replace('/', "."),
    };
    format!("{base}{}", "[]".repeat(dims))
}

/// A type as Java writes it (`byte[]`, `java.lang.String[][]`) as the JVM
/// names it (`[B`, `[[Ljava/lang/String;`).
pub fn internal_type_name(java: &str) -> String {
    let base = java.trim_end_matches("[]");
    let dims = (java.len() - base.len()) / 2;
    if dims == 0 {
        return base.replace('.', "/");
    }
    let elem = match base {
        "byte" => "B".to_owned(),
        "char" => "C".to_owned(),
        "double" => "D".to_owned(),
        "float" => "F".to_owned(),
        "int" => "I".to_owned(),
        "long" => "J".to_owned(),
        "short" => "S".to_owned(),
        "boolean" => "Z".to_owned(),
        b => format!("L{};", b.replace('.', "/")),
    };
    format!("{}{elem}", "[".repeat(dims))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ways() {
        for (java, jvm) in [
            ("java.lang.String", "java/lang/String"),
            ("byte[]", "[B"),
            ("int[][]", "[[I"),
            ("java.lang.Object[][]", "[[Ljava/lang/Object;"),
            ("a.B$C", "a/B$C"),
        ] {
            assert_eq!(internal_type_name(java), jvm);
            assert_eq!(java_type_name(jvm), java);
        }
        assert_eq!(java_type_name("Foo$$Lambda/0x1234"), "Foo$$Lambda.0x1234");
        assert_eq!(java_type_name("["), "[]");
    }
}
