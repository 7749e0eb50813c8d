//! The events, each into `b` (type id first; the writer adds the size).
//! Apart from the pools: an event holds only keys into them, and its
//! fields' order is the one [`classes`](super::classes()) declares.

use super::id;
use crate::encode::Buf;

/// A sample of a running thread (`state`: a [`super::thread_state`] key).
pub fn execution_sample(b: &mut Buf, ticks: u64, thread: u64, stack: u64, state: u64) {
    b.varint(id::EXECUTION_SAMPLE)
        .varint(ticks)
        .varint(thread)
        .varint(stack)
        .varint(state);
}

/// `samples` wall-clock samples of a thread that was not running.
pub fn wall_clock_sample(
    b: &mut Buf,
    ticks: u64,
    (thread, stack, state): (u64, u64, u64),
    samples: u32,
    span_ticks: u64,
) {
    b.varint(id::WALL_CLOCK_SAMPLE)
        .varint(ticks)
        .varint(thread)
        .varint(stack)
        .varint(state)
        .varint(samples as u64)
        .varint(span_ticks);
}

/// A sampled allocation of an object of `size` bytes standing for
/// `weight` bytes.
pub fn allocation_sample(
    b: &mut Buf,
    ticks: u64,
    (thread, stack, class): (u64, u64, u64),
    weight: u64,
    size: u64,
) {
    b.varint(id::ALLOCATION_SAMPLE)
        .varint(ticks)
        .varint(thread)
        .varint(stack)
        .varint(class)
        .varint(weight)
        .varint(size);
}

/// A contended `synchronized` entry: waited `duration` ticks from `ticks`.
pub fn monitor_enter(
    b: &mut Buf,
    (ticks, duration): (u64, u64),
    (thread, stack, class): (u64, u64, u64),
    previous_owner: u64,
    address: u64,
) {
    b.varint(id::MONITOR_ENTER)
        .varint(ticks)
        .varint(duration)
        .varint(thread)
        .varint(stack)
        .varint(class)
        .varint(previous_owner)
        .varint(address);
}

/// A park for a lock (no timeout known: `timeout` and `until` are
/// `Long.MIN_VALUE`, which the JDK writes for "none").
pub fn thread_park(
    b: &mut Buf,
    (ticks, duration): (u64, u64),
    (thread, stack, class): (u64, u64, u64),
    address: u64,
) {
    b.varint(id::THREAD_PARK)
        .varint(ticks)
        .varint(duration)
        .varint(thread)
        .varint(stack)
        .varint(class)
        .long(i64::MIN)
        .long(i64::MIN)
        .varint(address);
}

/// What `jdk.JVMInformation` holds.
#[derive(Clone, Debug, Default)]
pub struct JvmInfo {
    /// The JVM's name (`OpenJDK 64-Bit Server VM`).
    pub name: String,
    /// Its version line (`java.vm.info`'s).
    pub version: String,
    /// The JVM's options, space-separated.
    pub jvm_arguments: String,
    /// The main class or jar and its arguments.
    pub java_arguments: String,
    /// When the JVM started, in milliseconds since the Unix epoch.
    pub start_millis: u64,
    /// The JVM's process id.
    pub pid: u64,
}

/// `jdk.JVMInformation`: which JVM recorded, with which arguments
/// (what `jfr summary` and JMC show first).
pub fn jvm_information(b: &mut Buf, ticks: u64, i: &JvmInfo) {
    b.varint(id::JVM_INFORMATION)
        .varint(ticks)
        .string(&i.name)
        .string(&i.version)
        .string(&i.jvm_arguments)
        .string("")
        .string(&i.java_arguments)
        .varint(i.start_millis)
        .varint(i.pid);
}

/// `jdk.OSInformation`: the operating system's version line.
pub fn os_information(b: &mut Buf, ticks: u64, version: &str) {
    b.varint(id::OS_INFORMATION).varint(ticks).string(version);
}

/// What `jdk.CPUInformation` holds.
#[derive(Clone, Debug, Default)]
pub struct CpuInfo {
    /// The CPU's model name.
    pub cpu: String,
    /// A longer description of the CPU.
    pub description: String,
    /// Physical packages.
    pub sockets: u32,
    /// Cores over all sockets.
    pub cores: u32,
    /// Hardware threads (what the scheduler can run at once).
    pub hw_threads: u32,
}

/// `jdk.CPUInformation`: the machine the samples were taken on.
pub fn cpu_information(b: &mut Buf, ticks: u64, c: &CpuInfo) {
    b.varint(id::CPU_INFORMATION)
        .varint(ticks)
        .string(&c.cpu)
        .string(&c.description)
        .varint(c.sockets as u64)
        .varint(c.cores as u64)
        .varint(c.hw_threads as u64);
}

/// What `jdk.ActiveRecording` holds.
#[derive(Clone, Debug, Default)]
pub struct RecordingInfo {
    /// The recording's id (unique within its JVM).
    pub id: u64,
    /// Its name, as `jfr summary` lists it.
    pub name: String,
    /// The file it is written to.
    pub destination: String,
    /// When it started, in milliseconds since the Unix epoch.
    pub start_millis: u64,
    /// How long it ran, in milliseconds.
    pub duration_millis: u64,
}

/// `jdk.ActiveRecording`: the recording itself, so the JDK's tools
/// name it.
pub fn active_recording(b: &mut Buf, ticks: u64, r: &RecordingInfo) {
    b.varint(id::ACTIVE_RECORDING)
        .varint(ticks)
        .varint(r.id)
        .string(&r.name)
        .string(&r.destination)
        .varint(0)
        .varint(0)
        .varint(r.start_millis)
        .varint(r.duration_millis);
}
