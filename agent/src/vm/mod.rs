//! Everything that touches the VM through raw pointers: JVMTI and JNI bindings,
//! their safe wrappers, and the panic trampoline every callback goes through.

mod guard;
mod jni;
mod jvmti;
pub mod sys;

pub use guard::{guard, install_panic_hook};
pub use jni::Jni;
pub use jvmti::Jvmti;
pub use sys::{jthread, JvmtiEvent};
