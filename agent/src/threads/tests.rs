//! The folding rule as threads end (docs/THREADS.md).

use super::*;

#[test]
fn past_the_first_n_of_a_pattern_ended_threads_fold_into_its_group() {
    let t = Threads::default();
    t.set_fold_rule(Some(2));
    let ids: Vec<ThreadId> = ["job-1", "job-2", "solo", "job-3", "job-44"]
        .iter()
        .enumerate()
        .map(|(i, n)| t.run_and_end(n, 10 * i as u64, 10 * i as u64 + 5))
        .collect();
    let r = t.records();
    assert_eq!(r.len(), 6, "one group, made when job-3 ended");
    let g = &r[4];
    assert_eq!((g.name.as_str(), g.ended_threads), ("job-#", 2));
    assert_eq!((g.start_ns, g.end_ns, g.lived_ns), (30, Some(45), 10));
    assert!(g.is_ended_group() && !g.is_alive() && !g.is_group());
    let into: Vec<_> = ids.iter().map(|&i| r[i.0 as usize].folded_into).collect();
    let group = Some(ThreadId(4));
    assert_eq!(into, vec![None, None, None, group, group]);
    assert_eq!(t.folds(), 2);
}

#[test]
fn keep_folds_nothing_and_fold_folds_all() {
    let keep = Threads::default();
    keep.set_fold_rule(None);
    for i in 0..40 {
        keep.run_and_end(&format!("w-{i}"), 0, 1);
    }
    assert_eq!(keep.records().len(), 40);
    assert_eq!(keep.folds(), 0);
    let fold = Threads::default();
    fold.set_fold_rule(Some(0));
    fold.run_and_end("w-1", 0, 1);
    assert_eq!(fold.folded_into(ThreadId(0)), Some(ThreadId(1)));
}

#[test]
fn groups_and_patterns_stay_bounded() {
    let t = Threads::default();
    t.set_fold_rule(Some(1));
    // Each pattern twice: the first kept, the second folded.
    for i in 0..MAX_GROUPS + 2 {
        let name = format!("t{}x", "a".repeat(i));
        t.run_and_end(&name, 0, 1);
        t.run_and_end(&name, 0, 1);
    }
    let r = t.records();
    let groups: Vec<&ThreadRecord> = r
        .iter()
        .map(|r| &**r)
        .filter(|r| r.is_ended_group())
        .collect();
    assert_eq!(groups.len(), MAX_GROUPS + 1);
    let overflow = groups.iter().find(|g| g.name == ENDED_GROUP).unwrap();
    assert_eq!(overflow.ended_threads, 2, "the two patterns past the cap");
    // Past MAX_PATTERNS names, a new name folds at once.
    let t = Threads::default();
    t.set_fold_rule(Some(16));
    for i in 0..MAX_PATTERNS {
        t.run_and_end(
            &format!("p{}q", "b".repeat(i % 64) + &"c".repeat(i / 64)),
            0,
            1,
        );
    }
    assert_eq!(t.folds(), 0, "every first thread of a pattern kept");
    let late = t.run_and_end("late", 0, 1);
    let g = t.folded_into(late).expect("folded at once");
    assert_eq!(t.records()[g.0 as usize].name, ENDED_GROUP);
}

/// The JVM's threads: one record per live thread whatever the sessions
/// that find it; an ended one folds by the rule, its group keeping its kind.
#[test]
fn a_jvm_thread_is_registered_once_while_alive_and_its_group_keeps_its_kind() {
    let t = Threads::default();
    t.set_fold_rule(Some(0));
    let a = t.register_jvm("C2 CompilerThre".into(), JvmKind::Compiler, 101);
    assert_eq!(
        t.register_jvm("C2 CompilerThre".into(), JvmKind::Compiler, 101),
        a
    );
    let b = t.register_jvm("C2 CompilerThre".into(), JvmKind::Compiler, 102);
    assert_ne!(a, b);
    t.jvm_ended(a);
    let r = t.records();
    let g = r[a.0 as usize].folded_into.expect("folded with ended=0");
    assert_eq!(r[g.0 as usize].jvm, Some(JvmKind::Compiler));
    assert_eq!(r[g.0 as usize].ended_threads, 1);
    // A new thread with the tid of an ended one is a new record.
    assert_ne!(t.register_jvm("GC Thread#0".into(), JvmKind::Gc, 101), a);
    // Ending a Java thread's record this way does nothing.
    let java = t.run_and_end("main", 0, 5);
    t.jvm_ended(java);
    assert_eq!(t.records()[java.0 as usize].jvm, None);
}

/// A folded thread's record gives way to its group's placeholder at once
/// (the table holds a pointer per ended thread, whatever their names were);
/// its CPU time at its end is kept 30 s, for the sampler.
#[test]
fn folded_records_give_way_to_their_groups_placeholder() {
    let t = Threads::default();
    t.set_fold_rule(Some(0));
    let s = 1_000_000_000;
    let a = t.run_and_end("req-1", 0, 5 * s);
    let b = t.run_and_end("req-2", 0, 20 * s);
    {
        let records = t.records.lock();
        let g = records[a.0 as usize].folded_into.unwrap();
        assert_eq!(records[g.0 as usize].ended_threads, 2);
        assert!(Arc::ptr_eq(&records[a.0 as usize], &records[b.0 as usize]));
        assert_eq!(records[a.0 as usize].name, "req-#");
        assert!(!records[a.0 as usize].is_alive());
    }
    assert_eq!(t.cpu_at_end(a), Some(0), "folded 15 s ago: kept");
    t.run_and_end("req-3", 0, 40 * s);
    assert_eq!(t.cpu_at_end(a), None, "folded 35 s ago: gone");
    assert_eq!(t.cpu_at_end(b), Some(0));
}
