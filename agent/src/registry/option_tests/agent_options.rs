//! The agent's own options (file, depth, signal, vthreads, otlp), the
//! commands, and the option table itself (every key parses, is in `help`,
//! and an unknown key is refused with the valid ones listed).

use super::{all, interval, parse};
use crate::options::{reply_path, Command, Takes};
use crate::registry::{help_text, parse_options};
use std::time::Duration;

#[test]
fn defaults_when_empty_or_absent() {
    let o = parse_options(None).unwrap();
    assert!(o.given("sampling"));
    assert_eq!(o.file, "profrj-%p.xml");
    assert_eq!(interval(&o), Duration::from_millis(10));
    assert_eq!(o.depth, 2048);
    assert_eq!(parse("").unwrap(), o);
}

#[test]
fn full_option_string() {
    let o = parse("sampling,file=/tmp/out-%p-%t.xml,interval=5ms,depth=64").unwrap();
    assert!(o.given("sampling") && !o.help);
    assert_eq!(o.file, "/tmp/out-%p-%t.xml");
    assert_eq!(interval(&o), Duration::from_millis(5));
    assert_eq!(o.depth, 64);
}

#[test]
fn depth_range() {
    assert_eq!(parse("depth=1").unwrap().depth, 1);
    for bad in ["depth=0", "depth=x", "depth=70000", "depth=-3"] {
        assert!(
            parse(bad).unwrap_err().0.contains("bad value for depth"),
            "{bad}"
        );
    }
}

#[test]
fn unknown_option_names_it_and_lists_valid_ones() {
    let e = parse("sampling,bogus=1").unwrap_err().0;
    assert!(e.contains("unknown option 'bogus'"), "{e}");
    for o in all() {
        assert!(e.contains(o.syntax), "{e} should list {}", o.syntax);
    }
}

#[test]
fn flags_take_no_value_and_values_are_required() {
    assert!(parse("sampling=yes")
        .unwrap_err()
        .0
        .contains("takes no value"));
    assert!(parse("depth").unwrap_err().0.contains("needs a value"));
    assert!(parse("file=").unwrap_err().0.contains("needs a value"));
}

#[test]
fn bare_file_explains_jcmd_quoting() {
    let e = parse("sampling,file").unwrap_err().0;
    assert!(e.contains("quote"), "{e}");
}

#[test]
fn duplicates_are_rejected() {
    assert!(parse("interval=1ms,interval=2ms")
        .unwrap_err()
        .0
        .contains("given twice"));
}

#[test]
fn file_placeholders_are_checked() {
    assert!(parse("file=a%%b%p%t%n.xml").is_ok());
    assert!(parse("file=a%q.xml").unwrap_err().0.contains("%q"));
    assert!(parse("file=a%").unwrap_err().0.contains("lone"));
}

#[test]
fn help_alone_does_not_profile() {
    let o = parse("help").unwrap();
    assert!(o.help && !o.any_mode());
    let o = parse("help,interval=1ms").unwrap();
    assert!(o.help && o.given("sampling"));
}

/// A value each option accepts, for the test below.
fn example(o: &crate::options::Opt) -> String {
    let key = o.key();
    let value = match key {
        "include" | "exclude" => Some("com.acme.*"),
        "file" | "reply" => Some("/tmp/x.xml"),
        "interval" => Some("5ms"),
        "depth" => Some("10"),
        "stripes" => Some("4"),
        "timing" => Some("sampled"),
        "signal" => Some("off"),
        "event" => Some("cpu"),
        "stacks" => Some("jvmti"),
        "cstack" => Some("dwarf"),
        "tracker" => Some("tags"),
        "stamps" => return "memory,stamps=off".to_owned(),
        "census" => return "memory,census=20%".to_owned(),
        "vthreads" | "derive" | "jvmthreads" => Some("off"),
        "kernel" => Some("on"),
        "alloc" => Some("64k"),
        "live" => return "alloc,live".to_owned(),
        "lock" => Some("1ms"),
        "trace" => Some("/tmp/t-%n.xml"),
        "overflow" => return "trace,overflow=drop".to_owned(),
        "otlp" => Some("https://collector.example:4318"),
        "period" => return "otlp,period=10s".to_owned(),
        "service" => return "otlp,service=shop".to_owned(),
        "cafile" => return "otlp,cafile=/etc/ca.pem".to_owned(),
        "heapdumps" => Some("oom+exit"),
        "heapfile" => Some("/tmp/h-%n.hprof"),
        "heapkind" => Some("all"),
        "heapgz" => Some("on"),
        "ended" => Some("4"),
        _ => None,
    };
    match value {
        Some(v) => format!("{key}={v}"),
        None => key.to_owned(),
    }
}

/// The table is the parser's only list: every key in it parses (in a
/// command that takes it) and is in `help`; a key not in it is refused.
#[test]
fn every_key_the_parser_accepts_is_in_the_table_and_in_help() {
    let help = help_text();
    for o in all() {
        let item = example(o);
        let input = match o.takes {
            Takes::Command | Takes::Start | Takes::Any => item.clone(),
            Takes::StartOrDump => format!("dump,{item}"),
            Takes::StartOrHeapDump => format!("heapdump,{item}"),
        };
        if let Err(e) = parse(&input) {
            panic!("'{input}' from the table does not parse: {e}");
        }
        assert!(help.contains(o.syntax), "help lacks {}", o.syntax);
    }
    for key in ["vthread", "events", "stack", "foo"] {
        assert!(
            parse(key).unwrap_err().0.contains("unknown option"),
            "{key}"
        );
    }
}

