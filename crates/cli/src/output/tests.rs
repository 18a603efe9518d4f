use super::*;
use std::os::unix::fs::PermissionsExt;

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tpusim-"))
        .collect()
}

fn umask() -> u32 {
    // SAFETY: read the mask by setting it and setting it back (tests run this alone).
    unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        m as u32
    }
}

#[test]
fn new_file_gets_the_shell_mode_and_no_temporary_stays() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("a.txt");
    write_atomic(&p, b"hello").unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"hello");
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666 & !umask());
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn existing_file_keeps_its_mode() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("secret.txt");
    std::fs::write(&p, b"old").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    write_atomic(&p, b"new").unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"new");
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn symlink_is_written_through() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real.txt");
    std::fs::write(&real, b"old").unwrap();
    let link = d.path().join("link.txt");
    std::os::unix::fs::symlink("real.txt", &link).unwrap();
    write_atomic(&link, b"new").unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&real).unwrap(), b"new");
    // a dangling link creates its target
    let dangling = d.path().join("dangling");
    std::os::unix::fs::symlink("made.txt", &dangling).unwrap();
    write_atomic(&dangling, b"x").unwrap();
    assert_eq!(std::fs::read(d.path().join("made.txt")).unwrap(), b"x");
}

#[test]
fn fifo_is_written_into_not_replaced() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: plain system call with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    write_atomic(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    // /dev/null stays a device
    write_atomic(Path::new("/dev/null"), b"nothing").unwrap();
    assert!(std::fs::symlink_metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn folders_and_missing_folders_are_refused_by_the_user_path() {
    let d = tempfile::tempdir().unwrap();
    let e = write_atomic(d.path(), b"x").unwrap_err().to_string();
    assert!(e.contains("is a folder"), "{e}");
    let p = d.path().join("nope/out.html");
    let e = write_atomic(&p, b"x").unwrap_err().to_string();
    assert!(
        e.contains("folder") && e.contains("does not exist") && e.contains("nope/out.html"),
        "{e}"
    );
    assert!(!e.contains(".tpusim-"), "{e}");
}

#[test]
fn a_set_is_published_only_when_every_file_can_be() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a.svg");
    std::fs::write(&a, b"old a").unwrap();
    let mut outs = Outputs::default();
    outs.add(&a, b"new a".to_vec());
    outs.add(&d.path().join("missing/b.json"), b"b".to_vec());
    assert!(outs.commit().is_err());
    assert_eq!(std::fs::read(&a).unwrap(), b"old a");
    assert!(leftovers(d.path()).is_empty());
}

/// A hidden name left by a process killed between link and rename (SIGKILL, which no
/// handler sees) is removed by the next output written in its folder, once its process
/// is gone; a live process's, and a name of another shape, stay.
#[test]
fn a_dead_process_hidden_file_is_removed_by_the_next_output() {
    let d = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = format!(".tpusim-{dead}-0-123456789.tmp");
    let live = format!(".tpusim-{}-0-123456789.tmp", std::process::id());
    let other = ".tpusim-aB3xYz.tmp".to_string();
    for name in [&stale, &live, &other] {
        std::fs::write(d.path().join(name), b"x").unwrap();
    }
    write_atomic(&d.path().join("out.txt"), b"new").unwrap();
    let mut left = leftovers(d.path());
    left.sort();
    let mut want = vec![live, other];
    want.sort();
    assert_eq!(left, want);
}
