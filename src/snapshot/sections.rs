//! The call-tree sections as a table: every `<thread>`/`<profile>` section is
//! read, weighed and written out by the same code, told by its
//! [`SectionDesc`] which attributes it has and what they mean. A new call-tree
//! section is a [`CallKind`] variant and a descriptor here, nothing else.

use profrj_format::{alloc, calls, lock, profile, sampler, sites};
use std::sync::OnceLock;

/// Which call-tree section.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum CallKind {
    /// `<sampler>`: sample counts.
    Sampler,
    /// `<profile>`: instrumented call counts and times (µs).
    Profile,
    /// `<alloc>`: sampled allocations, bytes and objects (profrj's own).
    Alloc,
    /// `<sites>`: `memory`'s allocation sites, exact live and peak counts
    /// (profrj's own).
    Sites,
    /// `<lock>`: contended waits, counts and nanoseconds (profrj's own).
    Lock,
}

impl CallKind {
    /// Every call-tree section, in the order a reader picks its default.
    pub const ALL: [CallKind; 5] = [
        CallKind::Sampler,
        CallKind::Profile,
        CallKind::Alloc,
        CallKind::Sites,
        CallKind::Lock,
    ];

    pub fn desc(self) -> &'static SectionDesc {
        match self {
            CallKind::Sampler => &SAMPLER,
            CallKind::Profile => &PROFILE,
            CallKind::Alloc => &ALLOC,
            CallKind::Sites => &SITES,
            CallKind::Lock => &LOCK,
        }
    }

    pub fn tag(self) -> &'static str {
        self.desc().tag
    }
}

/// `--section`: the call sections by tag.
impl clap::ValueEnum for CallKind {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.tag()))
    }
}

/// The most numeric attributes a node keeps (profile's eight).
pub const MAX_VALUES: usize = 8;
/// The most numeric attributes a thread keeps.
pub const MAX_THREAD_TOTALS: usize = 4;

/// A pprof value type: (type, unit).
pub type ValueType = (&'static str, &'static str);

/// One weight a node can have (`--metric`).
#[derive(Debug)]
pub struct MetricDesc {
    /// Its `--metric` name.
    pub name: &'static str,
    /// Other names `--metric` takes for it (the attribute's).
    pub aliases: &'static [&'static str],
    /// The node attribute with the node's own figure (without callees).
    pub own: &'static str,
    /// The node attribute with the node's figure and its callees', if any.
    pub cumulated: Option<&'static str>,
    pub unit: &'static str,
    /// What the weight is, for headers.
    pub describe: &'static str,
    /// `report`'s title of the method table weighed by it.
    pub title: &'static str,
    /// pprof's value type; `None`: not in pprof.
    pub pprof: Option<ValueType>,
    /// pprof's value type when the section holds live objects only.
    pub pprof_live: Option<ValueType>,
    /// The thread attribute that counts every event, those without a frame
    /// too: the reader gives the difference a `[no Java frame]` node.
    pub thread_total: Option<&'static str>,
}

#[derive(Debug)]
pub struct SectionDesc {
    pub tag: &'static str,
    /// profrj's own, not the contract's: `report` picks it after those.
    pub own: bool,
    /// Numeric node attributes kept, each a slot of [`super::Values`].
    pub node_values: &'static [&'static str],
    /// A node's descriptor attribute (profile's `signature`).
    pub signature: Option<&'static str>,
    /// The boolean node attribute marking a frame that is a class (the
    /// allocated one), not a method: the top frame of a site.
    pub class_marker: Option<&'static str>,
    /// Weights, in pprof's order of values.
    pub metrics: &'static [MetricDesc],
    /// Name of the metric without `--metric`.
    pub default_metric: &'static str,
    /// Numeric `<thread>` attributes kept, with what they count (report).
    pub thread_totals: &'static [(&'static str, &'static str)],
    /// The boolean section attribute saying only live objects count.
    pub live: Option<&'static str>,
    /// With `live`: the section attribute saying which objects count as
    /// alive (a word).
    pub live_rule: Option<&'static str>,
    /// What the figures count, for headers: without `live`, and with it
    /// (a section of class frames has the first, one with `live` both).
    pub scope: [&'static str; 2],
    /// Numeric section attributes, with what they are (report).
    pub section_values: &'static [(&'static str, &'static str)],
    /// A method-table column shown whatever the weight: (header, metric).
    pub count_column: Option<(&'static str, &'static str)>,
    /// Title of `report`'s table of sites (class frame and its method).
    pub sites_title: &'static str,
    /// What a site is, for the end of that table.
    pub sites_note: &'static str,
    /// What a class frame is, for the flame page's legend.
    pub class_frames: &'static str,
    /// The metrics `diff` compares per site.
    pub diff_metrics: &'static [&'static str],
}

