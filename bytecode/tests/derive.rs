//! Counter plans (`plan_counters`) on javac's code for known shapes: which
//! line entry points keep a counter, and how the others' counts are made.
//! The counts themselves are checked on real JVMs (tests/coverage.rs).

mod javac;

use profrj_bytecode::code::decode_code;
use profrj_bytecode::edit::{line_probes_in, plan_counters, plan_coverage, CounterPlan};
use profrj_bytecode::parse_class;

const SOURCE: &str = r#"
class Shapes {
    static int forLoop(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            s += i;
        }
        return s;
    }

    static int arraySum(int[] a) {
        int s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i];
        }
        return s;
    }

    static int straight(int x) {
        int y = x + 1;
        y = y * 3;
        return y;
    }

    static int call(String s) {
        int n = s.length();
        n++;
        return n;
    }

    static int forEach(java.util.List<Integer> list) {
        int s = 0;
        for (int v : list) {
            s += v;
        }
        return s;
    }

    static int fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    Shapes(int[] a) {
        int n = a.length;
        n++;
    }
}
"#;

/// Shapes.class, compiled once for all tests.
fn class_bytes() -> &'static [u8] {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| javac::compile("Shapes", SOURCE, &["-g"]))
}

/// (lines, plan) of each method, by name.
fn plans() -> Vec<(String, Vec<u16>, CounterPlan)> {
    let class = parse_class(class_bytes()).unwrap();
    let cp = &class.constant_pool;
    let mut out = Vec::new();
    for (i, m) in class.methods.iter().enumerate() {
        let name = cp.text(m.name_index).unwrap();
        let code = decode_code(&class.method_code(i).unwrap().data).unwrap();
        let lines = line_probes_in(&code, cp);
        let points: Vec<u32> = lines.points.iter().map(|p| p.0).collect();
        let ctor = name == "<init>";
        let plan = plan_counters(&code, cp, &points, !lines.first_counts_calls, ctor, true);
        let each = plan_counters(&code, cp, &points, !lines.first_counts_calls, ctor, false);
        assert_eq!(
            each.counters, points,
            "{name}: derive off counts every point"
        );
        assert!(each.exceptions.is_none());
        // Branch outcomes come from the same counters: none of these shapes
        // needs one more (a conditional: its two sides, or its arrivals and
        // one side, where a line's count already needed them).
        let both = plan_coverage(
            &code,
            cp,
            &points,
            !lines.first_counts_calls,
            ctor,
            true,
            true,
        );
        assert_eq!(
            both.counters.len() + both.after.len(),
            plan.counters.len(),
            "{name}: {both:?}"
        );
        out.push((name, lines.points.iter().map(|p| p.1).collect(), plan));
    }
    out
}

fn plan_of(name: &str) -> (Vec<u16>, CounterPlan) {
    let (_, lines, plan) = plans().into_iter().find(|p| p.0 == name).unwrap();
    (lines, plan)
}

#[test]
fn a_loop_keeps_one_counter_per_iteration() {
    // Points: s = 0 (the calls), for's init, body, for's step, return.
    let (lines, plan) = plan_of("forLoop");
    assert_eq!(lines.len(), 5);
    assert_eq!(plan.counters.len(), 2, "{plan:?}");
    // The init follows from the first line; the step from the body, through
    // code that cannot throw; the return from the loop's exits, which are
    // its entries (its header test, a merge with no line, is the entries
    // plus the body's; the exit is the header less the body).
    assert_eq!(plan.counts[0], vec![(1, 1)]);
    assert_eq!(plan.counts[1], vec![(1, 1)]);
    assert_eq!(plan.counts[2], vec![(2, 1)]);
    assert_eq!(plan.counts[3], vec![(2, 1)]);
    assert_eq!(plan.counts[4], vec![(1, 1)]);
    assert!(plan.exceptions.is_none());
    assert_eq!(plan.slots, 3);
}

#[test]
fn a_stretch_that_may_throw_subtracts_its_exceptions() {
    let (_, plan) = plan_of("arraySum");
    assert_eq!(plan.counters.len(), 2, "{plan:?}");
    // The step = the body less the exceptions its array load threw.
    let body = plan.counts[2].clone();
    assert_eq!(body, vec![(2, 1)]);
    assert_eq!(plan.counts[3], vec![(2, 1), (3, -1)]);
    // The return = the calls less the exceptions thrown in the loop: the
    // body's (slot 3) and the header test's `a.length` (slot 4).
    assert_eq!(plan.counts[4], vec![(1, 1), (3, -1), (4, -1)]);
    let exc = plan.exceptions.as_ref().expect("an exception counter");
    // Slots 3 and 4 count those exceptions, slot 5 all others.
    assert_eq!(plan.slots, 6);
    assert_eq!(exc.entry, 5);
    assert!(exc.sets.contains(&(plan.counters[1], 3)), "{exc:?}");
    assert!(exc.handlers.is_empty());
}

#[test]
fn straight_code_needs_only_the_call_count() {
    let (lines, plan) = plan_of("straight");
    assert_eq!(lines.len(), 3);
    assert_eq!(plan.counters.len(), 1);
    assert!(plan.counts.iter().all(|c| *c == vec![(1, 1)]), "{plan:?}");
}

#[test]
fn calls_and_constructors_keep_their_counters() {
    // A call may throw or never return: the line after it counts itself.
    let (_, plan) = plan_of("call");
    assert_eq!(plan.counters.len(), 2, "{plan:?}");
    assert_eq!(plan.counts[2], plan.counts[1]);
    // A constructor's catch-all cannot cover its super() call: no stretch
    // that may throw is used there.
    let (lines, plan) = plan_of("<init>");
    assert_eq!(plan.counters.len(), lines.len() - 1, "{plan:?}");
    assert!(plan.exceptions.is_none());
}

#[test]
fn a_one_line_method_counts_its_calls_on_its_branch_sides() {
    // One line, whose count is the calls: a counter on each side of the
    // test instead of one on every call.
    let (lines, plan) = plan_of("fib");
    assert_eq!(lines.len(), 1);
    assert_eq!(plan.counters.len(), 2, "{plan:?}");
    assert_eq!(plan.counts[0], vec![(1, 1), (2, 1)]);
    assert_eq!(plan.slots, 3);
}
