//! One output file being written: unnamed (`O_TMPFILE`) or, where the file system lacks
//! it, a hidden named file registered for removal on interrupt; linked in under its
//! destination's name by [`Staged::publish`].

use super::cleanup::{self, Registration};
use super::{folder_of, Target};
use anyhow::{anyhow, Context, Result};
use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A complete-or-nothing output file in the destination's folder.
pub struct Staged {
    file: File,
    user_path: PathBuf,
    target: Target,
    /// The hidden name of the fallback file (None for an unnamed file).
    named: Option<(tempfile::TempPath, Registration)>,
}

fn c_path(p: &Path) -> Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| anyhow!("'{}' holds a NUL byte", p.display()))
}

/// An unnamed file in `dir`, or None when the file system does not support it.
fn open_unnamed(dir: &Path) -> Result<Option<File>> {
    let c = c_path(dir)?;
    // SAFETY: a plain system call with a NUL-terminated path; the fd is owned below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_TMPFILE | libc::O_RDWR | libc::O_CLOEXEC,
            0o666,
        )
    };
    if fd >= 0 {
        // SAFETY: fd is a fresh descriptor we own.
        return Ok(Some(unsafe { File::from_raw_fd(fd) }));
    }
    let err = std::io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL) => Ok(None),
        _ => Err(err).with_context(|| format!("cannot create a file in '{}'", dir.display())),
    }
}

/// A hidden named file in `dir` with the shell's default mode.
fn open_named(dir: &Path) -> Result<(File, tempfile::TempPath)> {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::Builder::new()
        .prefix(".tpusim-")
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a file in '{}'", dir.display()))?;
    Ok(tmp.into_parts())
}

impl Staged {
    /// Start the output for `user_path`, which resolves to `target` (a regular file or
    /// none yet; special files are written directly, not staged).
    pub fn create(user_path: &Path, target: Target) -> Result<Self> {
        let dir = folder_of(target.path()).to_path_buf();
        remove_stale(&dir);
        let (file, named) = match open_unnamed(&dir)? {
            Some(f) => (f, None),
            None => {
                let (f, path) = open_named(&dir)?;
                let reg = cleanup::register(&path);
                (f, Some((path, reg)))
            }
        };
        if let Target::Existing { mode, .. } = target {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(mode))
                .with_context(|| format!("cannot set the mode of '{}'", user_path.display()))?;
        }
        Ok(Staged {
            file,
            user_path: user_path.to_path_buf(),
            target,
            named,
        })
    }

    /// The file to fill (it may be sized and memory-mapped).
    pub fn file_mut(&mut self) -> &mut File {
        &mut self.file
    }

    /// The file to fill, shared.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Link the finished file in under its destination's name.
    pub fn publish(self) -> Result<()> {
        let dest = self.target.path().to_path_buf();
        let err = |e: std::io::Error| anyhow!("cannot write '{}': {e}", self.user_path.display());
        if let Some((path, reg)) = self.named {
            path.persist(&dest).map_err(|e| err(e.error))?;
            drop(reg);
            return Ok(());
        }
        if matches!(self.target, Target::New(_)) {
            match link_unnamed(&self.file, &dest) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(err(e)),
            }
        }
        // Replace an existing file: link under a hidden name, then rename over it.
        let hidden = hidden_name(&dest);
        let reg = cleanup::register(&hidden);
        link_unnamed(&self.file, &hidden).map_err(err)?;
        let renamed = std::fs::rename(&hidden, &dest);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&hidden);
        }
        drop(reg);
        renamed.map_err(err)
    }
}

/// Remove from `dir` the hidden names ([`hidden_name`]) of processes that are gone: a
/// process killed (SIGKILL, which no handler sees) between linking its finished file
/// under such a name and renaming it over the destination leaves it behind, the
/// destination still whole. Best effort: a name that cannot be read or removed stays.
fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = hidden_name_pid(&name.to_string_lossy()) else {
            continue;
        };
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The process id in a hidden name `.tpusim-<pid>-<n>-<nanos>.tmp`, if `name` is one.
fn hidden_name_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(".tpusim-")?.strip_suffix(".tmp")?;
    let mut parts = rest.split('-');
    let pid = parts.next()?.parse::<i32>().ok().filter(|&p| p > 0)?;
    let numbers = parts.map(|p| p.parse::<u64>().is_ok()).collect::<Vec<_>>();
    (numbers == [true, true]).then_some(pid)
}

/// A name beside `dest` for the instant between link and rename.
fn hidden_name(dest: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    folder_of(dest).join(format!(".tpusim-{}-{n}-{nanos}.tmp", std::process::id()))
}

/// Give the unnamed file `f` the name `dest` (fails with AlreadyExists if taken).
fn link_unnamed(f: &File, dest: &Path) -> std::io::Result<()> {
    let to = CString::new(dest.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let proc_path = CString::new(format!("/proc/self/fd/{}", f.as_raw_fd())).expect("no NUL");
    // SAFETY: plain system calls with NUL-terminated paths and our own descriptor.
    let rc = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            proc_path.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::ENOENT) {
        return Err(e);
    }
    // No /proc: AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH, which root has).
    let empty = CString::new("").expect("no NUL");
    // SAFETY: as above.
    let rc = unsafe {
        libc::linkat(
            f.as_raw_fd(),
            empty.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_EMPTY_PATH,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
