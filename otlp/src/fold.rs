//! Folding: the samples of two calls of one [`crate::Keeper`] as one, as
//! if the keeper had been called once at the end of both. A push that
//! could not send a period's delta folds it into the next one (an outage
//! then costs time, not data): threads are matched by name (what OTLP's
//! `thread.name` tells apart), call paths by their frames, and one
//! (thread, path)'s figures summed. The folded samples are at most one
//! profile of every path the keeper follows, however many calls they
//! cover: each (thread, path) is one sample, only its figures grow.

use crate::delta::{Sample, Samples, Step};
use crate::model::ROOT;
use std::collections::HashMap;

impl Samples {
    /// Adds `later` (the same mode's samples from a later call of the same
    /// keeper) to these.
    pub fn fold(&mut self, later: Samples) {
        // Between two calls of one keeper a name id keeps its name and the
        // list only grows: the longer list names the samples of both.
        if later.names.len() >= self.names.len() {
            self.names = later.names;
        }
        if later.lines.len() >= self.lines.len() {
            self.lines = later.lines;
        }
        if later.period.is_some() {
            self.period = later.period;
        }
        if self.weights.is_empty() {
            self.weights = later.weights;
        }
        let mut thread_index: HashMap<String, u32> = HashMap::new();
        for (i, t) in self.threads.iter().enumerate() {
            thread_index.entry(t.clone()).or_insert(i as u32);
        }
        let threads: Vec<u32> = later
            .threads
            .into_iter()
            .map(|name| {
                *thread_index.entry(name).or_insert_with_key(|name| {
                    self.threads.push(name.clone());
                    self.threads.len() as u32 - 1
                })
            })
            .collect();
        let mut step_index: HashMap<(u32, u32), u32> = self
            .paths
            .iter()
            .enumerate()
            .map(|(i, s)| ((s.parent, s.name), i as u32))
            .collect();
        // Each of `later`'s steps as one of these (a parent precedes its
        // children in both, so a new step is added after its parent).
        let mut steps: Vec<u32> = Vec::with_capacity(later.paths.len());
        for s in &later.paths {
            let parent = match s.parent {
                ROOT => ROOT,
                p => steps.get(p as usize).copied().unwrap_or(ROOT),
            };
            let id = *step_index.entry((parent, s.name)).or_insert_with(|| {
                self.paths.push(Step {
                    parent,
                    name: s.name,
                });
                self.paths.len() as u32 - 1
            });
            steps.push(id);
        }
        let mut sample_index: HashMap<(u32, u32), usize> = self
            .samples
            .iter()
            .enumerate()
            .map(|(i, s)| ((s.thread, s.path), i))
            .collect();
        for s in later.samples {
            let (Some(&thread), Some(&path)) =
                (threads.get(s.thread as usize), steps.get(s.path as usize))
            else {
                continue;
            };
            match sample_index.get(&(thread, path)) {
                Some(&i) => {
                    let into = &mut self.samples[i].values;
                    for (a, b) in into.iter_mut().zip(s.values) {
                        *a = a.saturating_add(b);
                    }
                }
                None => {
                    sample_index.insert((thread, path), self.samples.len());
                    self.samples.push(Sample {
                        thread,
                        path,
                        values: s.values,
                    });
                }
            }
        }
    }

    /// The memory these samples hold, bytes (what a push's bound counts):
    /// steps, samples, thread and frame names.
    pub fn heap_bytes(&self) -> usize {
        let boxed = std::mem::size_of::<Box<str>>();
        let string = std::mem::size_of::<String>();
        self.paths.len() * std::mem::size_of::<Step>()
            + self.samples.len() * std::mem::size_of::<Sample>()
            + self.lines.len() * 4
            + self.names.iter().map(|n| n.len() + boxed).sum::<usize>()
            + self.threads.iter().map(|t| t.len() + string).sum::<usize>()
    }

