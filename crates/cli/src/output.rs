//! Output files, written so that nothing is half-written, lost or clobbered.
//!
//! * Every output is first written in full into an unnamed file in the destination's
//!   folder (Linux `O_TMPFILE`), then linked in under its name. A process killed at any
//!   point before that leaves nothing behind, not even after SIGKILL. Where the file
//!   system has no `O_TMPFILE`, a hidden named file is used instead and removed on
//!   SIGINT, SIGTERM and SIGHUP ([`cleanup`]).
//! * An existing destination is replaced by a rename, so readers see the old file or
//!   the new one, never a mix. The new file keeps the old one's permission bits; a new
//!   file gets the shell's `0666 & ~umask` (0644 under the usual umask).
//! * A symlink is written through (its final target is replaced, the link stays), and
//!   a fifo or device (`/dev/null`, `/dev/stdout`) is written into directly rather
//!   than replaced by a regular file.
//! * A command that writes several files collects them in [`Outputs`] and publishes
//!   them together once it has succeeded: all are written out first, then linked in.

mod cleanup;
mod staged;

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

pub use staged::Staged;

/// Symlinks followed before giving up (the kernel's own limit).
const MAX_SYMLINKS: usize = 40;

/// What a destination path names once symlinks are followed.
#[derive(Debug, Clone)]
pub enum Target {
    /// No file there yet: created with the umask's mode.
    New(PathBuf),
    /// A regular file, replaced by rename, keeping these permission bits.
    Existing {
        /// The file's path (the symlink's final target when `path` was a link).
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A fifo, character or block device: written into directly.
    Special(PathBuf),
}

impl Target {
    /// The path the bytes end up at.
    pub fn path(&self) -> &Path {
        match self {
            Target::New(p) | Target::Existing { path: p, .. } | Target::Special(p) => p,
        }
    }
}

/// Follow `path` through symlinks to what it names, refusing folders and sockets and
/// a missing parent folder (with an error that names the user's path, not a temporary).
pub fn resolve(path: &Path) -> Result<Target> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let mut p = path.to_path_buf();
    for _ in 0..MAX_SYMLINKS {
        match std::fs::symlink_metadata(&p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let dir = folder_of(&p);
                if !dir.is_dir() {
                    bail!(
                        "cannot write '{}': folder '{}' does not exist",
                        path.display(),
                        dir.display()
                    );
                }
                return Ok(Target::New(p));
            }
            Err(e) => return Err(e).with_context(|| format!("cannot write '{}'", path.display())),
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p)
                    .with_context(|| format!("cannot read the link '{}'", p.display()))?;
                p = if link.is_absolute() {
                    link
                } else {
                    folder_of(&p).join(link)
                };
            }
            Ok(m) if m.is_file() => {
                return Ok(Target::Existing {
                    path: p,
                    mode: m.permissions().mode() & 0o7777,
                })
            }
            Ok(m) if m.is_dir() => bail!("cannot write '{}': it is a folder", path.display()),
            Ok(m) if m.file_type().is_socket() => {
                bail!("cannot write '{}': it is a socket", path.display())
            }
            Ok(_) => return Ok(Target::Special(p)),
        }
    }
    bail!(
        "cannot write '{}': more than {MAX_SYMLINKS} symlinks to follow",
        path.display()
    )
}

/// The folder a path's file lives in (`.` for a bare name).
pub fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Write `bytes` to `path` as described in the module doc.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut outputs = Outputs::default();
    outputs.add(path, bytes.to_vec());
    outputs.commit()
}

/// Several output files of one command, published together by [`Outputs::commit`]
/// once the command has computed all of them.
#[derive(Default)]
pub struct Outputs {
    files: Vec<(PathBuf, Vec<u8>)>,
}

impl Outputs {
    /// Queue `bytes` for `path`.
    pub fn add(&mut self, path: &Path, bytes: Vec<u8>) {
        self.files.push((path.to_path_buf(), bytes));
    }

    /// Resolve every destination, write every regular file out in full, and only then
    /// link them in (and write the special files). A failure before the linking leaves
    /// every destination as it was.
    pub fn commit(self) -> Result<()> {
        let mut ready = Vec::with_capacity(self.files.len());
        for (path, bytes) in &self.files {
            let target = resolve(path)?;
            let staged = match &target {
                Target::Special(_) => None,
                _ => {
                    let mut s = Staged::create(path, target.clone())?;
                    s.file_mut()
                        .write_all(bytes)
                        .with_context(|| format!("cannot write '{}'", path.display()))?;
                    Some(s)
                }
            };
            ready.push((path, bytes, target, staged));
        }
        for (path, bytes, target, staged) in ready {
            match staged {
                Some(s) => s.publish()?,
                None => write_special(path, target.path(), bytes)?,
            }
        }
        Ok(())
    }
}

/// Write into a fifo or device as it is (no truncation, no rename).
fn write_special(user_path: &Path, path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open '{}' for writing", user_path.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("cannot write '{}'", user_path.display()))
}

#[cfg(test)]
mod tests;
