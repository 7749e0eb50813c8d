//! profrj JVMTI agent.
