//! Every mode, in one list: the only place that names them all. A session
//! opens the modes its options name and from then on talks to them only
//! through [`Mode`]. Adding a mode means its folder (a [`Registration`] and
//! a [`Mode`]), one line in [`REGISTRY`], and the CLI's readers for its
//! section (docs/ARCHITECTURE.md).

use crate::error::AgentError;
use crate::instrument::Probes;
use crate::mode::{Cx, Mode, Registration};
use crate::options::{ModeOptions, OptionError, Options};
use crate::vm::{Capabilities, Native};
use crate::{alloc, coverage, jfr, lock, memory, profile, sampler, trace};

/// Every mode. Sections appear in a snapshot in this order, and modes start
/// in it (and stop in its reverse): `jfr` (no section) first, so a
/// recording hears every mode's first events and its last.
pub const REGISTRY: &[Registration] = &[
    jfr::mode::REGISTRATION,
    sampler::mode::REGISTRATION,
    profile::mode::REGISTRATION,
    memory::mode::REGISTRATION,
    coverage::mode::REGISTRATION,
    alloc::mode::REGISTRATION,
    lock::mode::REGISTRATION,
    trace::mode::REGISTRATION,
];

/// A mode opened for a session, with its registered name.
pub struct Opened {
    pub name: &'static str,
    pub mode: Box<dyn Mode>,
}

impl std::ops::Deref for Opened {
    type Target = dyn Mode;

    fn deref(&self) -> &(dyn Mode + 'static) {
        &*self.mode
    }
}

/// The registrations `options` asks for (by naming them), in order.
pub fn wanted(options: &Options) -> impl Iterator<Item = &'static Registration> + '_ {
    REGISTRY.iter().filter(|r| options.given(r.name))
}

/// Every mode's options, in the registry's order.
pub fn mode_options() -> Vec<&'static ModeOptions> {
    REGISTRY.iter().map(|r| &r.options).collect()
}

/// Parses an option string against the agent's and every mode's options.
pub fn parse_options(input: Option<&str>) -> Result<Options, OptionError> {
    Options::parse(input, &mode_options())
}

/// The table `help` prints.
pub fn help_text() -> String {
    Options::help_text(&mode_options())
}

/// The modes `cx.options` asks for, opened.
pub fn open(cx: &Cx) -> Result<Vec<Opened>, AgentError> {
    wanted(cx.options)
        .map(|r| {
            let mode = (r.open)(cx).map_err(|e| e.in_mode(r.name))?;
            Ok(Opened { name: r.name, mode })
        })
        .collect()
}

/// Every probe native, the modes' and the core's, bound when the probe
/// class is defined.
pub fn all_natives() -> Vec<Native> {
    let mut natives = crate::host::natives().to_vec();
    natives.extend(REGISTRY.iter().flat_map(|r| (r.natives)()));
    natives
}

/// Asks for the capabilities of the modes `options` names.
pub fn capabilities(options: &Options, caps: &mut Capabilities) -> Result<(), AgentError> {
    wanted(options).try_for_each(|r| (r.capabilities)(caps).map_err(|e| e.in_mode(r.name)))
}

/// The probes the modes `options` names put in classes.
pub fn probes(options: &Options) -> Probes {
    wanted(options).fold(Probes::NONE, |p, r| p.union((r.probes)(options)))
}

/// The names of the modes `options` names that probe the classes in scope.
pub fn instrumenting(options: &Options) -> Vec<&'static str> {
    wanted(options)
        .filter(|r| (r.probes)(options).any_scoped())
        .map(|r| r.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::REGISTRY;
    use crate::options::Options;

    /// Each mode's name is the option that asks for it, and asks for it
    /// alone (`jfr` records other modes' events: alone, it comes with
    /// `sampling`).
    #[test]
    fn each_registered_name_is_its_option() {
        for r in REGISTRY {
            assert_eq!(r.options.mode(), r.name);
            let options = super::parse_options(Some(r.name)).expect(r.name);
            let asked: Vec<&str> = super::wanted(&options).map(|m| m.name).collect();
            match r.name {
                "jfr" => assert_eq!(asked, ["jfr", "sampling"]),
                _ => assert_eq!(asked, [r.name]),
            }
        }
        assert!(super::wanted(&Options::default()).next().is_none());
        assert!(REGISTRY.len() <= crate::states::MAX_STATES);
        assert!(REGISTRY.len() <= crate::per_thread::SLOTS);
    }
}

#[cfg(test)]
mod option_tests {
    //! The option string, parsed against the agent's options and every
    //! registered mode's (the parser's one table).
    use crate::options::{reply_path, Command, OptionError, Options, Takes};
    use std::time::Duration;

    fn parse(s: &str) -> Result<Options, OptionError> {
        super::parse_options(Some(s))
    }

    /// Every option, the agent's and the modes'.
    fn all() -> Vec<&'static crate::options::Opt> {
        crate::options::all_options(&super::mode_options())
    }

    fn interval(o: &Options) -> Duration {
        crate::sampler::mode::interval(o)
    }

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
    fn defaults_when_empty_or_absent() {
        let o = super::parse_options(None).unwrap();
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
    fn profile_with_scope() {
        let o =
            parse("profile,include=com.acme.*,include=java.util.*,exclude=com.acme.gen.*").unwrap();
        assert!(
            o.given("profile") && !o.given("sampling"),
            "naming profile turns sampling off"
        );
        assert_eq!(o.scope.include.len(), 2);
        assert_eq!(o.scope.exclude.len(), 1);
        assert!(o.scope.contains("java.util.HashMap", true));
        assert!(!o.scope.contains("com.acme.gen.A", false));
        let both = parse("sampling,profile").unwrap();
        assert!(
            both.given("sampling") && both.given("profile") && super::probes(&both).any_scoped()
        );
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
                && super::probes(&c).any_scoped()
        );
        assert!(super::probes(&c).derive_lines && !c.given("memory"));
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
            "tracker" => Some("tags"),
            "stamps" => return "memory,stamps=off".to_owned(),
            "census" => return "memory,census=20%".to_owned(),
            "vthreads" | "derive" => Some("off"),
            "alloc" => Some("64k"),
            "live" => return "alloc,live".to_owned(),
            "lock" => Some("1ms"),
            "trace" => Some("/tmp/t-%n.xml"),
            "overflow" => return "trace,overflow=drop".to_owned(),
            "otlp" => Some("https://collector.example:4318"),
            "period" => return "otlp,period=10s".to_owned(),
            "service" => return "otlp,service=shop".to_owned(),
            "cafile" => return "otlp,cafile=/etc/ca.pem".to_owned(),
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
        let help = super::help_text();
        for o in all() {
            let item = example(o);
            let input = match o.takes {
                Takes::Command | Takes::Start | Takes::Any => item.clone(),
                Takes::StartOrDump => format!("dump,{item}"),
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
    fn trace_takes_a_path_and_an_overflow_policy() {
        let o = parse("trace").unwrap();
        assert_eq!(o.text("trace"), Some("profrj-%p-trace.xml"));
        assert!(!o.given("overflow") && !o.given("sampling") && super::probes(&o).any_scoped());
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
    fn help_text_lists_every_option_with_default() {
        let h = super::help_text();
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
        assert!(super::probes(&parse("coverage").unwrap()).derive_lines);
        assert!(!super::probes(&parse("coverage,derive=off").unwrap()).derive_lines);
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
}
