//! Native frames' names (sampler thread): the function symbol that holds an
//! address, from an object's `.symtab` and `.dynsym`, demangled. C++ and
//! Rust names lose their parameters and return types, as async-profiler's
//! do by default (`JavaThread::run`, not `JavaThread::run()`): a frame
//! names its function; overloads are rare in the VM's hot code.

use super::elf::Symbol;

/// An object's function symbols, sorted by address.
pub struct Symbols(Box<[Symbol]>);

impl Symbols {
    pub fn new(mut symbols: Vec<Symbol>) -> Symbols {
        // Sorted by address; of several names at one address (aliases, the
        // same symbol in both tables) the first sized one is kept.
        symbols.sort_by(|a, b| a.addr.cmp(&b.addr).then(b.size.cmp(&a.size)));
        symbols.dedup_by_key(|s| s.addr);
        Symbols(symbols.into_boxed_slice())
    }

    /// The demangled name of the function holding `addr` (an address in the
    /// object's file), if a symbol covers it.
    pub fn name(&self, addr: u64) -> Option<String> {
        let i = self.0.partition_point(|s| s.addr <= addr).checked_sub(1)?;
        let s = &self.0[i];
        // A symbol with no size reaches to the next one.
        let inside = addr < s.addr.saturating_add(s.size) || s.size == 0;
        inside.then(|| demangle(&s.name))
    }
}

/// `name` demangled: a Rust name (legacy or v0, without its hash), a C++
/// name without parameters, or as it is (C).
pub fn demangle(name: &str) -> String {
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    if name.starts_with("_Z") {
        let options = cpp_demangle::DemangleOptions::new()
            .no_params()
            .no_return_type();
        if let Some(d) = cpp_demangle::Symbol::new(name)
            .ok()
            .and_then(|s| s.demangle(&options).ok())
        {
            return d;
        }
    }
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpp_rust_and_c_names() {
        assert_eq!(
            demangle("_ZN19java_lang_Throwable19fill_in_stack_traceE6HandleRK12methodHandleP10JavaThread"),
            "java_lang_Throwable::fill_in_stack_trace"
        );
        assert_eq!(demangle("_ZN10JavaThread3runEv"), "JavaThread::run");
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE"),
            "core::fmt::write"
        );
        assert_eq!(demangle("profrj_spin"), "profrj_spin");
        assert_eq!(demangle("_Znot a name"), "_Znot a name");
    }

    #[test]
    fn an_address_gets_the_symbol_that_covers_it() {
        let s = |addr, size, name: &str| Symbol {
            addr,
            size,
            name: name.to_owned(),
        };
        let syms = Symbols::new(vec![
            s(0x200, 0x10, "b"),
            s(0x100, 0x20, "a"),
            s(0x100, 0, "a_alias"),
            s(0x300, 0, "c"),
        ]);
        assert_eq!(syms.name(0xff), None);
        assert_eq!(syms.name(0x100).as_deref(), Some("a"));
        assert_eq!(syms.name(0x11f).as_deref(), Some("a"));
        assert_eq!(syms.name(0x120), None);
        assert_eq!(syms.name(0x20f).as_deref(), Some("b"));
        assert_eq!(syms.name(0x350).as_deref(), Some("c"));
    }
}
