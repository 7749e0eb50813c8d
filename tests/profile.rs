//! `profile` mode on real JVMs: exact call counts against a harness program
//! whose answer is known by construction (ProfileTruth), run with full
//! bytecode verification.

mod common;

use common::*;
use roxmltree::Node;

const H: &str = "profrj.harness.ProfileTruth";

/// The single child of `n` named `name`.
fn child<'a, 'i>(n: Node<'a, 'i>, name: &str) -> Node<'a, 'i> {
    let found: Vec<_> = n
        .children()
        .filter(|c| c.has_tag_name("profile") && c.attribute("name") == Some(name))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{name} under {:?}: {} nodes",
        n.attribute("name"),
        found.len()
    );
    found[0]
}

fn count(n: Node) -> u64 {
    attr_u64(n, "count")
}

/// Calls in a subtree: the node and every descendant named like it.
fn calls_named(n: Node, name: &str) -> u64 {
    n.descendants()
        .filter(|d| d.has_tag_name("profile") && d.attribute("name") == Some(name))
        .map(count)
        .sum()
}

/// Every node: the figures are consistent with each other.
fn check_consistency(thread: Node) {
    for n in thread.descendants().filter(|d| d.has_tag_name("profile")) {
        let kids: Vec<_> = n.children().filter(|c| c.has_tag_name("profile")).collect();
        let name = n.attribute("name").unwrap();
        assert!(n.attribute("signature").is_some_and(|s| s.starts_with('(')));
        for (cum, own) in [
            ("cumulatedElapsed", "methodElapsed"),
            ("cumulated", "method"),
            ("overheadCumulated", "overheadMethod"),
        ] {
            assert!(
                attr_u64(n, cum) >= attr_u64(n, own),
                "{name}: {cum} < {own}"
            );
        }
        // Rounding to µs per node: allow one per child.
        let slack = kids.len() as u64 + 1;
        let kids_elapsed = sum_attr(&kids, "cumulatedElapsed");
        assert!(
            attr_u64(n, "methodElapsed") + kids_elapsed <= attr_u64(n, "cumulatedElapsed") + slack,
            "{name}: self + children exceed the total"
        );
        assert!(attr_u64(n, "exceptions") <= count(n), "{name}");
    }
}