impl SectionDesc {
    /// The slot of a numeric node attribute.
    pub fn slot(&self, attr: &str) -> Option<usize> {
        self.node_values.iter().position(|&a| a == attr)
    }

    /// The slot of a thread total.
    pub fn thread_slot(&self, attr: &str) -> Option<usize> {
        self.thread_totals.iter().position(|&(a, _)| a == attr)
    }

    /// What a section's figures count ([`SectionDesc::scope`]).
    pub fn scope(&self, live: bool) -> &'static str {
        self.scope[usize::from(live)]
    }

    pub fn metric_desc(&self, name: &str) -> Option<&'static MetricDesc> {
        let all: &'static [MetricDesc] = self.metrics;
        all.iter()
            .find(|m| m.name == name || m.aliases.contains(&name))
    }

    /// The metrics as `name (what it is)`, for messages.
    pub fn metric_list(&self) -> String {
        let all: Vec<String> = self
            .metrics
            .iter()
            .map(|m| format!("{} ({})", m.name, m.describe))
            .collect();
        all.join(", ")
    }
}

const SAMPLER: SectionDesc = SectionDesc {
    tag: sampler::SECTION,
    own: false,
    node_values: &[
        sampler::node::HITS,
        sampler::node::ELAPSED,
        calls::CUMULATED,
        calls::CUMULATED_ELAPSED,
    ],
    signature: None,
    class_marker: None,
    metrics: &[
        MetricDesc {
            name: "wall",
            aliases: &[sampler::node::ELAPSED],
            own: sampler::node::ELAPSED,
            cumulated: Some(calls::CUMULATED_ELAPSED),
            unit: "samples",
            describe: "samples in any thread state (elapsed)",
            title: "SAMPLES",
            pprof: Some(("samples", "count")),
            pprof_live: None,
            thread_total: Some(calls::CUMULATED_ELAPSED),
        },
        MetricDesc {
            name: "cpu",
            aliases: &[sampler::node::HITS],
            own: sampler::node::HITS,
            cumulated: Some(calls::CUMULATED),
            unit: "samples",
            describe: "samples with the thread RUNNABLE (hits)",
            title: "CPU SAMPLES",
            pprof: Some(("runnable_samples", "count")),
            pprof_live: None,
            thread_total: Some(calls::CUMULATED),
        },
    ],
    default_metric: "cpu",
    thread_totals: &[
        (calls::CUMULATED, "samples RUNNABLE"),
        (calls::CUMULATED_ELAPSED, "samples in all"),
    ],
    live: None,
    live_rule: None,
    scope: ["", ""],
    section_values: &[],
    count_column: None,
    sites_title: "",
    sites_note: "",
    class_frames: "",
    diff_metrics: &[],
};

