//! The agent's option string: `key[=value]` items separated by commas, as given
//! after `-agentpath:libprofrj.so=`. One parser, one table of options; the help
//! text and every error message are generated from that table.

use std::fmt;
use std::time::Duration;

/// Every option the agent accepts: (syntax, default, meaning).
const OPTIONS: &[(&str, &str, &str)] = &[
    (
        "sampling",
        "on if no mode is named",
        "stack sampling (the <sampler> section)",
    ),
    (
        "file=PATH",
        "profrj-%p.xml",
        "snapshot path; %p = pid, %t = start time (yyyy_MM_dd_HH_mm_ss), %% = %",
    ),
    (
        "interval=DURATION",
        "10ms",
        "sampling interval, with unit us, ms or s (100us to 10s)",
    ),
    (
        "depth=N",
        "2048",
        "deepest stack recorded; deeper stacks keep their top N frames under [truncated]",
    ),
    ("help", "", "print this table to stderr and continue"),
];

const MIN_INTERVAL: Duration = Duration::from_micros(100);
const MAX_INTERVAL: Duration = Duration::from_secs(10);
const MAX_DEPTH: u32 = 65_535;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub sampling: bool,
    /// Snapshot path template (placeholders not yet expanded).
    pub file: String,
    pub interval: Duration,
    pub depth: u32,
    pub help: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            sampling: false,
            file: "profrj-%p.xml".to_owned(),
            interval: Duration::from_millis(10),
            depth: 2048,
            help: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError(pub String);

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn valid_list() -> String {
    OPTIONS.iter().map(|o| o.0).collect::<Vec<_>>().join(", ")
}

fn bad(msg: String) -> OptionError {
    OptionError(format!("{msg} (valid options: {})", valid_list()))
}

impl Options {
    /// Parses the option string. `None` or empty means all defaults.
    pub fn parse(input: Option<&str>) -> Result<Self, OptionError> {
        let mut o = Options::default();
        let mut seen: Vec<&str> = Vec::new();
        for item in input.unwrap_or("").split(',').map(str::trim) {
            if item.is_empty() {
                continue;
            }
            let (key, value) = match item.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (item, None),
            };
            if seen.contains(&key) {
                return Err(bad(format!("option '{key}' is given twice")));
            }
            seen.push(key);
            match key {
                "sampling" => o.sampling = flag(key, value)?,
                "help" => o.help = flag(key, value)?,
                "file" => o.file = parse_file(required(key, value)?)?,
                "interval" => o.interval = parse_interval(required(key, value)?)?,
                "depth" => o.depth = parse_depth(required(key, value)?)?,
                _ => return Err(bad(format!("unknown option '{key}'"))),
            }
        }
        // No mode named: sample. `help` alone only prints the table.
        let help_only = o.help && seen.len() == 1;
        let mode_named = o.sampling;
        if !(mode_named || help_only) {
            o.sampling = true;
        }
        Ok(o)
    }

    /// Is any profiling mode on?
    pub fn any_mode(&self) -> bool {
        self.sampling
    }

    /// The table `help` prints.
    pub fn help_text() -> String {
        let mut s = String::from("profrj agent options (comma-separated, e.g. -agentpath:libprofrj.so=sampling,interval=5ms):\n");
        for (syntax, default, meaning) in OPTIONS {
            let default = if default.is_empty() {
                String::new()
            } else {
                format!(" [default: {default}]")
            };
            s.push_str(&format!("  {syntax:<20} {meaning}{default}\n"));
        }
        s
    }
}

fn flag(key: &str, value: Option<&str>) -> Result<bool, OptionError> {
    match value {
        None => Ok(true),
        Some(v) => Err(bad(format!(
            "option '{key}' takes no value, got '{key}={v}'"
        ))),
    }
}

