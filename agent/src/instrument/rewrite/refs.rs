//! The constant-pool entries the probes use (`Probe`'s methods, `[J`, the
//! counters' bootstrap method), added once per class for the modes on,
//! before any method is edited.

use super::Probes;
use crate::instrument::probe_class;
use profrj_bytecode::ClassFile;

/// Constant-pool entries the probes use, added once per class.
pub(super) struct Refs {
    pub(super) enter: u16,
    pub(super) exit: u16,
    pub(super) unwind: u16,
    pub(super) counters: u16,
    /// `Probe.thread()`, with more than one stripe.
    pub(super) thread: u16,
    /// BootstrapMethods index of `Probe.counters`, where the class may use
    /// dynamic constants (version 55+, first load).
    pub(super) counters_bootstrap: Option<u16>,
    /// BootstrapMethods index of `Probe.stripe`, with more than one stripe
    /// where the counters are dynamic constants.
    pub(super) stripe_bootstrap: Option<u16>,
    pub(super) long_array: u16,
    pub(super) alloc: u16,
    pub(super) alloc_weak: u16,
    pub(super) alloc_any: u16,
    pub(super) cloned: u16,
    pub(super) cloned_from: u16,
    pub(super) park_enter: u16,
    pub(super) park_exit: u16,
    /// `trace`: enter, exit, unwind, throw, catch.
    pub(super) trace: [u16; 5],
}

impl Refs {
    pub(super) fn add(
        class: &mut ClassFile<'_>,
        modes: Probes,
        dynamic_constants: bool,
        stripes: u32,
    ) -> Self {
        let dynamic_ok = dynamic_constants && class.major_version >= 55;
        let mut bootstrap = |(name, desc): (&str, &str)| {
            let cp = &mut class.constant_pool;
            let handle = cp.add_static_method_handle(probe_class::CLASS, name, desc);
            class.add_bootstrap_method(handle)
        };
        let (counters, stripe) = match modes.coverage && dynamic_ok {
            true => (
                bootstrap(probe_class::COUNTERS_BOOTSTRAP),
                (stripes > 1)
                    .then(|| bootstrap(probe_class::STRIPE_BOOTSTRAP))
                    .flatten(),
            ),
            false => (None, None),
        };
        let cp = &mut class.constant_pool;
        let mut r = Refs {
            enter: 0,
            exit: 0,
            unwind: 0,
            counters: 0,
            thread: 0,
            counters_bootstrap: None,
            stripe_bootstrap: None,
            long_array: 0,
            alloc: 0,
            alloc_weak: 0,
            alloc_any: 0,
            cloned: 0,
            cloned_from: 0,
            park_enter: 0,
            park_exit: 0,
            trace: [0; 5],
        };
        if modes.trace {
            use probe_class::*;
            let methods = [
                TRACE_ENTER_METHOD,
                TRACE_EXIT_METHOD,
                TRACE_UNWIND_METHOD,
                TRACE_THROW_METHOD,
                TRACE_CATCH_METHOD,
            ];
            for (r, (name, desc)) in r.trace.iter_mut().zip(methods) {
                *r = cp.add_method_ref(CLASS, name, desc);
            }
        }
        if modes.park {
            let (name, desc) = probe_class::PARK_ENTER_METHOD;
            r.park_enter = cp.add_method_ref(probe_class::CLASS, name, desc);
            let (name, desc) = probe_class::PARK_EXIT_METHOD;
            r.park_exit = cp.add_method_ref(probe_class::CLASS, name, desc);
        }
        if modes.profile {
            r.enter = cp.add_method_ref(probe_class::CLASS, "enter", "(I)V");
            r.exit = cp.add_method_ref(probe_class::CLASS, "exit", "(I)V");
            r.unwind = cp.add_method_ref(probe_class::CLASS, "unwind", "(I)V");
        }
        if modes.coverage {
            let (name, desc) = probe_class::COUNTERS_METHOD;
            r.counters = cp.add_method_ref(probe_class::CLASS, name, desc);
            r.counters_bootstrap = counters;
            r.stripe_bootstrap = stripe;
            if stripes > 1 {
                let (name, desc) = probe_class::THREAD_METHOD;
                r.thread = cp.add_method_ref(probe_class::CLASS, name, desc);
            }
            r.long_array = cp.class_index("[J");
        }
        if modes.memory {
            let class = probe_class::CLASS;
            let (name, desc) = probe_class::ALLOC_METHOD;
            r.alloc = cp.add_method_ref(class, name, desc);
            let (name, desc) = probe_class::ALLOC_WEAK_METHOD;
            r.alloc_weak = cp.add_method_ref(class, name, desc);
            let (name, desc) = probe_class::ALLOC_ANY_METHOD;
            r.alloc_any = cp.add_method_ref(class, name, desc);
            let (name, desc) = probe_class::CLONED_METHOD;
            r.cloned = cp.add_method_ref(class, name, desc);
            let (name, desc) = probe_class::CLONED_FROM_METHOD;
            r.cloned_from = cp.add_method_ref(class, name, desc);
        }
        r
    }
}
