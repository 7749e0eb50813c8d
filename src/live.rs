//! `profrj attach|dump|stop|resume|status PID`: commands to the agent inside a
//! running JVM. Each one loads libprofrj.so through the attach protocol; the
//! agent runs the command and writes its answer to a reply file we read back,
//! so its message (not just a return code) reaches the user.

use crate::attach::Target;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct PidArgs {
    /// Process id of the JVM.
    pub pid: i32,
    /// libprofrj.so to load (default: $PROFRJ_AGENT, else next to this program).
    #[arg(long, value_name = "PATH")]
    pub agent: Option<PathBuf>,
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

/// Sends `options` (a command and its options) to the agent in `args.pid`.
pub fn send(args: &PidArgs, options: &str) -> Result<(), String> {
    let target = Target::find(args.pid)?;
    let library = agent_library(args.agent.as_ref())?;
    let library = if target.foreign_root() {
        copy_into(&target, &library)?
    } else {
        library.display().to_string()
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let reply = format!("/tmp/.profrj-reply-{}-{nanos}", std::process::id());
    let full = if options.is_empty() {
        format!("reply={reply}")
    } else {
        format!("{options},reply={reply}")
    };
    let code = target.load_agent(&library, &full)?;
    let reply_path = target.host_path(&reply);
    let text = std::fs::read_to_string(&reply_path);
    let _ = std::fs::remove_file(&reply_path);
    match text {
        Ok(text) => {
            let (status, message) = text.split_once('\n').unwrap_or((text.as_str(), ""));
            let message = message.trim();
            if status == "ok" {
                println!("{message}");
                Ok(())
            } else {
                Err(message.to_owned())
            }
        }
        Err(_) if code == 0 => {
            println!("agent loaded (return code 0)");
            Ok(())
        }
        Err(_) => Err(format!(
            "the agent failed with return code {code}; its message is on the JVM's stderr"
        )),
    }
}

/// libprofrj.so: `--agent`, else $PROFRJ_AGENT, else next to this executable.
fn agent_library(explicit: Option<&PathBuf>) -> Result<PathBuf, String> {
    let path = match explicit {
        Some(p) => p.clone(),
        None => match std::env::var_os("PROFRJ_AGENT") {
            Some(p) => PathBuf::from(p),
            None => std::env::current_exe()
                .map_err(|e| format!("cannot locate this program: {e}"))?
                .with_file_name("libprofrj.so"),
        },
    };
    let path = path.canonicalize().map_err(|e| {
        format!(
            "agent library {}: {e} (build it with `cargo build --release`, or pass --agent PATH)",
            path.display()
        )
    })?;
    Ok(path)
}

/// A JVM in another mount namespace cannot see our file system: put a copy of
/// the library in its /tmp and load that.
fn copy_into(target: &Target, library: &PathBuf) -> Result<String, String> {
    // SAFETY: geteuid has no preconditions.
    let inside = format!("/tmp/libprofrj-{}.so", unsafe { libc::geteuid() });
    let dest = target.host_path(&inside);
    let same = std::fs::read(&dest).ok() == std::fs::read(library).ok();
    if !same {
        std::fs::copy(library, &dest)
            .map_err(|e| format!("copying the agent into the JVM's /tmp: {e}"))?;
    }
    Ok(inside)
}
