//! What both HPROF texts write alike, the snapshot's (`convert --to
//! hprof`, `src/convert/hprof/`) and a binary heap dump's (`src/heap/`): a
//! name as HPROF's columns hold it, HPROF's dates, the SITES table's head.
//! Apart from both, so neither imports the other.

use std::borrow::Cow;

/// A name as HPROF's columns can hold it: escaped as every writer escapes
/// it, and a space (a Kotlin test's method name, a pseudo-frame such as
/// `[no Java frame]`) written `_`, since HPROF's readers split a row at
/// white space.
pub fn column(name: &str) -> Cow<'_, str> {
    match profrj_format::names::escape(name) {
        Cow::Borrowed(s) if !s.contains(' ') => Cow::Borrowed(s),
        e => Cow::Owned(e.replace(' ', "_")),
    }
}

/// The head of HPROF's SITES table, its title line and its two lines of
/// column names, as HPROF wrote them.
pub fn sites_head(out: &mut dyn std::io::Write, order: &str, date: &str) -> std::io::Result<()> {
    writeln!(out, "SITES BEGIN (ordered by {order}) {date}")?;
    writeln!(
        out,
        "          percent          live          alloc'ed  stack class"
    )?;
    writeln!(
        out,
        " rank   self  accum     bytes objs     bytes  objs trace name"
    )
}

/// `Wed Nov 25 15:40:45 2026` (C's ctime, UTC) for seconds since the epoch.
pub fn ctime(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} {year}",
        DAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::ctime;

    #[test]
    fn dates_as_ctime() {
        assert_eq!(ctime(0), "Thu Jan 01 00:00:00 1970");
        assert_eq!(ctime(1_795_621_245), "Wed Nov 25 15:40:45 2026");
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
    }
}
