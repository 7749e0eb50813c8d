//! Each mode's options: what naming a mode turns on or off beside it, and
//! the values its options take (jfr, sampling's interval and lines,
//! profile's and coverage's scope and switches, lock, alloc, trace,
//! memory's tracker, stamps and census).

use super::{interval, parse};
use crate::registry::probes;
use std::time::Duration;

/// `jfr` alone samples; beside a mode it records that mode's events.
#[test]
fn jfr_records_beside_the_modes() {
    let o = parse("jfr").unwrap();
    assert_eq!(o.text("jfr"), Some("profrj-%p.jfr"));
    assert!(o.given("sampling"), "jfr alone samples");
    let o = parse("alloc,jfr=/tmp/r-%n.jfr").unwrap();
    assert_eq!(o.text("jfr"), Some("/tmp/r-%n.jfr"));
    assert!(!o.given("sampling"));
    assert!(parse("jfr=/tmp/%q.jfr").is_err());
}

#[test]
fn profile_with_scope() {
    let o = parse("profile,include=com.acme.*,include=java.util.*,exclude=com.acme.gen.*").unwrap();
    assert!(
        o.given("profile") && !o.given("sampling"),
        "naming profile turns sampling off"
    );
    assert_eq!(o.scope.include.len(), 2);
    assert_eq!(o.scope.exclude.len(), 1);
    assert!(o.scope.contains("java.util.HashMap", true));
    assert!(!o.scope.contains("com.acme.gen.A", false));
    let both = parse("sampling,profile").unwrap();
    assert!(both.given("sampling") && both.given("profile") && probes(&both).any_scoped());
    let e = parse("profile,include=com/acme").unwrap_err().0;
    assert!(e.contains("include") && e.contains("'/'"), "{e}");
    assert!(e.contains("valid options"), "{e}");
    let e = parse("dump,include=x.*").unwrap_err().0;
    assert!(e.contains("does not apply"), "{e}");
    assert!(parse("profile,profile").is_err());
    let c = parse("coverage,include=com.acme.*").unwrap();
    assert!(
        c.given("coverage")
            && !c.given("sampling")
            && !c.given("profile")
            && probes(&c).any_scoped()
    );
    assert!(probes(&c).derive_lines && !c.given("memory"));
    let m = parse("memory,profile").unwrap();
    assert!(
        m.given("memory") && m.given("profile") && !m.given("coverage") && !m.given("sampling")
    );
}

#[test]
fn interval_units() {
    assert_eq!(
        interval(&parse("interval=250us").unwrap()),
        Duration::from_micros(250)
    );
    assert_eq!(
        interval(&parse("interval=2s").unwrap()),
        Duration::from_secs(2)
    );
    for bad in [
        "interval=10",
        "interval=10min",
        "interval=ms",
        "interval=50us",
        "interval=11s",
        "interval=-1ms",
    ] {
        let e = parse(bad).unwrap_err().0;
        assert!(e.contains("interval"), "{bad}: {e}");
    }
}

#[test]
fn lock_takes_an_optional_shortest_wait() {
    assert_eq!(
        parse("lock").unwrap().duration("lock"),
        Some(Duration::ZERO)
    );
    assert_eq!(
        parse("lock=1ms").unwrap().duration("lock"),
        Some(Duration::from_millis(1))
    );
    assert_eq!(
        parse("lock=100us").unwrap().duration("lock"),
        Some(Duration::from_micros(100))
    );
    assert_eq!(
        parse("lock=250ns").unwrap().duration("lock"),
        Some(Duration::from_nanos(250))
    );
    assert_eq!(
        parse("lock=0").unwrap().duration("lock"),
        Some(Duration::ZERO)
    );
    assert_eq!(
        parse("lock=2s").unwrap().duration("lock"),
        Some(Duration::from_secs(2))
    );
    for bad in [
        "lock=",
        "lock=5",
        "lock=1min",
        "lock=ms",
        "lock=-1ms",
        "lock=3601s",
    ] {
        let e = parse(bad).unwrap_err().0;
        assert!(e.contains("lock"), "{bad}: {e}");
    }
    let o = parse("lock").unwrap();
    assert!(o.any_mode() && !o.given("sampling"), "lock alone is a mode");
    let o = parse("sampling,alloc,lock=10us").unwrap();
    assert!(o.given("sampling") && o.given("alloc"));
    assert_eq!(o.duration("lock"), Some(Duration::from_micros(10)));
    assert!(parse("lock,lock=1ms").unwrap_err().0.contains("twice"));
}

#[test]
fn alloc_takes_an_optional_size_and_live_needs_it() {
    assert_eq!(parse("alloc").unwrap().bytes("alloc"), Some(512 * 1024));
    assert_eq!(parse("alloc=64k").unwrap().bytes("alloc"), Some(64 * 1024));
    assert_eq!(parse("alloc=1M").unwrap().bytes("alloc"), Some(1 << 20));
    assert_eq!(parse("alloc=0").unwrap().bytes("alloc"), Some(0));
    assert_eq!(parse("alloc=1000").unwrap().bytes("alloc"), Some(1000));
    for bad_size in [
        "alloc=",
        "alloc=x",
        "alloc=-1",
        "alloc=2g",
        "alloc=1k5",
        "alloc=99999999999g",
    ] {
        let e = parse(bad_size).unwrap_err().0;
        assert!(e.contains("alloc"), "{bad_size}: {e}");
    }
    let a = parse("alloc,live").unwrap();
    assert!(
        a.given("live") && a.any_mode() && !a.given("sampling"),
        "alloc alone is a mode"
    );
    assert!(parse("live").unwrap_err().0.contains("alloc,live"));
    assert!(parse("sampling,alloc=64k,live").is_ok());
}