#[test]
fn ground_truth_counts_under_full_verification() {
    let dir = temp_dir("profile-truth");
    let snap = dir.join("p.xml");
    let run = run_java_with(
        &dir,
        &["-Xverify:all"],
        &format!("profile,file={}", snap.display()),
        H,
        &[],
    );
    run.assert_success();
    assert!(!run.stderr.contains("uninstrumented"), "{}", run.stderr);
    let xml = read_snapshot(&snap);
    let doc = roxmltree::Document::parse(&xml).unwrap();

    for t in ["truth-1", "truth-2"] {
        let threads = threads(&doc, "profile", t);
        assert_eq!(threads.len(), 1, "thread {t}");
        let thread = threads[0];
        assert_eq!(thread.attribute("isAlive"), Some("false"));
        assert!(attr_u64(thread, "cpuTime") > 0);
        check_consistency(thread);
        // The thread's only root is work() (a method reference: no lambda body).
        let roots: Vec<_> = thread.children().filter(|c| c.is_element()).collect();
        assert_eq!(roots.len(), 1, "{t}: roots");
        let work = child(thread, &format!("{H}.work()"));
        assert_eq!(count(work), 1);
        // Exactly these callees: a throw that unbalanced the shadow stack would
        // hang later calls under thrower() or catcher().
        let mut names: Vec<_> = work
            .children()
            .filter(|c| c.is_element())
            .map(|c| c.attribute("name").unwrap().to_owned())
            .collect();
        names.sort();
        let mut want: Vec<String> = [
            "catcher()",
            "constructors()",
            "deep(int)",
            "fib(int)",
            "lambdas()",
            "locked()",
            "loops()",
        ]
        .iter()
        .map(|m| format!("{H}.{m}"))
        .collect();
        want.sort();
        assert_eq!(names, want, "{t}: callees of work()");

        // Nested loops: 7 outer calls, 7 * 13 inner calls.
        let outer = child(
            child(work, &format!("{H}.loops()")),
            &format!("{H}.outer(int)"),
        );
        assert_eq!(count(outer), 7);
        assert_eq!(count(child(outer, &format!("{H}.inner(int,int)"))), 91);

        // Naive fib(15): 2 * fib(16) - 1 = 1973 calls, one node per depth.
        let fib = child(work, &format!("{H}.fib(int)"));
        assert_eq!(count(fib), 1);
        assert_eq!(calls_named(fib, &format!("{H}.fib(int)")), 1973);
        assert_eq!(fib.descendants().filter(|d| d.is_element()).count(), 15);

        // A callee throwing to its caller: 10 calls, 10 exceptions, and the
        // caller's own exit is normal.
        let catcher = child(work, &format!("{H}.catcher()"));
        assert_eq!(attr_u64(catcher, "exceptions"), 0);
        let thrower = child(catcher, &format!("{H}.thrower(int)"));
        assert_eq!((count(thrower), attr_u64(thrower, "exceptions")), (10, 10));

        // A constructor that throws for 0, 3, 6, …, 18: 7 of 20.
        let picky = child(
            child(work, &format!("{H}.constructors()")),
            &format!("{H}$Picky(int)"),
        );
        assert_eq!(picky.attribute("signature"), Some("(I)V"));
        assert_eq!((count(picky), attr_u64(picky, "exceptions")), (20, 7));

        // Recursion 3,000 deep: a chain of 3,001 nodes, one call each.
        let deep = child(work, &format!("{H}.deep(int)"));
        let chain: Vec<_> = deep.descendants().filter(|d| d.is_element()).collect();
        assert_eq!(chain.len(), 3001);
        assert!(chain.iter().all(|n| count(*n) == 1));

        // Synchronized method and a lambda body.
        assert_eq!(count(child(work, &format!("{H}.locked()"))), 4);
        let lambda = child(
            child(work, &format!("{H}.lambdas()")),
            &format!("{H}.lambda$lambdas$0(int)"),
        );
        assert_eq!(count(lambda), 5);
    }

    // The static initialiser, run once by main: fib(5) inside it is 15 calls.
    let main = threads(&doc, "profile", "main");
    assert_eq!(main.len(), 1);
    let m = child(main[0], &format!("{H}.main(java.lang.String[])"));
    let clinit = child(m, &format!("{H}$Lazy.<clinit>()"));
    assert_eq!(count(clinit), 1);
    assert_eq!(calls_named(clinit, &format!("{H}.fib(int)")), 15);

    // Sleeping: elapsed at least the 300 ms slept; CPU time near zero (the
    // probes' CPU clock is exact to 1 ms; 50 ms is a generous bound).
    let sleeper = threads(&doc, "profile", "sleeper");
    assert_eq!(sleeper.len(), 1);
    let nap = find_nodes(sleeper[0], &format!("{H}.nap()"));
    assert_eq!(nap.len(), 1);
    assert!(
        attr_u64(nap[0], "cumulatedElapsed") >= 299_000,
        "nap elapsed"
    );
    assert!(attr_u64(nap[0], "cumulated") < 50_000, "nap CPU");
}