    /// The sum of weight `w` over the samples.
    pub fn total(&self, w: usize) -> u64 {
        self.samples
            .iter()
            .map(|s| s.values.get(w).copied().unwrap_or(0))
            .fold(0, u64::saturating_add)
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{types, CallTrees, Node, ThreadTree, MAX_WEIGHTS, ROOT};
    use crate::{Keeper, Samples};
    use std::collections::BTreeMap;

    /// A tree of one thread: (parent, name, own samples) per node.
    fn thread(key: u64, name: &str, nodes: &[(u32, u32, u64)]) -> ThreadTree {
        ThreadTree {
            key,
            name: name.into(),
            nodes: nodes
                .iter()
                .map(|&(parent, name, v)| Node {
                    parent,
                    name,
                    own: [v, v * 10, 0],
                })
                .collect(),
        }
    }

    fn trees(names: &[&str], threads: Vec<ThreadTree>) -> CallTrees {
        CallTrees {
            weights: &[types::SAMPLES, types::RUNNABLE_SAMPLES],
            period: Some((types::WALL_PERIOD, 10_000_000)),
            names: names.iter().map(|s| (*s).into()).collect(),
            lines: Vec::new(),
            threads,
        }
    }

    /// (thread, path by name leaf first) -> figures: what an encoder makes
    /// of the samples (it sums one thread name's samples on one stack).
    fn profile(s: &Samples) -> BTreeMap<(String, Vec<String>), [u64; MAX_WEIGHTS]> {
        let mut out: BTreeMap<_, [u64; MAX_WEIGHTS]> = BTreeMap::new();
        for x in &s.samples {
            let path = s
                .frames(x.path)
                .map(|f| s.names[f as usize].to_string())
                .collect();
            let e = out
                .entry((s.threads[x.thread as usize].clone(), path))
                .or_default();
            for (a, b) in e.iter_mut().zip(x.values) {
                *a += b;
            }
        }
        out
    }

    /// Every step after its parent, as the encoder needs.
    fn well_formed(s: &Samples) {
        for (i, step) in s.paths.iter().enumerate() {
            assert!(step.parent == ROOT || (step.parent as usize) < i, "{s:?}");
        }
    }

    /// Two periods' deltas folded equal the one delta of both: a path that
    /// grew in both is summed, a path, a frame name and a thread new in the
    /// second are added, two threads of one name stay one `thread.name`,
    /// and no path or sample is spelt twice.
    #[test]
    fn two_deltas_folded_equal_one_delta_of_both() {
        let first = trees(
            &["main", "work", "sleep"],
            vec![
                thread(1, "main", &[(ROOT, 0, 1), (0, 1, 5)]),
                thread(2, "pool", &[(ROOT, 1, 2)]),
                thread(3, "pool", &[(ROOT, 1, 4)]),
            ],
        );
        let second = trees(
            &["main", "work", "sleep", "parse"],
            vec![
                thread(1, "main", &[(ROOT, 0, 1), (0, 1, 8), (1, 3, 6), (0, 2, 2)]),
                thread(2, "pool", &[(ROOT, 1, 3)]),
                thread(3, "pool", &[(ROOT, 1, 4), (ROOT, 2, 1)]),
                thread(4, "late", &[(ROOT, 3, 7)]),
            ],
        );
        let mut periods = Keeper::default();
        let mut folded = periods.delta(first);
        let next = periods.delta(second.clone());
        let one = Keeper::default().delta(second);
        folded.fold(next);
        well_formed(&folded);
        assert_eq!(profile(&folded), profile(&one));
        assert_eq!(folded.paths.len(), one.paths.len());
        assert_eq!(folded.names, one.names);
        assert_eq!(folded.period, one.period);
        // The first delta's threads, then the one new name (the later
        // "pool"s found the first's).
        assert_eq!(folded.threads, ["main", "pool", "pool", "late"]);
        assert_eq!(folded.total(0), 1 + 8 + 6 + 2 + 3 + 4 + 1 + 7);
        assert_eq!(folded.total(1), folded.total(0) * 10);
        // Folding nothing changes nothing; folding into nothing is the later.
        let before = profile(&folded);
        folded.fold(Samples::default());
        assert_eq!(profile(&folded), before);
        let mut empty = Samples::default();
        empty.fold(folded.clone());
        assert_eq!(profile(&empty), before);
        assert_eq!(empty.weights, folded.weights);
    }

    /// Three periods folded one after another into the first equal the one
    /// delta of all three, and the bytes held grow with the distinct paths,
    /// not with the periods.
    #[test]
    fn folding_many_periods_holds_each_path_once() {
        let mut k = Keeper::default();
        let at = |n: u64| {
            trees(
                &["main", "work"],
                vec![thread(1, "main", &[(ROOT, 0, n), (0, 1, 2 * n)])],
            )
        };
        let mut folded = k.delta(at(1));
        let size = folded.heap_bytes();
        for n in 2..50 {
            folded.fold(k.delta(at(n)));
        }
        assert_eq!(profile(&folded), profile(&Keeper::default().delta(at(49))));
        assert_eq!(folded.heap_bytes(), size);
        assert_eq!(folded.samples.len(), 2);
    }
}
