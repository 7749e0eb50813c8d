//! Each kind of value an option takes, read and checked: flags, required
//! values, words from a list, `on`/`off`, snapshot paths, the dump signal,
//! durations, byte counts, the otlp URL and period, the stack depth. The
//! agent's own options and the modes' rows read their values with these;
//! apart from the parser, which only decides which one to call.

use super::error::bad;
use super::{OptionError, Value};
use std::time::Duration;

const MAX_DEPTH: u32 = 65_535;
const MIN_PERIOD: Duration = Duration::from_secs(1);
const MAX_PERIOD: Duration = Duration::from_secs(24 * 3600);

pub(super) fn read_flag(key: &str, value: Option<&str>) -> Result<bool, OptionError> {
    flag(key, value).map(|()| true)
}

/// A flag's value: none.
pub fn flag(key: &str, value: Option<&str>) -> Result<(), OptionError> {
    match value {
        None => Ok(()),
        Some(v) => Err(bad(format!(
            "option '{key}' takes no value, got '{key}={v}'"
        ))),
    }
}

/// [`Opt::read`] of a flag.
pub fn read_flag_value(key: &str, value: Option<&str>) -> Result<Value, OptionError> {
    flag(key, value).map(|()| Value::Flag)
}

/// The value an option needs.
pub fn required<'a>(key: &str, value: Option<&'a str>) -> Result<&'a str, OptionError> {
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

/// One of `words`, the values option `key` takes; `hint` says them in the
/// error (`wait or drop`).
pub fn choice(
    key: &str,
    value: Option<&str>,
    words: &[&str],
    hint: &str,
) -> Result<Value, OptionError> {
    let v = required(key, value)?;
    if words.contains(&v) {
        return Ok(Value::Text(v.to_owned()));
    }
    Err(bad(format!("bad value for {key}: '{v}' ({hint})")))
}

/// A path template: the snapshot's placeholders checked.
pub fn parse_file(key: &str, v: &str) -> Result<String, OptionError> {
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            match chars.next() {
                Some('p' | 't' | 'n' | '%') => {}
                Some(x) => {
                    return Err(bad(format!(
                        "bad value for {key}: unknown placeholder '%{x}' in '{v}' (placeholders: %p %t %n %%)"
                    )))
                }
                None => {
                    return Err(bad(format!(
                        "bad value for {key}: '{v}' ends with a lone '%' (write %% for %)"
                    )))
                }
            }
        }
    }
    Ok(v.to_owned())
}

/// `on` or `off`.
pub fn parse_on_off(key: &str, v: &str) -> Result<bool, OptionError> {
    match v {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(bad(format!("bad value for {key}: '{v}' (on or off)"))),
    }
}

/// `ended=N|fold|keep`: how many ended threads of a name pattern keep
/// their rows (`fold`: none; `keep`: all, `None`).
pub fn parse_ended(key: &str, v: &str) -> Result<Option<usize>, OptionError> {
    match v {
        "fold" => Ok(Some(0)),
        "keep" => Ok(None),
        _ => match v.parse::<usize>() {
            Ok(n) if n <= 1_000_000 => Ok(Some(n)),
            _ => Err(bad(format!(
                "bad value for {key}: '{v}' (a number 0 to 1000000, fold or keep)"
            ))),
        },
    }
}

/// [`Opt::read`] of an `on`/`off` option.
pub fn read_on_off(key: &str, value: Option<&str>) -> Result<Value, OptionError> {
    parse_on_off(key, required(key, value)?).map(Value::Switch)
}

pub(super) fn parse_signal(v: &str) -> Result<Option<(i32, String)>, OptionError> {
    let err = |why: &str| bad(format!("bad value for signal: '{v}' ({why})"));
    let name = v.strip_prefix("SIG").unwrap_or(v).to_ascii_uppercase();
    match name.as_str() {
        "OFF" => Ok(None),
        "USR1" => Ok(Some((libc::SIGUSR1, name))),
        "USR2" => Err(err("HotSpot uses SIGUSR2 to suspend threads")),
        "QUIT" => Err(err(
            "SIGQUIT already writes a snapshot (kill -3), as a thread dump does",
        )),
        "HUP" | "INT" | "TERM" => Err(err("the JVM runs shutdown hooks on it")),
        _ => {
            let n = name
                .strip_prefix("RTMIN+")
                .or_else(|| (name == "RTMIN").then_some("0"))
                .and_then(|n| n.parse::<i32>().ok())
                .filter(|n| (0..=8).contains(n))
                .ok_or_else(|| err("use USR1, RTMIN+N with N from 0 to 8, or off"))?;
            Ok(Some((libc::SIGRTMIN() + n, format!("RTMIN+{n}"))))
        }
    }
}

/// A duration: a whole number with unit `ns`, `us`, `ms` or `s` (`0` may
/// go without one); `key` names the option in the message.
pub fn parse_duration(key: &str, v: &str, example: &str) -> Result<Duration, OptionError> {
    let err = |why: &str| bad(format!("bad value for {key}: '{v}' ({why})"));
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().map_err(|_| {
        err(&format!(
            "expected a whole number with unit us, ms or s, e.g. {example}"
        ))
    })?;
    Ok(match unit {
        "ns" => Duration::from_nanos(n),
        "us" => Duration::from_micros(n),
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "" if n == 0 => Duration::ZERO,
        "" => return Err(err("missing unit: us, ms or s")),
        _ => return Err(err("unknown unit; use us, ms or s")),
    })
}

/// A byte count: digits with an optional k, m or g (binary multiples), at
/// most `max`; `None` when it is not one.
pub fn parse_size(v: &str, max: u64) -> Option<u32> {
    let lower = v.to_ascii_lowercase();
    let (digits, unit) = match lower.strip_suffix(['k', 'm', 'g']) {
        Some(d) => (d, &lower[d.len()..]),
        None => (lower.as_str(), ""),
    };
    let shift = match unit {
        "k" => 10,
        "m" => 20,
        "g" => 30,
        _ => 0,
    };
    match digits.parse::<u64>() {
        Ok(n)
            if n.checked_shl(shift)
                .is_some_and(|b| b >> shift == n && b <= max) =>
        {
            Some((n << shift) as u32)
        }
        _ => None,
    }
}

/// `period=`: 1s to a day.
pub(super) fn parse_period(v: &str) -> Result<Duration, OptionError> {
    let d = parse_duration("period", v, "60s")?;
    if d < MIN_PERIOD || d > MAX_PERIOD {
        return Err(bad(format!(
            "bad value for period: '{v}' (between 1s and 86400s, e.g. 60s)"
        )));
    }
    Ok(d)
}

/// `otlp=URL`: http:// or https://, a host, an optional port and path.
pub(super) fn parse_url(v: &str) -> Result<String, OptionError> {
    crate::otlp::endpoint::Endpoint::parse(v, true)
        .map(|_| v.to_owned())
        .map_err(|why| bad(format!("bad value for otlp: '{v}' ({why})")))
}

pub(super) fn parse_depth(v: &str) -> Result<u32, OptionError> {
    match v.parse::<u32>() {
        Ok(n) if (1..=MAX_DEPTH).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "bad value for depth: '{v}' (a whole number from 1 to {MAX_DEPTH})"
        ))),
    }
}
