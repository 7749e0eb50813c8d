use super::*;
use crate::delta::{Keeper, Sample};
use crate::model::{types, CallTrees, Node, ThreadTree, MAX_WEIGHTS};

/// Tables start with their zero value; a repeated frame, stack and
/// thread are written once; a weight without samples has no profile.
#[test]
fn dictionary_is_shared_and_deduplicated() {
    let mut samples = Samples {
        weights: &[types::CONTENTIONS, types::DELAY],
        period: None,
        names: vec!["a".into(), "b".into()],
        threads: vec!["t1".into(), "t1".into()],
        ..Samples::default()
    };
    for (thread, v) in [(0, 1), (1, 2)] {
        let path = samples.push_path(&[0, 1]);
        samples.samples.push(Sample {
            thread,
            path,
            values: [v, 0, 0],
        });
    }
    let mut r = Request::new();
    r.add(&samples, 1, 2);
    assert_eq!((r.profile_count, r.sample_count), (1, 1));
    assert_eq!(r.functions.len(), 2);
    assert_eq!(r.stacks.len(), 1);
    assert_eq!(r.attributes.len(), 1);
    assert_eq!(&*r.strings[0], "");
    let bytes = r.finish(&[Attribute::str("service.name", "x")], ("profrj", "0"));
    assert_eq!(bytes, reference(&[(&samples, 1, 2)]));
}

/// With lines, one method on two lines is two locations of its one
/// function, each Line with its line; a frame without one has no line
/// field; frames of one name and line share a location.
#[test]
fn lines_make_locations_of_one_function() {
    let mut samples = Samples {
        weights: &[types::SAMPLES],
        names: vec!["p.A.f()".into(), "p.A.f()".into(), "p.A.main()".into()],
        lines: vec![12, 13],
        threads: vec!["main".into()],
        ..Samples::default()
    };
    for leaf in [0, 1, 0] {
        let path = samples.push_path(&[2, leaf]);
        samples.samples.push(Sample {
            thread: 0,
            path,
            values: [1, 0, 0],
        });
    }
    let mut r = Request::new();
    r.add(&samples, 1, 2);
    assert_eq!(r.functions.len(), 2);
    // Met leaf first: f():12 (function 1), main() without a line
    // (function 2), then f():13.
    assert_eq!(r.location_list, [(1, 12), (2, 0), (1, 13)]);
    assert_eq!(r.stacks.len(), 2);
    let bytes = r.finish(&[Attribute::str("service.name", "x")], ("profrj", "0"));
    assert_eq!(bytes, reference(&[(&samples, 1, 2)]));
    // A location with a line: Line { function_index: 1, line: 12 }.
    let mut line = Msg::default();
    line.int(field::LINE_FUNCTION_INDEX, 1);
    line.int(field::LINE_LINE, 12);
    let mut loc = Msg::default();
    loc.msg(field::LOCATION_LINES, &line);
    let mut entry = Msg::default();
    entry.msg(field::DICT_LOCATION_TABLE, &loc);
    assert!(bytes.windows(entry.buf.len()).any(|w| w == entry.buf));
}

/// The streamed request is, byte for byte, what the encoder that held it
/// whole wrote (kept below as `Held`), for models with what makes the
/// tables share: threads of one name, names of one text under two ids
/// (with lines: one function on two lines), `[no Java frame]`, several modes, periods, a deep chain, and a second
/// period's deltas.
#[test]
fn streamed_bytes_equal_the_held_encoders() {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    for round in 0..6 {
        let modes: [Mode; 3] = [
            (
                &[types::SAMPLES, types::RUNNABLE_SAMPLES],
                Some((types::CPU_PERIOD, 10_000_000)),
            ),
            (&[types::CALLS, types::WALL, types::CPU], None),
            (&[types::CONTENTIONS, types::DELAY], None),
        ];
        let mut keepers: Vec<Keeper> = modes.iter().map(|_| Keeper::default()).collect();
        let mut trees: Vec<CallTrees> = modes
            .iter()
            .map(|&(weights, period)| CallTrees {
                weights,
                period,
                names: ["a.A.run()", "b.B.f()", "a.A.run()", "c.C.g()", "d()", ""]
                    .iter()
                    .map(|s| (*s).into())
                    .collect(),
                // Odd rounds with lines: a.A.run() on two lines (ids 0 and
                // 2), a table shorter than the names.
                lines: match round % 2 {
                    0 => Vec::new(),
                    _ => vec![12, 7, 13, 7],
                },
                threads: Vec::new(),
            })
            .collect();
        for period in 0..2u64 {
            let mut held = Vec::new();
            let mut streamed = Request::new();
            for (m, t) in trees.iter_mut().enumerate() {
                grow(t, round, &mut next);
                let samples = keepers[m].delta(t.clone());
                streamed.add(&samples, 100 + period, 7);
                held.push(samples);
            }
            let models: Vec<(&Samples, u64, u64)> =
                held.iter().map(|s| (s, 100 + period, 7)).collect();
            let want = reference(&models);
            let got = streamed.finish(&resource(), ("profrj", "1.2"));
            assert_eq!(got, want, "round {round}, period {period}");
        }
    }
}

