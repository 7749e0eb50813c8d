//! Which classes the instrumenting modes rewrite: `include=`/`exclude=` globs
//! over Java class names (`com.acme.*`), else every class that is not the
//! JDK's own (defined by the boot or platform loader).

/// A class-name pattern: `*` matches any run of characters (dots too), `?`
/// one character; everything else matches itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob(String);

impl Glob {
    /// Checks the pattern's characters; the error says what is wrong.
    pub fn new(pattern: &str) -> Result<Self, super::OptionError> {
        if pattern.is_empty() {
            return Err(super::OptionError("an empty pattern".into()));
        }
        if let Some(c) = pattern
            .chars()
            .find(|&c| !(c.is_alphanumeric() || matches!(c, '.' | '$' | '_' | '*' | '?' | '-')))
        {
            return Err(super::OptionError(format!(
                "'{c}' cannot occur in a class name pattern (use * and ? as wildcards, e.g. com.acme.*)"
            )));
        }
        Ok(Self(pattern.to_owned()))
    }

    pub fn matches(&self, name: &str) -> bool {
        let (p, s) = (self.0.as_bytes(), name.as_bytes());
        // Iterative wildcard match with one backtrack point (the last `*`).
        let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
        while j < s.len() {
            if i < p.len() && (p[i] == b'?' || p[i] == s[j]) {
                i += 1;
                j += 1;
            } else if i < p.len() && p[i] == b'*' {
                star = Some(i);
                mark = j;
                i += 1;
            } else if let Some(st) = star {
                i = st + 1;
                mark += 1;
                j = mark;
            } else {
                return false;
            }
        }
        p[i..].iter().all(|&c| c == b'*')
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub include: Vec<Glob>,
    pub exclude: Vec<Glob>,
}

impl Scope {
    /// Is class `name` (Java form, `a.b.C$D`) in scope? `jdk`: defined by the
    /// boot or platform loader. With includes, exactly the classes matching
    /// one (JDK or not); without, every non-JDK class. Excludes win.
    pub fn contains(&self, name: &str, jdk: bool) -> bool {
        // Never: the probes themselves, and java.lang.Object (its constructor
        // runs for every allocation, and C2 crashes compiling it instrumented:
        // JDK 17, SIGSEGV in ciExceptionHandler::catch_klass).
        if name.starts_with("profrj.runtime.")
            || name == "java.lang.Object"
            || self.exclude.iter().any(|g| g.matches(name))
        {
            return false;
        }
        if self.include.is_empty() {
            !jdk
        } else {
            self.include.iter().any(|g| g.matches(name))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(p: &str) -> Glob {
        Glob::new(p).unwrap()
    }

    #[test]
    fn globs() {
        assert!(g("com.acme.*").matches("com.acme.Foo"));
        assert!(g("com.acme.*").matches("com.acme.sub.Bar$1"));
        assert!(!g("com.acme.*").matches("com.acmex.Foo"));
        assert!(g("*").matches("java.lang.String"));
        assert!(g("*Test").matches("a.FooTest"));
        assert!(!g("*Test").matches("a.FooTests"));
        assert!(g("a.?.C").matches("a.b.C"));
        assert!(g("*.*.C*").matches("x.y.Cz"));
        assert!(!g("exact.Name").matches("exact.Name2"));
        assert!(Glob::new("com/acme").is_err());
        assert!(Glob::new("").is_err());
    }

    #[test]
    fn default_scope_is_everything_but_the_jdk() {
        let s = Scope::default();
        assert!(s.contains("com.acme.Foo", false));
        assert!(!s.contains("java.util.HashMap", true));
        assert!(!s.contains("profrj.runtime.Probe", true));
    }

    #[test]
    fn includes_select_and_excludes_win() {
        let s = Scope {
            include: vec![g("java.util.*"), g("com.acme.*")],
            exclude: vec![g("com.acme.gen.*")],
        };
        assert!(s.contains("java.util.ArrayList", true));
        assert!(s.contains("com.acme.Foo", false));
        assert!(!s.contains("com.acme.gen.X", false));
        assert!(!s.contains("org.other.Y", false));
        let all = Scope {
            include: vec![g("*")],
            exclude: vec![],
        };
        assert!(!all.contains("profrj.runtime.Probe", true));
        assert!(!all.contains("java.lang.Object", true));
    }
}