const PROFILE: SectionDesc = SectionDesc {
    tag: profile::SECTION,
    own: false,
    node_values: &[
        profile::node::COUNT,
        profile::node::METHOD,
        profile::node::METHOD_ELAPSED,
        calls::CUMULATED,
        calls::CUMULATED_ELAPSED,
        profile::node::OVERHEAD_CUMULATED,
        profile::node::OVERHEAD_METHOD,
        profile::node::EXCEPTIONS,
    ],
    signature: Some(profile::node::SIGNATURE),
    class_marker: None,
    metrics: &[
        MetricDesc {
            name: "calls",
            aliases: &[profile::node::COUNT],
            own: profile::node::COUNT,
            cumulated: None,
            unit: "calls",
            describe: "calls (count)",
            title: "METHOD PROFILE",
            pprof: Some(("calls", "count")),
            pprof_live: None,
            thread_total: None,
        },
        MetricDesc {
            name: "wall",
            aliases: &[sampler::node::ELAPSED],
            own: profile::node::METHOD_ELAPSED,
            cumulated: Some(calls::CUMULATED_ELAPSED),
            unit: "us",
            describe: "wall time, microseconds (methodElapsed)",
            title: "METHOD PROFILE",
            pprof: Some(("wall", "microseconds")),
            pprof_live: None,
            thread_total: None,
        },
        MetricDesc {
            name: "cpu",
            aliases: &[sampler::node::HITS],
            own: profile::node::METHOD,
            cumulated: Some(calls::CUMULATED),
            unit: "us",
            describe: "CPU time, microseconds (method)",
            title: "METHOD PROFILE",
            pprof: Some(("cpu", "microseconds")),
            pprof_live: None,
            thread_total: None,
        },
    ],
    default_metric: "cpu",
    thread_totals: &[],
    live: None,
    live_rule: None,
    scope: ["", ""],
    section_values: &[],
    count_column: Some(("calls", "calls")),
    sites_title: "",
    sites_note: "",
    class_frames: "",
    diff_metrics: &[],
};

const ALLOC: SectionDesc = SectionDesc {
    tag: alloc::SECTION,
    own: true,
    node_values: &[
        alloc::node::BYTES,
        alloc::node::OBJECTS,
        alloc::node::SAMPLES,
        alloc::node::CUMULATED_BYTES,
        alloc::node::CUMULATED_OBJECTS,
        alloc::node::CUMULATED_SAMPLES,
    ],
    signature: None,
    class_marker: Some(alloc::node::CLASS),
    // Go's heap profile order: objects, then space.
    metrics: &[
        MetricDesc {
            name: "objects",
            aliases: &[],
            own: alloc::node::OBJECTS,
            cumulated: Some(alloc::node::CUMULATED_OBJECTS),
            unit: "objects",
            describe: "objects, estimated from the samples",
            title: "ALLOCATING METHODS",
            pprof: Some(("alloc_objects", "count")),
            pprof_live: Some(("inuse_objects", "count")),
            thread_total: None,
        },
        MetricDesc {
            name: "bytes",
            aliases: &[],
            own: alloc::node::BYTES,
            cumulated: Some(alloc::node::CUMULATED_BYTES),
            unit: "bytes",
            describe: "bytes, estimated from the samples",
            title: "ALLOCATING METHODS",
            pprof: Some(("alloc_space", "bytes")),
            pprof_live: Some(("inuse_space", "bytes")),
            thread_total: None,
        },
        // The raw count behind the estimates; not a pprof value.
        MetricDesc {
            name: "samples",
            aliases: &[],
            own: alloc::node::SAMPLES,
            cumulated: Some(alloc::node::CUMULATED_SAMPLES),
            unit: "samples",
            describe: "allocation samples taken",
            title: "ALLOCATING METHODS",
            pprof: None,
            pprof_live: None,
            thread_total: None,
        },
    ],
    default_metric: "bytes",
    // The thread's totals are rounded sums of estimates: no frameless fill.
    thread_totals: &[
        (alloc::thread::BYTES, "bytes"),
        (alloc::thread::OBJECTS, "objects"),
        (alloc::thread::SAMPLES, "samples"),
    ],
    live: Some(alloc::LIVE),
    live_rule: Some(alloc::LIVE_RULE),
    scope: ["all allocations", "live objects only"],
    section_values: &[(alloc::INTERVAL, "bytes between samples on average")],
    count_column: None,
    sites_title: "ALLOCATION SITES",
    sites_note: "a site: a class and the method that allocated it; \
                 figures are estimates from the samples",
    class_frames: "what was allocated",
    diff_metrics: &["bytes", "objects"],
};