#[test]
fn lines_belong_to_sampling() {
    let o = parse("lines").unwrap();
    assert!(
        o.given("lines") && o.given("sampling"),
        "alone, it samples with lines"
    );
    assert!(parse("sampling,lines,alloc").unwrap().given("sampling"));
    let e = parse("profile,lines").unwrap_err().0;
    assert!(e.contains("sampling,lines"), "{e}");
    assert!(parse("lines=on").unwrap_err().0.contains("takes no value"));
}

/// `cstack=` alone samples (the default mode), beside another mode only
/// with `sampling` named; a bad value names the valid ones.
#[test]
fn cstack_belongs_to_sampling_and_takes_no_fp_or_dwarf() {
    for v in ["no", "fp", "dwarf"] {
        let o = parse(&format!("cstack={v}")).unwrap();
        assert!(o.given("sampling") && o.text("cstack") == Some(v));
    }
    assert!(parse("sampling,cstack=fp,alloc").is_ok());
    let e = parse("profile,cstack=fp").unwrap_err().0;
    assert!(e.contains("sampling,cstack=fp"), "{e}");
    let e = parse("cstack=lbr").unwrap_err().0;
    assert!(
        e.contains("bad value for cstack: 'lbr' (valid: no, fp, dwarf)"),
        "{e}"
    );
    assert!(parse("cstack").unwrap_err().0.contains("cstack"));
}

#[test]
fn trace_takes_a_path_and_an_overflow_policy() {
    let o = parse("trace").unwrap();
    assert_eq!(o.text("trace"), Some("profrj-%p-trace.xml"));
    assert!(!o.given("overflow") && !o.given("sampling") && probes(&o).any_scoped());
    let o = parse("trace=/tmp/t-%p-%n.xml,overflow=drop").unwrap();
    assert_eq!(o.text("trace"), Some("/tmp/t-%p-%n.xml"));
    assert_eq!(o.text("overflow"), Some("drop"));
    assert!(parse("trace,overflow=wait").is_ok());
    let e = parse("trace,overflow=later").unwrap_err().0;
    assert!(e.contains("overflow") && e.contains("wait or drop"), "{e}");
    let e = parse("overflow=drop").unwrap_err().0;
    assert!(e.contains("belongs to trace"), "{e}");
    let e = parse("trace=/tmp/%q.xml").unwrap_err().0;
    assert!(e.contains("placeholder"), "{e}");
}

#[test]
fn tracker_choices() {
    assert_eq!(parse("memory").unwrap().text("tracker"), None);
    assert_eq!(
        parse("memory,tracker=tags").unwrap().text("tracker"),
        Some("tags")
    );
    assert_eq!(
        parse("memory,tracker=weak").unwrap().text("tracker"),
        Some("weak")
    );
    let e = parse("memory,tracker=soft").unwrap_err().to_string();
    assert!(e.contains("bad value for tracker: 'soft'") && e.contains("auto, weak, tags"));
}

#[test]
fn stamps_and_census_shares() {
    assert_eq!(parse("memory").unwrap().switch("stamps"), None);
    assert_eq!(
        parse("memory,stamps=off").unwrap().switch("stamps"),
        Some(false)
    );
    assert_eq!(parse("memory").unwrap().number("census"), None);
    assert_eq!(
        parse("memory,census=100%").unwrap().number("census"),
        Some(100)
    );
    assert_eq!(parse("memory,census=2").unwrap().number("census"), Some(2));
    for bad in ["0%", "101%", "x", "-5%"] {
        let e = parse(&format!("memory,census={bad}"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("bad value for census") && e.contains("1% to 100%"),
            "{e}"
        );
    }
    let e = parse("census=20%").unwrap_err().to_string();
    assert!(e.contains("belongs to memory"), "{e}");
    assert!(parse("memory,stamps=maybe").is_err());
}

#[test]
fn derive_switch() {
    assert!(probes(&parse("coverage").unwrap()).derive_lines);
    assert!(!probes(&parse("coverage,derive=off").unwrap()).derive_lines);
    assert_eq!(
        parse("profile,timing=sampled").unwrap().text("timing"),
        Some("sampled")
    );
    assert_eq!(
        parse("profile,timing=all").unwrap().text("timing"),
        Some("all")
    );
    assert!(parse("profile,timing=some").is_err());
    assert_eq!(parse("coverage").unwrap().number("stripes"), None);
    assert_eq!(
        parse("coverage,stripes=8").unwrap().number("stripes"),
        Some(8)
    );
    assert_eq!(
        parse("coverage,stripes=1").unwrap().number("stripes"),
        Some(1)
    );
    for bad in ["0", "3", "128", "x"] {
        assert!(parse(&format!("coverage,stripes={bad}")).is_err(), "{bad}");
    }
    assert!(parse("coverage,derive=no")
        .unwrap_err()
        .0
        .contains("bad value for derive"));
}
