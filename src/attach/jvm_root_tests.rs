//! Both resolvers (openat2 and the walk) on a real directory tree that plays
//! a container's root, with links that point outside it.

use super::*;
use std::os::unix::fs::{symlink, MetadataExt};

struct Tree {
    /// A directory beside the root: what an absolute link names on the host.
    host: PathBuf,
    root: PathBuf,
}

impl Tree {
    fn new(name: &str) -> Self {
        let base =
            std::env::temp_dir().join(format!("profrj-jvmroot-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        let host = base.join("host");
        std::fs::create_dir_all(root.join("inside/deeper")).unwrap();
        std::fs::create_dir_all(&host).unwrap();
        std::fs::write(root.join("file"), b"x").unwrap();
        // Absolute: the host's `host` directory; inside the root, `/inside`.
        symlink(&host, root.join("to-host")).unwrap();
        symlink("/inside", root.join("tmp")).unwrap();
        symlink("inside/../inside/deeper", root.join("relative")).unwrap();
        symlink("../../../../../inside", root.join("inside/climb")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        symlink("file", root.join("not-a-dir")).unwrap();
        // Into /proc: on the host, a magic link to the host's root; inside,
        // the root's own /proc (none here).
        symlink("/proc/self/root", root.join("magic")).unwrap();
        Tree { host, root }
    }

    fn open(&self) -> JvmRoot {
        JvmRoot::at(self.root.to_str().unwrap()).unwrap()
    }

    fn ino(&self, rel: &str) -> (u64, u64) {
        let m = std::fs::metadata(self.root.join(rel)).unwrap();
        (m.dev(), m.ino())
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.root.parent().unwrap());
    }
}

fn id(fd: &OwnedFd) -> (u64, u64) {
    let m = metadata_of(fd).unwrap();
    (m.dev(), m.ino())
}

/// Each path, through openat2 and through the walk: the same directory, or
/// an error from both.
#[test]
fn both_resolvers_stay_inside_the_root() {
    let tree = Tree::new("resolve");
    let root = tree.open();
    let cases: [(&str, Option<&str>); 9] = [
        ("/tmp", Some("inside")),
        ("/tmp/deeper", Some("inside/deeper")),
        ("/relative", Some("inside/deeper")),
        ("/inside/climb/deeper", Some("inside/deeper")),
        ("/../../inside/../..", Some("")),
        ("/to-host", None),
        ("/loop", None),
        ("/not-a-dir", None),
        ("/magic", None),
    ];
    for (path, want) in cases {
        let walked = walk(root.fd.as_fd(), path);
        let opened = open_in_root(root.fd.as_fd(), path);
        match want {
            Some(rel) => {
                let want = tree.ino(rel);
                assert_eq!(id(walked.as_ref().ok().unwrap()), want, "walk {path}");
                assert_eq!(id(opened.as_ref().unwrap()), want, "openat2 {path}");
            }
            None => {
                assert!(walked.is_err(), "walk {path} resolved");
                assert!(opened.is_err(), "openat2 {path} resolved");
            }
        }
    }
    assert_ne!(tree.ino("inside"), {
        let m = std::fs::metadata(&tree.host).unwrap();
        (m.dev(), m.ino())
    });
}

/// The error names the component that failed and the links followed.
#[test]
fn a_failure_says_where_and_through_which_links() {
    let tree = Tree::new("explain");
    let root = tree.open();
    let host = tree.host.display().to_string();
    let e = root.dir("/to-host/x").err().unwrap().to_string();
    assert!(
        e.contains(&format!("/to-host -> {host}")) && e.contains("No such file"),
        "{e}"
    );
    assert!(e.contains("never on this host"), "{e}");
    let e = root.dir("/loop").err().unwrap().to_string();
    assert!(e.contains("symbolic links"), "{e}");
    let e = root.dir("/not-a-dir").err().unwrap().to_string();
    assert!(e.contains("Not a directory"), "{e}");
}

/// Files made through a `Dir` land inside the root, exclusively, never
/// through a link; a private directory goes away with its files.
#[test]
fn files_are_made_inside_and_never_through_links() {
    let tree = Tree::new("files");
    let root = tree.open();
    let tmp = root.dir("/tmp").unwrap();
    assert_eq!(tmp.jvm_path("a"), "/tmp/a");
    tmp.write_atomically("lib.so", b"agent").unwrap();
    assert_eq!(
        std::fs::read(tree.root.join("inside/lib.so")).unwrap(),
        b"agent"
    );
    let me = std::fs::metadata(tree.root.join("inside/lib.so"))
        .unwrap()
        .uid();
    assert_eq!(tmp.read_owned("lib.so", me, 100).unwrap(), b"agent");
    symlink(tree.host.join("victim"), tree.root.join("inside/planted")).unwrap();
    assert!(tmp.create_new("planted", 0o600).is_err());
    assert!(tmp.read_owned("planted", me, 100).is_err());
    assert!(tmp.sub_dir("climb").is_err(), "a link is not a directory");
    assert!(!tree.host.join("victim").exists());
    let private = tmp.private_dir().unwrap();
    let name = private.dir.jvm_path("reply");
    assert!(name.starts_with("/tmp/.profrj-") && name.ends_with("/reply"));
    private.dir.create_new("reply", 0o600).unwrap();
    let made = tree
        .root
        .join("inside")
        .join(name.split('/').nth(2).unwrap());
    assert_eq!(std::fs::metadata(&made).unwrap().mode() & 0o777, 0o700);
    drop(private);
    assert!(!made.exists(), "the private directory is removed");
    assert_eq!(std::fs::read_dir(&tree.host).unwrap().count(), 0);
}