/// A mode's weights and its period.
type Mode = (&'static [ValueType], Option<(ValueType, i64)>);

/// Adds threads and nodes to `t` (and figures to old nodes): more threads
/// of one name, a deep chain in round 0.
fn grow(t: &mut CallTrees, round: u64, next: &mut impl FnMut(u64) -> u64) {
    let names = t.names.len() as u64;
    for k in 0..1 + next(3) {
        let key = t.threads.len() as u64 + k;
        t.threads.push(ThreadTree {
            key,
            name: format!("w{}", next(2)),
            nodes: Vec::new(),
        });
    }
    for th in &mut t.threads {
        for n in &mut th.nodes {
            n.own[0] += next(2);
        }
        let size = if round == 0 { 300 } else { 5 + next(40) };
        for i in 0..size {
            let len = th.nodes.len() as u64;
            let parent = match (round, len) {
                (_, 0) => ROOT,
                (0, _) => len as u32 - 1,
                _ if next(4) == 0 => ROOT,
                _ => next(len) as u32,
            };
            let name = match next(10) {
                0 => NO_JAVA_FRAME_ID,
                _ => next(names + 1) as u32, // one past the names: ""
            };
            let mut own = [0; MAX_WEIGHTS];
            for o in own.iter_mut().take(t.weights.len()) {
                *o = if i % 3 == 0 { 0 } else { next(1 << 40) };
            }
            th.nodes.push(Node { parent, name, own });
        }
    }
}

fn resource() -> Vec<Attribute> {
    vec![
        Attribute::str("service.name", "shop"),
        Attribute {
            key: "process.pid".into(),
            value: Value::Int(4242),
        },
    ]
}

/// The bytes of the encoder that held the whole request (before it was
/// streamed), for `models` (samples, start, duration).
fn reference(models: &[(&Samples, u64, u64)]) -> Vec<u8> {
    let mut h = Held::default();
    h.string("");
    let zero = Msg::default();
    h.function_table.msg(field::DICT_FUNCTION_TABLE, &zero);
    h.stack_table.msg(field::DICT_STACK_TABLE, &zero);
    h.attribute_table.msg(field::DICT_ATTRIBUTE_TABLE, &zero);
    for (s, start, duration) in models {
        h.add(s, *start, *duration);
    }
    let resource = if models.len() == 1 {
        vec![Attribute::str("service.name", "x")]
    } else {
        resource()
    };
    let scope = if models.len() == 1 {
        ("profrj", "0")
    } else {
        ("profrj", "1.2")
    };
    h.finish(&resource, scope)
}

/// The old encoder: every table and profile held as bytes, stacks as
/// location lists.
#[derive(Default)]
struct Held {
    strings: Vec<Box<str>>,
    string_index: HashMap<Box<str>, u32>,
    functions: HashMap<u32, u32>,
    function_table: Msg,
    locations: Vec<(u32, u32)>,
    stacks: HashMap<Vec<u64>, u32>,
    stack_table: Msg,
    attributes: HashMap<u32, u32>,
    attribute_table: Msg,
    profiles: Msg,
}

impl Held {
    fn string(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.string_index.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.into());
        self.string_index.insert(s.into(), i);
        i
    }

    fn location(&mut self, name: &str, line: u32) -> u32 {
        let s = self.string(name);
        let next = self.functions.len() as u32 + 1;
        let function = *self.functions.entry(s).or_insert_with(|| {
            let mut f = Msg::default();
            f.int(field::FUNCTION_NAME, s as u64);
            self.function_table.msg(field::DICT_FUNCTION_TABLE, &f);
            next
        });
        match self.locations.iter().position(|&l| l == (function, line)) {
            Some(i) => i as u32 + 1,
            None => {
                self.locations.push((function, line));
                self.locations.len() as u32
            }
        }
    }

    fn stack(&mut self, locations: Vec<u64>) -> u32 {
        let next = self.stacks.len() as u32 + 1;
        let table = &mut self.stack_table;
        *self.stacks.entry(locations).or_insert_with_key(|l| {
            let mut s = Msg::default();
            s.packed(field::STACK_LOCATION_INDICES, l);
            table.msg(field::DICT_STACK_TABLE, &s);
            next
        })
    }

    fn thread_attribute(&mut self, name: &str) -> u32 {
        let key = self.string(THREAD_NAME);
        let value = self.string(name);
        let next = self.attributes.len() as u32 + 1;
        if let Some(&a) = self.attributes.get(&value) {
            return a;
        }
        let mut v = Msg::default();
        v.bytes(field::ANY_VALUE_STRING, name.as_bytes());
        let mut a = Msg::default();
        a.int(field::KEY_VALUE_AND_UNIT_KEY, key as u64);
        a.msg(field::KEY_VALUE_AND_UNIT_VALUE, &v);
        self.attribute_table.msg(field::DICT_ATTRIBUTE_TABLE, &a);
        self.attributes.insert(value, next);
        next
    }

    fn value_type(&mut self, (ty, unit): ValueType) -> Msg {
        let mut m = Msg::default();
        m.int(field::VALUE_TYPE_TYPE, self.string(ty) as u64);
        m.int(field::VALUE_TYPE_UNIT, self.string(unit) as u64);
        m
    }

    fn add(&mut self, samples: &Samples, start_unix_ns: u64, duration_ns: u64) {
        let mut keys = Vec::new();
        for s in &samples.samples {
            let locations: Vec<u64> = samples
                .frames(s.path)
                .map(|f| {
                    let name = match f {
                        NO_JAVA_FRAME_ID => NO_JAVA_FRAME,
                        f => samples.names.get(f as usize).map_or("", |n| &**n),
                    };
                    let line = samples.lines.get(f as usize).copied().unwrap_or(0);
                    self.location(name, line) as u64
                })
                .collect();
            let stack = self.stack(locations);
            let name = samples.threads.get(s.thread as usize).map_or("", |s| s);
            keys.push((stack, self.thread_attribute(name)));
        }
        for (w, &ty) in samples.weights.iter().enumerate() {
            let mut sums: Vec<((u32, u32), u64)> = Vec::new();
            for (s, &key) in samples.samples.iter().zip(&keys) {
                let v = s.values[w];
                match sums.iter_mut().find(|(k, _)| *k == key) {
                    _ if v == 0 => {}
                    Some(sum) => sum.1 = sum.1.saturating_add(v),
                    None => sums.push((key, v)),
                }
            }
            if sums.is_empty() {
                continue;
            }
            let mut p = Msg::default();
            let vt = self.value_type(ty);
            p.msg(field::PROFILE_SAMPLE_TYPE, &vt);
            for ((stack, attr), v) in &sums {
                let mut s = Msg::default();
                s.int(field::SAMPLE_STACK_INDEX, *stack as u64);
                s.packed(field::SAMPLE_ATTRIBUTE_INDICES, &[*attr as u64]);
                s.packed(field::SAMPLE_VALUES, &[(*v).min(i64::MAX as u64)]);
                p.msg(field::PROFILE_SAMPLES, &s);
            }
            p.fixed64(field::PROFILE_TIME_UNIX_NANO, start_unix_ns);
            p.int(field::PROFILE_DURATION_NANO, duration_ns);
            if let Some((period_type, period)) = samples.period {
                let pt = self.value_type(period_type);
                p.msg(field::PROFILE_PERIOD_TYPE, &pt);
                p.int(field::PROFILE_PERIOD, period.max(0) as u64);
            }
            self.profiles.msg(field::SCOPE_PROFILES_PROFILES, &p);
        }
    }

    fn finish(self, resource: &[Attribute], (name, version): (&str, &str)) -> Vec<u8> {
        let mut attrs = Msg::default();
        for a in resource {
            let mut v = Msg::default();
            match &a.value {
                Value::Str(s) => v.bytes(field::ANY_VALUE_STRING, s.as_bytes()),
                Value::Int(i) => v.int(field::ANY_VALUE_INT, *i as u64),
            }
            let mut kv = Msg::default();
            kv.bytes(field::KEY_VALUE_KEY, a.key.as_bytes());
            kv.msg(field::KEY_VALUE_VALUE, &v);
            attrs.msg(field::RESOURCE_ATTRIBUTES, &kv);
        }
        let mut scope = Msg::default();
        scope.bytes(field::SCOPE_NAME, name.as_bytes());
        scope.bytes(field::SCOPE_VERSION, version.as_bytes());
        let mut scope_profiles = Msg::default();
        scope_profiles.msg(field::SCOPE_PROFILES_SCOPE, &scope);
        scope_profiles.buf.extend_from_slice(&self.profiles.buf);
        let mut resource_profiles = Msg::default();
        resource_profiles.msg(field::RESOURCE_PROFILES_RESOURCE, &attrs);
        resource_profiles.msg(field::RESOURCE_PROFILES_SCOPE_PROFILES, &scope_profiles);
        let mut dict = Msg::default();
        let zero = Msg::default();
        dict.msg(field::DICT_MAPPING_TABLE, &zero);
        dict.msg(field::DICT_LOCATION_TABLE, &zero);
        for &(f, l) in &self.locations {
            let mut line = Msg::default();
            line.int(field::LINE_FUNCTION_INDEX, u64::from(f));
            line.int(field::LINE_LINE, u64::from(l));
            let mut loc = Msg::default();
            loc.msg(field::LOCATION_LINES, &line);
            dict.msg(field::DICT_LOCATION_TABLE, &loc);
        }
        dict.buf.extend_from_slice(&self.function_table.buf);
        dict.msg(field::DICT_LINK_TABLE, &zero);
        for s in &self.strings {
            dict.bytes(field::DICT_STRING_TABLE, s.as_bytes());
        }
        dict.buf.extend_from_slice(&self.attribute_table.buf);
        dict.buf.extend_from_slice(&self.stack_table.buf);
        let mut request = Msg::default();
        request.msg(field::REQUEST_RESOURCE_PROFILES, &resource_profiles);
        request.msg(field::REQUEST_DICTIONARY, &dict);
        request.buf
    }
}