fn required<'a>(key: &str, value: Option<&'a str>) -> Result<&'a str, OptionError> {
    match value {
        Some(v) if !v.is_empty() => Ok(v),
        Some(_) => Err(bad(format!("option '{key}=' needs a value"))),
        // jcmd splits its arguments at '=', so an unquoted `file=x` arrives as `file`.
        None if key == "file" => Err(bad(
            "option 'file' needs a value (file=PATH); with jcmd, quote the whole option string: \
             jcmd PID JVMTI.agent_load /path/libprofrj.so '\"sampling,file=/tmp/x.xml\"'"
                .to_owned(),
        )),
        None => Err(bad(format!("option '{key}' needs a value ({key}=...)"))),
    }
}

fn parse_file(v: &str) -> Result<String, OptionError> {
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            match chars.next() {
                Some('p' | 't' | '%') => {}
                Some(x) => {
                    return Err(bad(format!(
                        "bad value for file: unknown placeholder '%{x}' in '{v}' (placeholders: %p %t %%)"
                    )))
                }
                None => return Err(bad(format!("bad value for file: '{v}' ends with a lone '%' (write %% for %)"))),
            }
        }
    }
    Ok(v.to_owned())
}

fn parse_interval(v: &str) -> Result<Duration, OptionError> {
    let err = |why: &str| bad(format!("bad value for interval: '{v}' ({why})"));
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| err("expected a whole number with unit us, ms or s, e.g. 10ms"))?;
    let d = match unit {
        "us" => Duration::from_micros(n),
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "" => return Err(err("missing unit: us, ms or s")),
        _ => return Err(err("unknown unit; use us, ms or s")),
    };
    if d < MIN_INTERVAL || d > MAX_INTERVAL {
        return Err(err("must be between 100us and 10s"));
    }
    Ok(d)
}

fn parse_depth(v: &str) -> Result<u32, OptionError> {
    match v.parse::<u32>() {
        Ok(n) if (1..=MAX_DEPTH).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "bad value for depth: '{v}' (a whole number from 1 to {MAX_DEPTH})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Options, OptionError> {
        Options::parse(Some(s))
    }

    #[test]
    fn defaults_when_empty_or_absent() {
        let o = Options::parse(None).unwrap();
        assert!(o.sampling);
        assert_eq!(o.file, "profrj-%p.xml");
        assert_eq!(o.interval, Duration::from_millis(10));
        assert_eq!(o.depth, 2048);
        assert_eq!(parse("").unwrap(), o);
    }

    #[test]
    fn full_option_string() {
        let o = parse("sampling,file=/tmp/out-%p-%t.xml,interval=5ms,depth=64").unwrap();
        assert!(o.sampling && !o.help);
        assert_eq!(o.file, "/tmp/out-%p-%t.xml");
        assert_eq!(o.interval, Duration::from_millis(5));
        assert_eq!(o.depth, 64);
    }

    #[test]
    fn interval_units() {
        assert_eq!(
            parse("interval=250us").unwrap().interval,
            Duration::from_micros(250)
        );
        assert_eq!(
            parse("interval=2s").unwrap().interval,
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
        for (syntax, _, _) in OPTIONS {
            assert!(e.contains(syntax), "{e} should list {syntax}");
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
        assert!(parse("file=a%%b%p%t.xml").is_ok());
        assert!(parse("file=a%q.xml").unwrap_err().0.contains("%q"));
        assert!(parse("file=a%").unwrap_err().0.contains("lone"));
    }

    #[test]
    fn help_alone_does_not_profile() {
        let o = parse("help").unwrap();
        assert!(o.help && !o.any_mode());
        let o = parse("help,interval=1ms").unwrap();
        assert!(o.help && o.sampling);
    }

    #[test]
    fn help_text_lists_every_option_with_default() {
        let h = Options::help_text();
        for (syntax, default, _) in OPTIONS {
            assert!(h.contains(syntax));
            assert!(h.contains(default));
        }
    }

    #[test]
    fn whitespace_around_items_is_ignored() {
        let o = parse(" sampling , interval = 20ms ").unwrap();
        assert_eq!(o.interval, Duration::from_millis(20));
    }
}
