//! What the information events say of the JVM, the OS and the CPU, read
//! once when the recording starts (JVMTI system properties on a JVM thread;
//! `/proc` and `/etc/os-release` for the rest), as the JDK's own events say
//! it, so JMC's "JVM Information" and "System" pages fill in.

use crate::vm::Jvmti;
use profrj_jfr::schema::events::{CpuInfo, JvmInfo};

pub struct Info {
    pub jvm: JvmInfo,
    pub os: String,
    pub cpu: CpuInfo,
}

impl Info {
    pub fn read(jvmti: Jvmti) -> Info {
        let prop = |k: &str| jvmti.system_property(k).unwrap_or_default();
        // JVMTI sees the VM's own properties (not os.name, java.runtime.version).
        let version = format!(
            "{} ({}) for {}-{}, {}; recorded by profrj {}",
            prop("java.vm.name"),
            prop("java.vm.version"),
            std::env::consts::OS,
            std::env::consts::ARCH,
            prop("java.vm.info"),
            env!("CARGO_PKG_VERSION")
        );
        let (jvm_arguments, _) = command_line();
        Info {
            jvm: JvmInfo {
                name: prop("java.vm.name"),
                version,
                jvm_arguments,
                java_arguments: prop("sun.java.command"),
                start_millis: process_start_millis().unwrap_or(0),
                pid: std::process::id() as u64,
            },
            os: os_version(),
            cpu: cpu_info(),
        }
    }
}

/// The JVM's options from its command line: the arguments after the
/// launcher up to the main class or `-jar` (a class path's value included).
fn command_line() -> (String, Vec<String>) {
    let raw = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    let args: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let mut options = Vec::new();
    let mut i = 1;
    while i < args.len() {
        let a = &args[i];
        if !a.starts_with('-') || a == "-jar" || a == "--module" || a == "-m" {
            break;
        }
        options.push(a.clone());
        if matches!(
            a.as_str(),
            "-cp" | "-classpath" | "--class-path" | "-p" | "--module-path"
        ) {
            if let Some(v) = args.get(i + 1) {
                options.push(v.clone());
            }
            i += 1;
        }
        i += 1;
    }
    (options.join(" "), args)
}

/// When the process started, ms since the epoch (`/proc/self/stat`'s start
/// time after boot, plus the boot time of `/proc/stat`).
fn process_start_millis() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command's closing parenthesis; start time is the 22nd.
    let rest = &stat[stat.rfind(')')? + 2..];
    let ticks: u64 = rest.split(' ').nth(19)?.parse().ok()?;
    let boot: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(boot * 1000 + ticks * 1000 / hz)
}

fn os_version() -> String {
    let pretty = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_owned())
        })
        .unwrap_or_default();
    // SAFETY: utsname is plain data; uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: a live, writable utsname.
    let uname = if unsafe { libc::uname(&mut u) } == 0 {
        let f = |s: &[libc::c_char]| {
            // SAFETY: uname NUL-terminates each field within its array.
            unsafe { std::ffi::CStr::from_ptr(s.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        };
        format!(
            "{} {} {} {}",
            f(&u.sysname),
            f(&u.release),
            f(&u.version),
            f(&u.machine)
        )
    } else {
        String::new()
    };
    format!("{pretty}\nuname: {uname}")
}

fn cpu_info() -> CpuInfo {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = text
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_default();
    let mut sockets = std::collections::HashSet::new();
    let mut cores = std::collections::HashSet::new();
    let mut socket = String::new();
    for l in text.lines() {
        if let Some((k, v)) = l.split_once(':') {
            match k.trim() {
                "physical id" => {
                    socket = v.trim().to_owned();
                    sockets.insert(socket.clone());
                }
                "core id" => {
                    cores.insert((socket.clone(), v.trim().to_owned()));
                }
                _ => {}
            }
        }
    }
    // SAFETY: sysconf has no preconditions.
    let hw = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as u32;
    CpuInfo {
        cpu: format!("{} {}", std::env::consts::ARCH, model)
            .trim()
            .to_owned(),
        description: model,
        sockets: sockets.len().max(1) as u32,
        cores: if cores.is_empty() {
            hw
        } else {
            cores.len() as u32
        },
        hw_threads: hw,
    }
}
