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
mod option_tests;

/// Who allocated the objects a heap dump holds: `memory`'s counters, the
/// only mode that follows objects to the heap (empty when it never ran).
pub fn heap_origins(host: &crate::host::Host) -> &'static dyn crate::heap_dump::Origins {
    host.state::<memory::Lifetime>()
}