#[test]
fn jdk_classes_only_when_included() {
    let dir = temp_dir("profile-scope");
    let run_with_scope = |opts: &str| {
        let snap = dir.join(format!("s{}.xml", opts.len()));
        let run = run_java_with(
            &dir,
            &["-Xverify:all"],
            &format!("profile,{opts}file={}", snap.display()),
            H,
            &[],
        );
        run.assert_success();
        read_snapshot(&snap)
    };
    let default = run_with_scope("");
    assert!(default.contains(&format!("{H}.work()")));
    assert!(!default.contains("java.lang.Thread.run()"));
    // include=* takes the JDK too: Thread.run() is the root of the workers.
    let all = run_with_scope("include=*,");
    let doc = roxmltree::Document::parse(&all).unwrap();
    let t = threads(&doc, "profile", "truth-1");
    assert_eq!(t.len(), 1);
    assert!(!find_nodes(t[0], "java.lang.Thread.run()").is_empty());
    assert_eq!(
        calls_named(t[0], &format!("{H}.fib(int)")),
        1973,
        "counts stay exact with the JDK instrumented"
    );
    // exclude wins: no harness class, so no harness frame.
    let some = run_with_scope(&format!("include={H}*,exclude={H}$Picky,"));
    assert!(some.contains(&format!("{H}.work()")));
    assert!(!some.contains("Picky"));
}

/// `timing=sampled`: the same tree and counts (and exceptions) as timing
/// every call; times only on some calls, never a self time above its total.
#[test]
fn sampled_timing_counts_every_call() {
    let dir = temp_dir("profile-sampled");
    let tree = |opts: &str, name: &str| {
        let snap = dir.join(name);
        let run = run_java_with(
            &dir,
            &["-Xverify:all"],
            &format!("profile,{opts}file={}", snap.display()),
            H,
            &[],
        );
        run.assert_success();
        let xml = read_snapshot(&snap);
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let mut paths = Vec::new();
        for t in ["truth-1", "truth-2", "main"] {
            for thread in threads(&doc, "profile", t) {
                for n in thread.descendants().filter(|d| d.has_tag_name("profile")) {
                    let path: Vec<_> = n
                        .ancestors()
                        .filter(|a| a.has_tag_name("profile"))
                        .filter_map(|a| a.attribute("name").map(str::to_owned))
                        .collect();
                    let e = attr_u64(n, "exceptions");
                    paths.push((t, path.join(" < "), count(n), e));
                    for (cum, own) in [
                        ("cumulatedElapsed", "methodElapsed"),
                        ("cumulated", "method"),
                    ] {
                        assert!(attr_u64(n, cum) >= attr_u64(n, own), "{cum} < {own}");
                    }
                }
            }
        }
        paths.sort();
        paths
    };
    let all = tree("", "all.xml");
    assert!(all.len() > 3000, "the 3,000-deep chain is in");
    assert_eq!(tree("timing=sampled,", "sampled.xml"), all);
}

/// Issue 29, item 6: a profile of a 50,000-deep recursion is written with
/// its indentation capped at 64 levels: a few MB where one space per level
/// made 2.5 GB, the same tree (every call nested in its caller), and
/// profrj's reader still reads it.
#[test]
fn a_fifty_thousand_deep_recursion_makes_a_small_snapshot() {
    use quick_xml::events::Event;
    let dir = temp_dir("deep-profile");
    let snap = dir.join("deep.xml");
    let run = run_java_with(
        &dir,
        &["-Xss512m"],
        &format!(
            "profile,include=profrj.harness.DeepStack,file={}",
            snap.display()
        ),
        "profrj.harness.DeepStack",
        &["50000", "1"],
    );
    run.assert_success();
    let size = std::fs::metadata(&snap).unwrap().len();
    assert!(size < 64 << 20, "a snapshot of {size} bytes");
    // The nesting, read as a stream: main, then recurse 50,001 times, each
    // inside the one before; no line starts with more than 64 spaces.
    let text = std::fs::read_to_string(&snap).unwrap();
    let indent = text.lines().map(|l| l.len() - l.trim_start().len()).max();
    assert_eq!(indent, Some(64));
    let mut reader = quick_xml::Reader::from_str(&text);
    let (mut depth, mut recurse, mut deepest) = (0usize, 0usize, 0usize);
    let mut open: Vec<bool> = Vec::new();
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) => {
                let name = e.try_get_attribute("name").unwrap();
                let is_recurse = name.is_some_and(|a| {
                    a.value.as_ref() == b"profrj.harness.DeepStack.recurse(int,long)"
                });
                depth += 1;
                recurse += usize::from(is_recurse);
                deepest = deepest.max(recurse);
                open.push(is_recurse);
            }
            Event::Empty(e) => {
                let name = e.try_get_attribute("name").unwrap();
                if name.is_some_and(|a| a.value.starts_with(b"profrj.harness.DeepStack.recurse")) {
                    deepest = deepest.max(recurse + 1);
                }
            }
            Event::End(_) => {
                depth -= 1;
                recurse -= usize::from(open.pop().unwrap());
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(depth, 0);
    assert_eq!(deepest, 50_001, "recurse(50000) down to recurse(0)");
    let report = profrj_ok(&["report", "--section", "profile", s(&snap)]);
    assert!(report.contains("DeepStack.recurse"), "{report}");
}

