//! What `report`, `flame`, `convert` and `diff` share on their command line:
//! which section (`--section`), which threads (`--thread`), which weight
//! (`--metric`) and how rows are ordered (`--sort`, for snapshots and heaps). The help texts are made from the section table
//! ([`CallKind::ALL`] and each section's metrics), so a new section needs no
//! help edits here or in the commands.

use crate::snapshot::{CallKind, MetricName};

/// A command's choice of section: the call sections ([`CallKind`]) or, for
/// `report`, every section.
pub trait SectionChoice: clap::ValueEnum + Clone + Send + Sync + 'static {
    /// The choices, in the order the command picks its default.
    fn tags() -> Vec<&'static str>;
}

impl SectionChoice for CallKind {
    fn tags() -> Vec<&'static str> {
        CallKind::ALL.iter().map(|k| k.tag()).collect()
    }
}

#[derive(clap::Args, Clone, Debug)]
pub struct Selection<S: SectionChoice> {
    #[arg(long, value_enum, help = section_help(&S::tags()))]
    pub section: Option<S>,
    /// Only the threads of this name (every thread of that name; `diff`: in
    /// both snapshots) [default: all threads]. Written as a snapshot writes
    /// names: `\uXXXX` for a character a command line cannot carry (U+0000
    /// as `\u0000`, a lone surrogate as `\uD83D`), `\\` for a backslash
    /// before `u` or another backslash.
    #[arg(long, value_parser = thread_name)]
    pub thread: Option<String>,
    #[arg(long, value_enum, help = metric_help())]
    pub metric: Option<MetricName>,
}

/// `--thread`'s value as a name: its escapes decoded, as in a snapshot.
fn thread_name(s: &str) -> Result<String, std::convert::Infallible> {
    Ok(profrj_format::names::unescape(s).into_owned())
}

impl<S: SectionChoice> Selection<S> {
    pub fn thread(&self) -> Option<&str> {
        self.thread.as_deref()
    }
}

/// `Section: sampler, profile or alloc [default: the first present, in that
/// order]`.
pub fn section_help(tags: &[&str]) -> String {
    let list = match tags.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => tags.join(""),
    };
    format!(
        "Section: {list} [default: the first the snapshot has (diff: both have), in that order]"
    )
}

/// Per call section, its metrics and what they weigh, and its default.
pub fn metric_help() -> String {
    let mut parts = Vec::new();
    let mut defaults = Vec::new();
    for k in CallKind::ALL {
        let d = k.desc();
        let metrics: Vec<String> = d
            .metrics
            .iter()
            .map(|m| format!("{} = {}", m.name, m.describe))
            .collect();
        parts.push(format!("{}: {}", d.tag, metrics.join(", ")));
        defaults.push(format!("{} {}", d.tag, d.default_metric));
    }
    format!(
        "Weight of a call-tree node. {} [default: {}]",
        parts.join("; "),
        defaults.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every call section and each of its metrics is in the help.
    #[test]
    fn help_names_every_section_and_metric() {
        let s = section_help(&CallKind::tags());
        let m = metric_help();
        for k in CallKind::ALL {
            assert!(s.contains(k.tag()), "{s}");
            assert!(m.contains(k.tag()), "{m}");
            for metric in k.desc().metrics {
                assert!(m.contains(metric.name), "{m}");
            }
        }
    }
}

/// `--sort`: rows by their own weight or with what is below them (a heap:
/// shallow or retained bytes).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, clap::ValueEnum)]
pub enum SortBy {
    /// Own weight (the method on top of the stack), as HPROF.
    #[default]
    #[value(name = "self")]
    Own,
    /// Weight with callees.
    Total,
}
