//! The instructions JaCoCo's matcher filters ignore (`IFilterOutput.ignore`
//! in its `org.jacoco.core.internal.analysis.filter` package, 0.8.6):
//!
//! - `string switch` (StringSwitchJavacFilter): javac's `switch` on a
//!   `String` is a switch on `hashCode()` whose cases test `equals` and set
//!   an index, then a second switch on the index; JaCoCo drops the first
//!   switch and the tests, and keeps the second (one outcome per case).
//! - `try-with-resources` (TryWithResourcesJavac11Filter): the `close()`
//!   javac 11+ writes after the body (with its null test) and the whole
//!   handler that closes the resource on a throw and adds what that threw as
//!   suppressed.
//! - `synchronized` (SynchronizedFilter): the catch-all handler javac and
//!   ecj write for a `synchronized` block, which exits the monitor and
//!   throws again.
//!
//! Matched the way JaCoCo's matchers match (AbstractMatcher: loads and
//! stores by local, `ldc` in any width, `goto_w` as `goto`), over the
//! instructions alone: a label or line entry between two instructions never
//! stops a match here, where in ASM's tree it could in code javac does not
//! write.

use profrj_bytecode::code::{Code, Insn, Label};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::ConstantPool;

const STRING: &str = "java/lang/String";
const THROWABLE: &str = "java/lang/Throwable";

/// Per instruction of `code`, whether JaCoCo's filters ignore it; empty
/// when none does.
pub(super) fn ignored(code: &Code<'_>, cp: &ConstantPool<'_>) -> Vec<bool> {
    let mut out = Vec::new();
    let mut ignore = |from: usize, to: usize| {
        if out.is_empty() {
            out = vec![false; code.insns.len()];
        }
        let to = to.min(out.len().saturating_sub(1));
        if let Some(range) = out.get_mut(from..=to) {
            range.fill(true);
        }
    };
    for (i, insn) in code.insns.iter().enumerate() {
        let default = match insn {
            Insn::TableSwitch(s) => s.default,
            Insn::LookupSwitch(s) => s.default,
            _ => continue,
        };
        if let Some(second) = string_switch(code, cp, i, default) {
            ignore(i, second - 1);
        }
    }
    for h in &code.handlers {
        let start = code.labels[h.handler.0 as usize] as usize;
        // (javac's second entry, covering the handler itself, starts there.)
        if h.catch_type == 0 && code.labels[h.start.0 as usize] as usize != start {
            if let Some(end) = synchronized(code, cp, start) {
                ignore(start, end);
            }
        }
        if h.catch_type == 0 || cp.class_name(h.catch_type).as_deref() != Some(THROWABLE) {
            continue;
        }
        for null_test in [true, false] {
            if let Some((close, handler)) = try_with_resources(code, cp, start, null_test) {
                ignore(close.0, close.1);
                ignore(handler.0, handler.1);
            }
        }
    }
    out
}

/// The switch at `at` on a `String`'s `hashCode()` whose default leads to
/// the second switch: where that label stands (the first instruction
/// JaCoCo keeps).
fn string_switch(
    code: &Code<'_>,
    cp: &ConstantPool<'_>,
    at: usize,
    default: Label,
) -> Option<usize> {
    let second = code.labels[default.0 as usize] as usize;
    let mut m = Matcher::before(code, cp, at.checked_sub(4)?);
    m.next_is(ICONST_M1);
    m.next_is_var(ISTORE, "c");
    m.next_is_var(ALOAD, "s");
    m.next_is_invoke(INVOKEVIRTUAL, STRING, "hashCode", "()I");
    m.next();
    loop {
        m.next_is_var(ALOAD, "s");
        m.next_is(LDC);
        m.next_is_invoke(INVOKEVIRTUAL, STRING, "equals", "(Ljava/lang/Object;)Z");
        // To the next test, or to the second switch.
        m.next_is(IFEQ);
        // iconst, bipush or sipush.
        m.next();
        m.next_is_var(ISTORE, "c");
        if m.at? + 1 == second {
            break;
        }
        m.next_is(GOTO);
        if m.target()? != second {
            return None;
        }
    }
    m.next_is_var(ILOAD, "c");
    m.next();
    matches!(m.op()?, TABLESWITCH | LOOKUPSWITCH).then_some(second)
}