const SITES: SectionDesc = SectionDesc {
    tag: sites::SECTION,
    own: true,
    node_values: &[
        sites::node::COUNT,
        sites::node::MAX,
        sites::node::ALLOCATED,
        sites::node::CUMULATED_COUNT,
        sites::node::CUMULATED_MAX,
        sites::node::CUMULATED_ALLOCATED,
    ],
    signature: None,
    class_marker: Some(sites::node::CLASS),
    metrics: &[
        MetricDesc {
            name: "alive",
            aliases: &[],
            own: sites::node::COUNT,
            cumulated: Some(sites::node::CUMULATED_COUNT),
            unit: "objects",
            describe: "objects alive at the snapshot, exact (count)",
            title: "ALLOCATING METHODS",
            pprof: Some(("inuse_objects", "count")),
            pprof_live: None,
            thread_total: None,
        },
        MetricDesc {
            name: "max",
            aliases: &[],
            own: sites::node::MAX,
            cumulated: Some(sites::node::CUMULATED_MAX),
            unit: "objects",
            describe: "the most objects alive at once, exact per site (max)",
            title: "ALLOCATING METHODS",
            pprof: Some(("max_inuse_objects", "count")),
            pprof_live: None,
            thread_total: None,
        },
        MetricDesc {
            name: "allocated",
            aliases: &[],
            own: sites::node::ALLOCATED,
            cumulated: Some(sites::node::CUMULATED_ALLOCATED),
            unit: "objects",
            describe: "objects allocated, exact (allocated)",
            title: "ALLOCATING METHODS",
            pprof: Some(("alloc_objects", "count")),
            pprof_live: None,
            thread_total: None,
        },
    ],
    default_metric: "alive",
    thread_totals: &[],
    live: None,
    live_rule: None,
    scope: ["objects alive at the snapshot", ""],
    section_values: &[
        (
            sites::CENSUS_PAUSE,
            "ns, the pause of the census these counts come from",
        ),
        (sites::CENSUSES, "heap censuses in this JVM"),
        (sites::CENSUS_PAUSES, "ns, their pauses summed"),
        (sites::LONGEST_CENSUS_PAUSE, "ns, the longest of them"),
        (
            sites::CENSUSES_SKIPPED,
            "full GCs the census= budget left without one",
        ),
    ],
    count_column: None,
    sites_title: "ALLOCATION SITES (exact)",
    sites_note: "a site: a class and the method and line that allocated it; \
                 counts are exact, each `max` the site's own peak",
    class_frames: "what was allocated",
    diff_metrics: &["alive", "max", "allocated"],
};

const LOCK: SectionDesc = SectionDesc {
    tag: lock::SECTION,
    own: true,
    node_values: &[
        lock::node::COUNT,
        lock::node::TIME,
        lock::node::CUMULATED_COUNT,
        lock::node::CUMULATED_TIME,
    ],
    signature: None,
    class_marker: Some(lock::node::CLASS),
    // Go's mutex profile order: contentions, then delay.
    metrics: &[
        MetricDesc {
            name: "count",
            aliases: &[],
            own: lock::node::COUNT,
            cumulated: Some(lock::node::CUMULATED_COUNT),
            unit: "waits",
            describe: "contended acquisitions (count)",
            title: "WAITING METHODS",
            pprof: Some(("contentions", "count")),
            pprof_live: None,
            thread_total: None,
        },
        MetricDesc {
            name: "time",
            aliases: &[],
            own: lock::node::TIME,
            cumulated: Some(lock::node::CUMULATED_TIME),
            unit: "ns",
            describe: "nanoseconds waited (time)",
            title: "WAITING METHODS",
            pprof: Some(("delay", "nanoseconds")),
            pprof_live: None,
            thread_total: None,
        },
    ],
    default_metric: "time",
    thread_totals: &[
        (lock::thread::COUNT, "contended waits"),
        (lock::thread::TIME, "ns waited"),
    ],
    live: None,
    live_rule: None,
    scope: ["contended monitor entries", ""],
    section_values: &[(lock::THRESHOLD, "ns, the shortest wait recorded")],
    count_column: None,
    sites_title: "MONITOR TIME",
    sites_note: "a site: the monitor's class and the method that waited to enter it",
    class_frames: "the monitor waited for",
    diff_metrics: &["time", "count"],
};

