//! Removal of named temporary files when the process is interrupted (SIGINT, SIGTERM,
//! SIGHUP). Only the fallback path of [`super::Staged`] (file systems without
//! `O_TMPFILE`) and the instant between linking a finished file under a temporary name
//! and renaming it over an existing destination need this: an unnamed file vanishes with
//! the process by itself.
//!
//! The handler may only call async-signal-safe functions, so the paths live in a fixed
//! table of atomic pointers to C strings rather than behind a lock.

use std::ffi::CString;
use std::path::Path;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Once;

/// Temporary files that can be registered at once (a command writes a handful).
const SLOTS: usize = 64;

static PATHS: [AtomicPtr<libc::c_char>; SLOTS] = [const { AtomicPtr::new(null_mut()) }; SLOTS];
static INSTALL: Once = Once::new();

/// A registered temporary path; dropping it unregisters the path (the file itself is
/// left alone: by then it was renamed or removed by its owner).
pub struct Registration {
    slot: Option<usize>,
}

/// Register `path` to be unlinked if the process is interrupted. When the table is
/// full the path is simply not registered (the file is still removed on normal exit).
pub fn register(path: &Path) -> Registration {
    use std::os::unix::ffi::OsStrExt;
    INSTALL.call_once(install_handlers);
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return Registration { slot: None };
    };
    let raw = c.into_raw();
    for (i, slot) in PATHS.iter().enumerate() {
        if slot
            .compare_exchange(null_mut(), raw, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return Registration { slot: Some(i) };
        }
    }
    // SAFETY: `raw` came from CString::into_raw above and was not stored anywhere.
    drop(unsafe { CString::from_raw(raw) });
    Registration { slot: None }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            let p = PATHS[i].swap(null_mut(), Ordering::AcqRel);
            if !p.is_null() {
                // SAFETY: every non-null pointer in the table came from CString::into_raw
                // and is taken out of the table exactly once (by this swap).
                drop(unsafe { CString::from_raw(p) });
            }
        }
    }
}

fn install_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installing a handler that only calls async-signal-safe functions.
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    for slot in &PATHS {
        let p = slot.swap(null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // SAFETY: a NUL-terminated path from the table; unlink is async-signal-safe.
            unsafe {
                libc::unlink(p);
            }
        }
    }
    // SAFETY: restore the default action and re-raise, so the process ends by the
    // signal as it would have without the handler (exit status 128 + sig).
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}
