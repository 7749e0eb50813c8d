//! `profrj attach|dump|stop|resume|status PID`: commands to the agent inside a
//! running JVM. Each one loads libprofrj.so through the attach protocol; the
//! agent runs the command and writes its answer to a reply file we read back,
//! so its message (not just a return code) reaches the user.
//!
//! The reply file lives in a directory made for it alone in the JVM's /tmp
//! (resolved inside the JVM's root), as the JVM's user (the agent runs as
//! that user and writes it), mode 0700, removed on every path; it is read
//! only if it is a regular file of the JVM's user, never through a link, at
//! most 1 MiB of it, and printed with its control characters escaped.

use crate::attach::{as_target_user, Dir, Target};
use crate::error::CliError;
use crate::printable::printable;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The most of a reply file read back.
const MAX_REPLY: u64 = 1 << 20;

#[derive(clap::Args)]
pub struct PidArgs {
    /// Process id of the JVM.
    pub pid: i32,
    /// libprofrj.so to load (default: $PROFRJ_AGENT, else next to this program).
    #[arg(long, value_name = "PATH")]
    pub agent: Option<PathBuf>,
    /// How long the whole exchange with the JVM may take (starting its
    /// attach listener, connecting, its answer), e.g. 10s, 500ms.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub timeout: Duration,
}

/// `10s`, `500ms`, `2m`.
fn parse_duration(s: &str) -> Result<Duration, CliError> {
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().map_err(|_| {
        CliError::Attach(format!(
            "'{s}': a whole number with a unit, e.g. 10s or 500ms"
        ))
    })?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" | "" => Duration::from_secs(n),
        "m" => Duration::from_secs(n * 60),
        _ => return Err(CliError::Attach(format!("'{s}': unit ms, s or m"))),
    };
    if d.is_zero() {
        return Err(CliError::Attach("the timeout must be more than 0".into()));
    }
    Ok(d)
}

#[derive(clap::Args)]
pub struct AttachArgs {
    #[command(flatten)]
    pub target: PidArgs,
    /// Agent options, as after -agentpath:libprofrj.so= (e.g. sampling,interval=5ms,file=/tmp/app-%t.xml).
    #[arg(default_value = "sampling")]
    pub options: String,
}

#[derive(clap::Args)]
pub struct DumpArgs {
    #[command(flatten)]
    pub target: PidArgs,
    /// Write this snapshot to PATH (as the JVM sees it; placeholders %p %t %n) instead of the session's file.
    #[arg(long, value_name = "PATH")]
    pub file: Option<String>,
}

#[derive(clap::Args)]
pub struct HeapDumpArgs {
    /// Process id of the JVM.
    pub pid: i32,
    /// Where the dump goes, as the JVM sees the path (placeholders %p %t %n;
    /// .gz is added with --gz). Default: profrj-<pid>-<n>.hprof in the JVM's
    /// working directory.
    pub file: Option<String>,
    /// Every object in the heap, garbage too (default: the objects alive
    /// after a full GC).
    #[arg(long)]
    pub all: bool,
    /// Gzip the dump.
    #[arg(long)]
    pub gz: bool,
    /// libprofrj.so to load (default: $PROFRJ_AGENT, else next to this program).
    #[arg(long, value_name = "PATH")]
    pub agent: Option<PathBuf>,
    /// How long the whole exchange may take: the dump is written before the
    /// JVM answers (a 4 GB heap takes tens of seconds).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub timeout: Duration,
}

impl HeapDumpArgs {
    /// The command's option string and the target.
    pub fn command(&self) -> Result<(PidArgs, String), CliError> {
        let mut options = String::from("heapdump");
        if let Some(f) = &self.file {
            if f.contains(',') {
                return Err(CliError::Attach(format!(
                    "'{f}': the agent's options are separated by commas, so a heap dump path cannot hold one"
                )));
            }
            options.push_str(&format!(",heapfile={f}"));
        }
        if self.all {
            options.push_str(",heapkind=all");
        }
        if self.gz {
            options.push_str(",heapgz=on");
        }
        let target = PidArgs {
            pid: self.pid,
            agent: self.agent.clone(),
            timeout: self.timeout,
        };
        Ok((target, options))
    }
}