/// A `--metric` value: any section's metric name (aliases resolved).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MetricName(pub &'static str);

impl clap::ValueEnum for MetricName {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: OnceLock<Vec<MetricName>> = OnceLock::new();
        ALL.get_or_init(|| {
            let mut names: Vec<MetricName> = Vec::new();
            for k in CallKind::ALL {
                for m in k.desc().metrics {
                    if !names.iter().any(|n| n.0 == m.name) {
                        names.push(MetricName(m.name));
                    }
                }
            }
            names
        })
    }

    /// An alias that is also a metric's name (profile's `count`, lock's
    /// metric) stays that name: each section resolves it, as an alias or
    /// as its own metric ([`SectionDesc::metric_desc`]).
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let mut v = clap::builder::PossibleValue::new(self.0);
        let mut seen: Vec<&str> = Self::value_variants().iter().map(|n| n.0).collect();
        for k in CallKind::ALL {
            for m in k.desc().metrics.iter().filter(|m| m.name == self.0) {
                for &a in m.aliases {
                    if !seen.contains(&a) {
                        seen.push(a);
                        v = v.alias(a);
                    }
                }
            }
        }
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each descriptor is consistent: its metrics' attributes are kept
    /// nodes' values, within the slots, and an alias means one metric (or,
    /// in a section that has a metric of that name, that metric).
    #[test]
    fn descriptors_are_consistent() {
        for k in CallKind::ALL {
            let d = k.desc();
            assert!(d.node_values.len() <= MAX_VALUES, "{}", d.tag);
            assert!(d.thread_totals.len() <= MAX_THREAD_TOTALS, "{}", d.tag);
            assert!(d.metric_desc(d.default_metric).is_some(), "{}", d.tag);
            for m in d.metrics {
                assert!(d.slot(m.own).is_some(), "{}: {}", d.tag, m.own);
                if let Some(c) = m.cumulated {
                    assert!(d.slot(c).is_some(), "{}: {c}", d.tag);
                }
                if let Some(t) = m.thread_total {
                    assert!(d.thread_slot(t).is_some(), "{}: {t}", d.tag);
                }
            }
            // What a section of class frames prints about them.
            if d.class_marker.is_some() {
                let words = [d.sites_title, d.sites_note, d.class_frames, d.scope[0]];
                assert!(words.iter().all(|w| !w.is_empty()), "{}", d.tag);
                assert!(!d.diff_metrics.is_empty(), "{}", d.tag);
            }
            if d.live.is_some() {
                assert!(!d.scope[1].is_empty(), "{}", d.tag);
            }
            for name in d.diff_metrics {
                assert!(d.metric_desc(name).is_some(), "{}: {name}", d.tag);
            }
            if let Some((_, m)) = d.count_column {
                assert!(d.metric_desc(m).is_some(), "{}: {m}", d.tag);
            }
        }
        for k in CallKind::ALL {
            for m in k.desc().metrics {
                for a in m.aliases {
                    for k2 in CallKind::ALL {
                        if let Some(other) = k2.desc().metric_desc(a) {
                            assert!(other.name == m.name || other.name == *a, "alias {a}");
                        }
                    }
                }
            }
        }
    }
}
