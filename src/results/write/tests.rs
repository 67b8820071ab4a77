//! The writer's rules, each on a real file system object.

use super::*;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;

fn names_in(dir: &Path) -> Vec<OsString> {
    let mut v: Vec<OsString> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    v.sort();
    v
}

#[test]
fn replaces_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    write_output(&path, b"one").unwrap();
    write_output(&path, b"two").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"two");
    assert_eq!(names_in(dir.path()), vec![OsString::from("r.json")]);
}

#[test]
fn keeps_the_permission_bits_of_a_replaced_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    std::fs::write(&path, b"old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    write_output(&path, b"new").unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn a_directory_at_the_target_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("busy");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("x"), b"").unwrap();
    let e = check_output(&target, "-o").unwrap_err();
    assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
    assert!(e.to_string().contains("is a directory"), "{e}");
    assert!(write_output(&target, b"data").is_err());
    assert_eq!(names_in(dir.path()), vec![OsString::from("busy")]);
    assert!(target.join("x").is_file());
}

#[test]
fn a_link_to_a_regular_file_is_refused_and_the_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let precious = dir.path().join("precious.txt");
    std::fs::write(&precious, b"keep").unwrap();
    let link = dir.path().join("out.json");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    let e = check_output(&link, "--save").unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert!(write_output(&link, b"overwritten").is_err());
    assert_eq!(std::fs::read(&precious).unwrap(), b"keep");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn a_link_to_dev_null_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("null");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    assert_eq!(check_output(&link, "-o").unwrap(), Target::Through);
    write_output(&link, b"gone").unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let null = std::fs::metadata("/dev/null").unwrap();
    assert!(null.file_type().is_char_device());
}

#[test]
fn a_fifo_without_a_reader_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("p");
    let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = check_output(&fifo, "--save").unwrap_err();
    assert!(e.to_string().contains("no reader"), "{e}");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

#[test]
fn a_fifo_with_a_reader_gets_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("p");
    let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    assert_eq!(check_output(&fifo, "--save").unwrap(), Target::Through);
    write_output(&fifo, b"through").unwrap();
    let mut got = String::new();
    use std::io::Read;
    (&reader).read_to_string(&mut got).unwrap();
    assert_eq!(got, "through");
}

#[test]
fn a_missing_directory_and_an_empty_name_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let e = check_output(&dir.path().join("no/such/r.json"), "--save").unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
    let e = check_output(Path::new(""), "--save").unwrap_err();
    assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
}

#[test]
fn temp_names_differ_and_are_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let a = create_temp(dir.path(), "r.json", 0o600).unwrap();
    let b = create_temp(dir.path(), "r.json", 0o600).unwrap();
    assert_ne!(a.path(), b.path());
    let shape = |p: &Path| {
        let n = p.file_name().unwrap().to_str().unwrap().to_string();
        let mid = n
            .strip_prefix(".r.json.")
            .and_then(|m| m.strip_suffix(".tmp"));
        mid.is_some_and(|m| m.len() == 16 && m.chars().all(|c| c.is_ascii_alphanumeric()))
    };
    assert!(shape(a.path()) && shape(b.path()), "{:?}", a.path());
    // A link planted at a temp name is never opened through: O_EXCL fails
    // on it (and the writer draws another name).
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"keep").unwrap();
    let planted = dir.path().join(".r.json.0123456789abcdef.tmp");
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let e = replace::open_new(&planted, 0o600).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    let dangling = dir.path().join(".r.json.fedcba9876543210.tmp");
    std::os::unix::fs::symlink(dir.path().join("made"), &dangling).unwrap();
    assert!(replace::open_new(&dangling, 0o600).is_err());
    assert!(!dir.path().join("made").exists());
    drop((a, b));
    write_output(&dir.path().join("r.json"), b"new").unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    assert_eq!(std::fs::read(dir.path().join("r.json")).unwrap(), b"new");
}

#[test]
fn a_dangling_link_as_an_output_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("out");
    std::os::unix::fs::symlink("nowhere", &link).unwrap();
    let e = check_output_dir(&link, "--dir").unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2);
    assert!(e.to_string().contains("which does not exist"), "{e}");
    std::fs::create_dir(dir.path().join("real")).unwrap();
    let good = dir.path().join("good");
    std::os::unix::fs::symlink("real", &good).unwrap();
    assert!(check_output_dir(&good, "--dir").is_ok());
}

#[test]
fn an_immutable_file_is_refused_before_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kept.json");
    std::fs::write(&path, "old").unwrap();
    let chattr = |flag: &str| {
        std::process::Command::new("chattr")
            .arg(flag)
            .arg(&path)
            .status()
            .is_ok_and(|s| s.success())
    };
    if !chattr("+i") {
        // No root or a file system without flags: nothing to check.
        return;
    }
    let e = check_output(&path, "--save");
    chattr("-i");
    let e = e.unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2);
    assert!(e.to_string().contains("immutable"), "{e}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
}

#[test]
fn a_missing_device_is_not_created_as_a_file() {
    let name = format!("/dev/numabench-test-{}", std::process::id());
    let e = check_output(Path::new(&name), "--save").unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2);
    assert!(e.to_string().contains("no such device"), "{e}");
    assert!(!Path::new(&name).exists());
}

#[test]
fn standard_stream_names_are_recognised() {
    assert_eq!(standard_stream(Path::new("/dev/stdout")), Some(1));
    assert_eq!(standard_stream(Path::new("/proc/self/fd/7")), Some(7));
    assert_eq!(standard_stream(Path::new("/dev/fd/x")), None);
    assert_eq!(standard_stream(Path::new("out.json")), None);
}