/// Sends `options` (a command and its options) to the agent in `args.pid`.
pub fn send(args: &PidArgs, options: &str) -> Result<(), CliError> {
    let target = Target::find(args.pid, args.timeout)?;
    let library = agent_library(args.agent.as_ref())?;
    let tmp = target
        .tmp()
        .map_err(|e| CliError::Attach(format!("cannot reach {e}")))?;
    let library = if target.foreign_root() {
        copy_into(&target, &tmp, &library)?
    } else {
        library.display().to_string()
    };
    let (uid, gid) = target.owner();
    // The directory is dropped (removed with the reply) on every path below.
    let reply_dir = as_target_user(uid, gid, || tmp.private_dir()).map_err(|e| {
        CliError::Attach(format!(
            "cannot make a reply directory in the JVM's /tmp: {e}"
        ))
    })?;
    let full = format!(
        "{options}{}reply={}",
        if options.is_empty() { "" } else { "," },
        reply_dir.dir.jvm_path("reply")
    );
    let code = target.load_agent(&library, &full)?;
    let text = as_target_user(uid, gid, || {
        Ok(reply_dir.dir.read_owned("reply", uid, MAX_REPLY))
    })
    .map_err(|e| CliError::Attach(e.to_string()))
    .and_then(|r| r);
    match text {
        Ok(bytes) => {
            let text = printable(&String::from_utf8_lossy(&bytes));
            let (status, message) = text.split_once('\n').unwrap_or((&text, ""));
            let message = message.trim();
            if status == "ok" {
                println!("{message}");
                Ok(())
            } else {
                Err(CliError::Agent(message.to_owned()))
            }
        }
        Err(_) if code == 0 => {
            println!("agent loaded (return code 0)");
            Ok(())
        }
        Err(_) => Err(CliError::Attach(format!(
            "the agent failed with return code {code}; its message is on the JVM's stderr"
        ))),
    }
}

/// libprofrj.so: `--agent`, else $PROFRJ_AGENT, else next to this executable.
fn agent_library(explicit: Option<&PathBuf>) -> Result<PathBuf, CliError> {
    let path = match explicit {
        Some(p) => p.clone(),
        None => match std::env::var_os("PROFRJ_AGENT") {
            Some(p) => PathBuf::from(p),
            None => std::env::current_exe()
                .map_err(|e| CliError::Attach(format!("cannot locate this program: {e}")))?
                .with_file_name("libprofrj.so"),
        },
    };
    let path = path.canonicalize().map_err(|e| {
        CliError::Attach(format!(
            "agent library {}: {e} (build it with `cargo build --release`, or pass --agent PATH)",
            path.display()
        ))
    })?;
    Ok(path)
}

/// A JVM in another mount namespace cannot see our file system: put a copy of
/// the library in its /tmp and load that. The copy lives in
/// `/tmp/.profrj-lib-<uid>/` (a stable path, so later commands reach the same
/// agent), made as the JVM's user with mode 0700 (both resolved inside the
/// JVM's root); the directory and the file are used only if they are the
/// JVM's user's and not links, and a new copy is written to a fresh name and
/// renamed into place.
fn copy_into(target: &Target, tmp: &Dir, library: &Path) -> Result<String, CliError> {
    let (uid, gid) = target.owner();
    let dir_name = format!(".profrj-lib-{uid}");
    let ours = std::fs::read(library)
        .map_err(|e| CliError::Attach(format!("{}: {e}", library.display())))?;
    let shown = tmp.jvm_path(&dir_name);
    let dir = as_target_user(uid, gid, || {
        match tmp.make_dir(&dir_name, 0o700) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        tmp.sub_dir(&dir_name)
    })
    .map_err(|e| {
        CliError::Attach(format!(
            "cannot make the JVM's {shown} (a directory, not a link): {e}"
        ))
    })?;
    check_private_dir(&dir, &shown, uid)?;
    let inside = dir.jvm_path("libprofrj.so");
    let current = as_target_user(uid, gid, || {
        Ok(dir.read_owned("libprofrj.so", uid, ours.len() as u64 + 1))
    });
    if current.ok().and_then(|r| r.ok()).as_deref() == Some(&ours[..]) {
        return Ok(inside);
    }
    as_target_user(uid, gid, || Ok(dir.write_atomically("libprofrj.so", &ours)))
        .map_err(|e| CliError::Attach(e.to_string()))
        .and_then(|r| r)
        .map_err(|e| CliError::Attach(format!("copying the agent into the JVM's /tmp: {e}")))?;
    Ok(inside)
}

/// `dir` must be a directory owned by `uid`, closed to others.
fn check_private_dir(dir: &Dir, shown: &str, uid: u32) -> Result<(), CliError> {
    use std::os::unix::fs::MetadataExt;
    let meta = dir
        .metadata()
        .map_err(|e| CliError::Attach(format!("{shown}: {e}")))?;
    if !meta.file_type().is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(CliError::Attach(format!(
            "the JVM's {shown} is not a directory of uid {uid} closed to others; refusing to put the agent there"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").ok(), Some(Duration::from_secs(10)));
        assert_eq!(
            parse_duration("250ms").ok(),
            Some(Duration::from_millis(250))
        );
        assert_eq!(parse_duration("2m").ok(), Some(Duration::from_secs(120)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("3h").is_err());
    }
}