/// The handler at `start` of javac 11+'s try-with-resources (with the
/// resource's null test or without, as `null_test` says): the instructions
/// of the `close()` after the body (and its `goto`), and the handler's.
#[allow(clippy::type_complexity)]
fn try_with_resources(
    code: &Code<'_>,
    cp: &ConstantPool<'_>,
    start: usize,
    null_test: bool,
) -> Option<((usize, usize), (usize, usize))> {
    let mut m = Matcher::before(code, cp, start);
    m.null_test = null_test;
    m.next_is_var(ASTORE, "primaryExc");
    m.next_is_javac_close();
    m.next_is(GOTO);
    m.next_is_var(ASTORE, "t");
    m.next_is_var(ALOAD, "primaryExc");
    m.next_is_var(ALOAD, "t");
    m.next_is_invoke(
        INVOKEVIRTUAL,
        THROWABLE,
        "addSuppressed",
        "(Ljava/lang/Throwable;)V",
    );
    m.next_is_var(ALOAD, "primaryExc");
    m.next_is(ATHROW);
    let end = m.at?;
    // The body's own close: the nearest before the handler.
    let mut from = start;
    loop {
        m.restart(from);
        m.next_is_javac_close();
        if m.at.is_some() {
            break;
        }
        from = from.checked_sub(1)?;
    }
    let close = m.at?;
    m.next();
    if m.op() != Some(GOTO) {
        m.at = Some(close);
    }
    Some(((from, m.at?), (start, end)))
}

/// The catch-all handler at `start` of a `synchronized` block: javac's
/// `astore t; aload; monitorexit; aload t; athrow`, or ecj's `aload;
/// monitorexit; athrow`. Its last instruction.
fn synchronized(code: &Code<'_>, cp: &ConstantPool<'_>, start: usize) -> Option<usize> {
    let mut m = Matcher::before(code, cp, start);
    m.next_is(ALOAD);
    m.next_is(MONITOREXIT);
    m.next_is(ATHROW);
    if m.at.is_some() {
        return m.at;
    }
    let mut m = Matcher::before(code, cp, start);
    m.next_is_var(ASTORE, "t");
    m.next_is(ALOAD);
    m.next_is(MONITOREXIT);
    m.next_is_var(ALOAD, "t");
    m.next_is(ATHROW);
    m.at
}

/// A cursor over the instructions, as JaCoCo's AbstractMatcher walks ASM's:
/// each step that does not find what it expects ends the match (`at`
/// becomes `None`), and locals are bound by name on first sight.
struct Matcher<'c, 'p> {
    code: &'c Code<'c>,
    cp: &'c ConstantPool<'p>,
    /// The instruction matched last (`Some(k)`), `None` once the match
    /// failed (or before the first step).
    at: Option<usize>,
    /// Where the first step goes, until it is taken.
    fresh: Option<usize>,
    vars: Vec<(&'static str, u16)>,
    /// try-with-resources: the close is guarded by a null test.
    null_test: bool,
    /// try-with-resources: the class whose `close()` every close calls.
    close_owner: Option<String>,
}

impl<'c, 'p> Matcher<'c, 'p> {
    /// A matcher whose first step goes to instruction `first`.
    fn before(code: &'c Code<'c>, cp: &'c ConstantPool<'p>, first: usize) -> Self {
        Matcher {
            code,
            cp,
            at: None,
            fresh: Some(first),
            vars: Vec::new(),
            null_test: false,
            close_owner: None,
        }
    }

    /// Starts over (locals kept bound): the next step goes to `first`.
    fn restart(&mut self, first: usize) {
        self.fresh = Some(first);
    }

    fn next(&mut self) {
        let next = match self.fresh.take() {
            Some(first) => Some(first),
            None => self.at.map(|k| k + 1),
        };
        self.at = next.filter(|&k| k < self.code.insns.len());
    }

    fn insn(&self) -> Option<&'c Insn> {
        self.code.insns.get(self.at?)
    }

    /// The current instruction's opcode as ASM names it ([`asm_op`]).
    fn op(&self) -> Option<u8> {
        asm_op(self.insn()?)
    }