#[test]
fn otlp_takes_a_url_a_period_and_a_service() {
    let o = parse("otlp").unwrap();
    assert_eq!(o.otlp, Some(None));
    assert!(o.given("sampling"), "otlp alone pushes the default mode");
    assert_eq!(o.period, Duration::from_secs(60));
    let o = parse("alloc,otlp=http://10.0.0.1:4318/base,period=5s,service=shop").unwrap();
    assert_eq!(o.otlp, Some(Some("http://10.0.0.1:4318/base".into())));
    assert_eq!(o.period, Duration::from_secs(5));
    assert_eq!(o.service.as_deref(), Some("shop"));
    assert!(!o.given("sampling"));
    for bad in [
        "otlp=ftp://x",
        "otlp=http://",
        "otlp=http://h:99999",
        "otlp,period=500ms",
        "otlp,period=2d",
        "otlp,period=",
        "period=10s",
        "service=x",
    ] {
        let e = parse(bad).unwrap_err().0;
        assert!(e.contains("otlp") || e.contains("period"), "{bad}: {e}");
    }
}

#[test]
fn help_text_lists_every_option_with_default() {
    let h = help_text();
    for o in all() {
        assert!(h.contains(o.syntax));
        assert!(h.contains(o.default));
    }
}

#[test]
fn commands() {
    assert_eq!(parse("").unwrap().command, Command::Start);
    assert_eq!(
        parse("sampling,interval=5ms").unwrap().command,
        Command::Start
    );
    let d = parse("dump,file=/tmp/x-%n.xml,reply=/tmp/r").unwrap();
    assert_eq!(d.command, Command::Dump);
    assert!(d.file_given && !d.given("sampling"));
    assert_eq!(d.file, "/tmp/x-%n.xml");
    assert_eq!(d.reply.as_deref(), Some("/tmp/r"));
    assert!(!parse("dump").unwrap().file_given);
    for c in ["stop", "status", "resume"] {
        let o = parse(c).unwrap();
        assert_eq!(o.command.name(), c);
        assert!(!o.given("sampling"));
    }
    assert!(parse("stop,dump").unwrap_err().0.contains("two commands"));
    assert!(parse("stop,interval=1ms")
        .unwrap_err()
        .0
        .contains("does not apply to the 'stop' command"));
    assert!(parse("dump,sampling")
        .unwrap_err()
        .0
        .contains("does not apply"));
    assert!(parse("dump=now").unwrap_err().0.contains("takes no value"));
}

#[test]
fn reply_path_survives_bad_options() {
    assert_eq!(
        reply_path(Some("bogus,reply=/tmp/r")).as_deref(),
        Some("/tmp/r")
    );
    assert_eq!(reply_path(Some("dump")), None);
    assert_eq!(reply_path(None), None);
}

#[test]
fn vthreads_switch() {
    assert!(parse("").unwrap().vthreads);
    assert!(!parse("vthreads=off").unwrap().vthreads);
    assert_eq!(parse("").unwrap().fold_ended, Some(16));
    assert_eq!(parse("ended=fold").unwrap().fold_ended, Some(0));
    assert_eq!(parse("ended=keep").unwrap().fold_ended, None);
    assert_eq!(parse("ended=40").unwrap().fold_ended, Some(40));
    let e = parse("ended=some").unwrap_err().0;
    assert!(e.contains("ended") && e.contains("fold or keep"), "{e}");
    assert!(parse("vthreads=maybe")
        .unwrap_err()
        .0
        .contains("bad value for vthreads"));
    assert!(parse("dump,vthreads=on")
        .unwrap_err()
        .0
        .contains("does not apply"));
}

#[test]
fn signals() {
    assert_eq!(parse("").unwrap().signal.unwrap().0, libc::SIGUSR1);
    assert_eq!(parse("signal=off").unwrap().signal, None);
    assert_eq!(
        parse("signal=SIGUSR1").unwrap().signal.unwrap().0,
        libc::SIGUSR1
    );
    assert_eq!(
        parse("signal=RTMIN+3").unwrap().signal.unwrap().0,
        libc::SIGRTMIN() + 3
    );
    for bad in [
        "signal=USR2",
        "signal=QUIT",
        "signal=TERM",
        "signal=RTMIN+9",
        "signal=KILL",
    ] {
        assert!(
            parse(bad).unwrap_err().0.contains("bad value for signal"),
            "{bad}"
        );
    }
}

#[test]
fn whitespace_around_items_is_ignored() {
    let o = parse(" sampling , interval = 20ms ").unwrap();
    assert_eq!(interval(&o), Duration::from_millis(20));
}

#[test]
fn heap_dumps_say_when_where_which_and_gzip() {
    let o = parse("memory,heapdumps=oom+exit,heapfile=/tmp/h-%n.hprof,heapgz=on").unwrap();
    assert!(o.heap.on_oom && o.heap.at_exit && !o.heap.with_snapshot);
    assert_eq!(o.heap.template(), "/tmp/h-%n.hprof.gz");
    assert!(!o.heap.all);
    let d = parse("heapdump,heapkind=all").unwrap();
    assert_eq!(d.command, Command::HeapDump);
    assert!(d.heap.all);
    let e = parse("memory,heapdumps=later").unwrap_err().0;
    assert!(
        e.contains("heapdumps") && e.contains("exit, snapshot or oom"),
        "{e}"
    );
    let e = parse("heapdump,heapkind=some").unwrap_err().0;
    assert!(e.contains("live or all"), "{e}");
    let e = parse("dump,heapkind=all").unwrap_err().0;
    assert!(e.contains("does not apply to the 'dump' command"), "{e}");
    let e = parse("heapdump,heapdumps=exit").unwrap_err().0;
    assert!(e.contains("does not apply"), "{e}");
}