/// Issue 29, item 8: a class defined with a null name (`defineClass(null,
/// bytes, …)`, NamelessDefine) reaches the class file hook without one; its
/// name comes from its bytes, so the scope selects it and every
/// instrumenting mode shows it by that name: 3 calls of `work` (profile,
/// coverage, trace) and its 3 `long[8]` kept (memory and its sites).
#[test]
fn a_class_defined_without_a_name_is_instrumented_by_its_own() {
    const CLASS: &str = "profrj.harness.NamelessTarget";
    let dir = temp_dir("nameless");
    let trace = dir.join("t.xml");
    let opts = format!(
        "profile,coverage,memory,trace={},include={CLASS}",
        trace.display()
    );
    let (run, text) = run_verified("nameless", &opts, "profrj.harness.NamelessDefine", &[]);
    assert!(
        run.stdout
            .contains("defined profrj.harness.NamelessTarget, sum 4"),
        "{}",
        run.stdout
    );
    let doc = roxmltree::Document::parse(&text).unwrap();
    let main = threads(&doc, "profile", "main");
    assert_eq!(main.len(), 1, "main in <profile>");
    assert_eq!(calls_named(main[0], &format!("{CLASS}.work(int)")), 3);
    let class = doc
        .descendants()
        .find(|n| n.has_tag_name("class") && n.attribute("name") == Some(CLASS))
        .expect("the class in <coverage>");
    let work = class
        .children()
        .find(|m| m.attribute("name") == Some("work"))
        .expect("work in <coverage>");
    assert_eq!(attr_u64(work, "count"), 3);
    let kept: Vec<_> = threads(&doc, "memory", "main")
        .iter()
        .flat_map(|t| t.children())
        .filter(|m| m.attribute("class") == Some("long[]"))
        .collect();
    assert_eq!(sum_attr(&kept, "count"), 3, "memory: the long[8] kept");
    let site = format!("{CLASS}.work():");
    let sites: Vec<_> = threads(&doc, "sites", "main")
        .iter()
        .flat_map(|t| t.children())
        .filter(|n| n.attribute("name").is_some_and(|s| s.starts_with(&site)))
        .collect();
    assert_eq!(sum_attr(&sites, "cumulatedAllocated"), 3, "<sites>: {site}");
    let t = std::fs::read_to_string(&trace).expect("the trace");
    let t = roxmltree::Document::parse(&t).unwrap();
    let class_id = t
        .descendants()
        .find(|n| n.has_tag_name("classDef") && n.attribute("name") == Some(CLASS))
        .and_then(|n| n.attribute("classId"))
        .expect("classDef in the trace");
    let method_id = t
        .descendants()
        .find(|n| {
            n.has_tag_name("methodDef")
                && n.attribute("name") == Some("work")
                && n.attribute("classIdRef") == Some(class_id)
        })
        .and_then(|n| n.attribute("methodId"))
        .expect("methodDef of work");
    let entries = t
        .descendants()
        .filter(|n| n.has_tag_name("methodEntry") && n.attribute("methodIdRef") == Some(method_id))
        .count();
    assert_eq!(entries, 3);
}