    /// The local a load or store names.
    fn var(&self) -> Option<u16> {
        local(self.insn()?)
    }

    /// Where the current jump goes (its target's instruction index).
    fn target(&self) -> Option<usize> {
        let Insn::Branch { target, .. } = self.insn()? else {
            return None;
        };
        Some(self.code.labels[target.0 as usize] as usize)
    }

    fn next_is(&mut self, op: u8) {
        self.next();
        if self.op() != Some(op) {
            self.at = None;
        }
    }

    fn next_is_var(&mut self, op: u8, name: &'static str) {
        self.next_is(op);
        let Some(var) = self.var() else {
            self.at = None;
            return;
        };
        match self.vars.iter().find(|v| v.0 == name) {
            Some(&(_, bound)) if bound != var => self.at = None,
            Some(_) => {}
            None => self.vars.push((name, var)),
        }
    }

    /// The class, name and descriptor of the current call.
    fn member(&self) -> Option<(String, &'p [u8], &'p [u8])> {
        let Insn::Plain { operands, .. } = self.insn()? else {
            return None;
        };
        let b = operands.as_slice();
        let index = u16::from_be_bytes([*b.first()?, *b.get(1)?]);
        let owner = self.cp.class_name(self.cp.member_class(index)?)?;
        let (name, descriptor) = self.cp.member_name_and_descriptor(index)?;
        Some((owner, name, descriptor))
    }

    fn next_is_invoke(&mut self, op: u8, owner: &str, name: &str, descriptor: &str) {
        self.next_is(op);
        let same = self.member().is_some_and(|(o, n, d)| {
            o == owner && n == name.as_bytes() && d == descriptor.as_bytes()
        });
        if !same {
            self.at = None;
        }
    }

    /// `[aload r; ifnull]` `aload r; invoke… close()V`, every close on one
    /// class.
    fn next_is_javac_close(&mut self) {
        if self.null_test {
            self.next_is_var(ALOAD, "r");
            self.next_is(IFNULL);
        }
        self.next_is_var(ALOAD, "r");
        self.next();
        if !matches!(self.op(), Some(INVOKEINTERFACE | INVOKEVIRTUAL)) {
            self.at = None;
            return;
        }
        let Some((owner, name, descriptor)) = self.member() else {
            self.at = None;
            return;
        };
        if name != b"close" || descriptor != b"()V" {
            self.at = None;
            return;
        }
        match &self.close_owner {
            None => self.close_owner = Some(owner),
            Some(o) if *o != owner => self.at = None,
            Some(_) => {}
        }
    }
}

/// An instruction's opcode as ASM names it: a load's or store's long form,
/// `ldc` for every width, `goto` for `goto_w`, the widened opcode of a
/// `wide`.
pub(super) fn asm_op(insn: &Insn) -> Option<u8> {
    Some(match insn {
        Insn::Plain { op: WIDE, operands } => *operands.as_slice().first()?,
        Insn::Plain { op, .. } => match *op {
            ILOAD_0..=0x2d => ILOAD + (op - ILOAD_0) / 4,
            ISTORE_0..=0x4e => ISTORE + (op - ISTORE_0) / 4,
            LDC_W | LDC2_W => LDC,
            op => op,
        },
        Insn::Branch { op: GOTO_W, .. } => GOTO,
        Insn::Branch { op, .. } => *op,
        Insn::TableSwitch(_) => TABLESWITCH,
        Insn::LookupSwitch(_) => LOOKUPSWITCH,
    })
}

/// The local a load or store names (any operand byte of another
/// instruction: callers ask loads and stores only).
pub(super) fn local(insn: &Insn) -> Option<u16> {
    let Insn::Plain { op, operands } = insn else {
        return None;
    };
    let b = operands.as_slice();
    Some(match *op {
        ILOAD_0..=0x2d => u16::from((op - ILOAD_0) % 4),
        ISTORE_0..=0x4e => u16::from((op - ISTORE_0) % 4),
        WIDE => u16::from_be_bytes([*b.get(1)?, *b.get(2)?]),
        _ => u16::from(*b.first()?),
    })
}
