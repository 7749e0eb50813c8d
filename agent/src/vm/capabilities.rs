//! Capabilities asked for by parts of the agent (each mode, the
//! instrumenter) and added to an environment in one AddCapabilities call.

use super::sys::{Capability, JvmtiCapabilities};

/// The capabilities wanted so far, and what this JVM can grant.
pub struct Capabilities {
    /// What this JVM can grant.
    pub potential: JvmtiCapabilities,
    wanted: JvmtiCapabilities,
}

impl Capabilities {
    pub fn new(potential: JvmtiCapabilities) -> Self {
        Self {
            potential,
            wanted: Default::default(),
        }
    }

    /// Asks for `cap`; `false` when this JVM cannot grant it.
    pub fn want(&mut self, cap: Capability) -> bool {
        if !self.potential.has(cap) {
            return false;
        }
        self.wanted = self.wanted.with(cap);
        true
    }

    /// Asks for `cap`, which `mode` cannot run without.
    pub fn need(&mut self, cap: Capability, mode: &str) -> Result<(), super::VmError> {
        if self.want(cap) {
            Ok(())
        } else {
            Err(super::VmError::Missing(format!(
                "this JVM does not offer the JVMTI capability {cap:?}, which {mode} needs"
            )))
        }
    }

    pub fn wanted(&self) -> JvmtiCapabilities {
        self.wanted
    }
}
