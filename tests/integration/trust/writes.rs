//! Writing: devices, FIFOs and symlinks at an output path, planted temp-file
//! links, outputs checked before any measurement, write errors on stdout.

use crate::util::{numabench, only_run_folder, stdout_of};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A quick run of each command that takes an output path, with `{}` where
/// the path goes. They measure little, so a refusal that came after the
/// measurement would still be caught by the stdout check below.
fn commands_with_outputs(results: &Path) -> Vec<(&'static str, Vec<String>)> {
    let r = results.to_str().unwrap().to_string();
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        (
            "--save",
            v(&[
                "sweep", "--op", "read", "-s", "16K", "-r", "1", "--save", "{}",
            ]),
        ),
        (
            "--save",
            v(&[
                "matrix",
                "--size",
                "16M",
                "--latency-size",
                "16M",
                "-r",
                "1",
                "--save",
                "{}",
            ]),
        ),
        (
            "--save",
            v(&["model", "--validate", "-s", "1M", "--save", "{}"]),
        ),
        ("--save", v(&["model", &r, "--save", "{}"])),
        (
            "--save",
            v(&[
                "mem", "-p", "1", "-t", "1", "-P", "1", "-l", "1", "-q", "--save", "{}",
            ]),
        ),
        (
            "--save",
            v(&[
                "sched",
                "2",
                "--elements",
                "1000",
                "--passes",
                "1",
                "--no-burst",
                "--save",
                "{}",
            ]),
        ),
        (
            "--save",
            v(&[
                "autonuma", "numa02", "--mem", "8", "--loops", "1", "--save", "{}",
            ]),
        ),
        (
            "--out",
            v(&[
                "autonuma", "numa02", "--mem", "8", "--loops", "1", "--out", "{}",
            ]),
        ),
        ("--save", v(&["pcie", "--save", "{}"])),
        ("--output", v(&["report", &r, "-o", "{}"])),
        ("-o", v(&["gather", "-o", "{}"])),
        ("--dir", v(&["run", "--dir", "{}"])),
    ]
}

fn with_path(args: &[String], path: &Path) -> Vec<String> {
    args.iter()
        .map(|a| {
            if a == "{}" {
                path.to_str().unwrap().to_string()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// The binary as a plain std Command, whose streams can be redirected.
fn plain() -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("numabench"));
    cmd.env_remove("NUMABENCH_SYSFS_ROOT");
    cmd
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn mknod(path: &Path, kind: libc::mode_t, major: u32, minor: u32) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: NUL-terminated path that outlives the call; makedev is pure.
    let rc = unsafe { libc::mknod(c.as_ptr(), kind | 0o600, libc::makedev(major, minor)) };
    assert_eq!(
        rc,
        0,
        "mknod needs root: {}",
        std::io::Error::last_os_error()
    );
}

/// A small matrix results file for model and report.
fn results_file(dir: &Path) -> PathBuf {
    let m = dir.join("matrix.json");
    stdout_of([
        "matrix",
        "--size",
        "16M",
        "--latency-size",
        "16M",
        "-r",
        "1",
        "--no-saturated",
        "--save",
        m.to_str().unwrap(),
    ]);
    m
}

/// Runs `args` and asserts the bad-input contract quickly: exit 2 within
/// `limit`, one line naming `word`, nothing on stdout (nothing measured).
fn refused_before_work(args: &[String], word: &str) {
    let started = Instant::now();
    let out = numabench().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed: measured first?");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(word), "{args:?}: '{word}' missing: {err}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{args:?} took {:?}: measured before refusing?",
        started.elapsed()
    );
}

#[test]
fn every_output_option_refuses_directories_fifos_block_devices_and_file_links() {
    let tmp = tempfile::tempdir().unwrap();
    let results = results_file(tmp.path());
    let dir = tmp.path().join("a-directory.tar.gz");
    std::fs::create_dir(&dir).unwrap();
    let fifo = tmp.path().join("fifo.tar.gz");
    mkfifo(&fifo);
    let block = tmp.path().join("block.tar.gz");
    mknod(&block, libc::S_IFBLK, 7, 200);
    let precious = tmp.path().join("precious.txt");
    std::fs::write(&precious, b"keep").unwrap();
    let link = tmp.path().join("link.tar.gz");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    for (flag, args) in commands_with_outputs(&results) {
        if flag == "--out" || flag == "--dir" {
            // Directory outputs: a file, a FIFO or a block device is refused.
            for (p, word) in [
                (&precious, "not a directory"),
                (&fifo, "not a directory"),
                (&block, "not a directory"),
            ] {
                refused_before_work(&with_path(&args, p), word);
            }
            continue;
        }
        for (p, word) in [
            (&dir, "is a directory"),
            (&fifo, "no reader"),
            (&block, "block device"),
            (&link, "symbolic link"),
        ] {
            refused_before_work(&with_path(&args, p), word);
        }
    }
    assert!(dir.is_dir());
    let meta = |p: &Path| std::fs::symlink_metadata(p).unwrap().file_type();
    assert!(meta(&fifo).is_fifo());
    assert!(meta(&block).is_block_device());
    assert!(meta(&link).is_symlink());
    assert_eq!(std::fs::read(&precious).unwrap(), b"keep");
}

#[test]
fn devices_at_the_target_are_written_through_never_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    // A private /dev/null and /dev/full, so the test never risks the real
    // ones; the rules are the same for any character device.
    let null = tmp.path().join("null");
    mknod(&null, libc::S_IFCHR, 1, 3);
    let full = tmp.path().join("full");
    mknod(&full, libc::S_IFCHR, 1, 7);
    let sweep = |save: &Path| {
        numabench()
            .args(["sweep", "--op", "read", "-s", "16K", "-r", "1", "--save"])
            .arg(save)
            .output()
            .unwrap()
    };
    let out = sweep(&null);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = sweep(&full);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    for dev in [&null, &full] {
        let t = std::fs::symlink_metadata(dev).unwrap().file_type();
        assert!(t.is_char_device(), "{} was replaced", dev.display());
    }
    let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(names.len(), 2, "a temp file was left behind");
}

#[test]
fn dev_stdout_is_the_stream_even_when_it_is_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    let results = results_file(tmp.path());
    let html = tmp.path().join("from-stdout.html");
    let out = plain()
        .args(["report"])
        .arg(&results)
        .args(["-o", "/dev/stdout"])
        .stdout(std::fs::File::create(&html).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(
        text.starts_with("<!DOCTYPE html>"),
        "{}",
        &text[..text.len().min(80)]
    );
    assert!(text.trim_end().ends_with("</html>"));
    // The shell's file is still where the shell put it: not replaced.
    assert!(std::path::Path::new("/dev/stdout").exists());
}

#[test]
fn a_fifo_with_a_reader_receives_the_document() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("p");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    // Give the reader time to open its end.
    std::thread::sleep(Duration::from_millis(300));
    let out = numabench()
        .args(["sweep", "--op", "read", "-s", "16K", "-r", "1", "--save"])
        .arg(&fifo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_str(&reader.join().unwrap()).unwrap();
    assert_eq!(doc["schema"], 1);
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

#[test]
fn a_planted_link_at_the_old_temp_name_is_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let results = results_file(tmp.path());
    std::fs::write(tmp.path().join("precious.txt"), b"keep").unwrap();
    // The old writer used .NAME.PID.tmp: plant that link, then exec
    // numabench under the same PID.
    let script = format!(
        "cd {} && ln -s precious.txt .v.html.$$.tmp && exec {} report {} -o v.html",
        tmp.path().display(),
        assert_cmd::cargo::cargo_bin("numabench").display(),
        results.display()
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .env_remove("NUMABENCH_SYSFS_ROOT")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(tmp.path().join("precious.txt")).unwrap(),
        b"keep"
    );
    let html = std::fs::read_to_string(tmp.path().join("v.html")).unwrap();
    assert!(html.contains("<html"));
    // Only the planted link, the inputs and the report are there.
    let mut names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn outputs_in_unwritable_places_are_refused_before_measuring() {
    let tmp = tempfile::tempdir().unwrap();
    let results = results_file(tmp.path());
    for (_, args) in commands_with_outputs(&results) {
        refused_before_work(&with_path(&args, Path::new("/proc/x.tar.gz")), "/proc");
    }
    refused_before_work(
        &["run".into(), "--dir".into(), "/etc/hostname".into()],
        "not a directory",
    );
    let d = tmp.path().to_str().unwrap().to_string();
    refused_before_work(
        &[
            "report".into(),
            results.to_str().unwrap().into(),
            "-o".into(),
            d,
        ],
        "is a directory",
    );
}

#[test]
fn a_full_stdout_is_a_failure() {
    for args in [
        &["topo"][..],
        &["mem", "-p", "1", "-t", "1", "-P", "1", "-l", "1", "-q"][..],
        &["sweep", "--op", "read", "-s", "16K", "-r", "1"][..],
        &["sweep", "--list-kernels"][..],
        &["place", "--size", "1M"][..],
        &["place", "--size", "1M", "--json"][..],
        &["compare", "--help"][..],
        &["--version"][..],
    ] {
        let out = plain()
            .args(args)
            .stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("No space left on device"), "{args:?}: {err}");
    }
}

/// A reader that went away (`numabench topo | head -1`) ends the output
/// quietly and successfully, for help text as for a command's output.
#[test]
fn a_closed_pipe_on_stdout_is_not_an_error() {
    for args in [
        &["topo"][..],
        &["sweep", "--list-kernels"][..],
        &["report", "--help"][..],
        &["--help"][..],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = plain().args(args).stdout(writer).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

#[test]
fn gather_never_archives_a_file_outside_its_root() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("m");
    let archive = tmp.path().join("live.tar.gz");
    stdout_of(["gather", "-o", archive.to_str().unwrap()]);
    std::fs::create_dir(&root).unwrap();
    let unpacked = std::process::Command::new("tar")
        .args([
            "xzf",
            archive.to_str().unwrap(),
            "-C",
            root.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(unpacked.success());
    let secret = tmp.path().join("secret.txt");
    std::fs::write(&secret, "SECRET-FROM-OUTSIDE").unwrap();
    let hostname = root.join("proc/sys/kernel/hostname");
    std::fs::remove_file(&hostname).unwrap();
    std::os::unix::fs::symlink(&secret, &hostname).unwrap();
    let second = tmp.path().join("second.tar.gz");
    let out = numabench()
        .args(["gather", "--sysfs-root"])
        .arg(&root)
        .arg("-o")
        .arg(&second)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("out of the root"), "{err}");
    let listing = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("tar xzf {} -O", second.display()))
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&listing.stdout).contains("SECRET-FROM-OUTSIDE"));
}

#[test]
fn a_dangling_link_as_an_output_directory_is_refused_before_measuring() {
    let tmp = tempfile::tempdir().unwrap();
    let link = tmp.path().join("results");
    std::os::unix::fs::symlink("nowhere", &link).unwrap();
    let l = link.to_str().unwrap().to_string();
    for args in [
        vec!["run".to_string(), "--dir".into(), l.clone()],
        vec![
            "autonuma".to_string(),
            "numa02".into(),
            "--mem".into(),
            "8".into(),
            "--loops".into(),
            "1".into(),
            "--out".into(),
            l.clone(),
        ],
    ] {
        refused_before_work(&args, "which does not exist");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    }
}

#[test]
fn an_output_that_is_one_of_the_inputs_is_refused_and_the_input_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let m = results_file(tmp.path());
    let before = std::fs::read(&m).unwrap();
    let hard = tmp.path().join("hard-link.json");
    std::fs::hard_link(&m, &hard).unwrap();
    let name = |p: &Path| p.to_str().unwrap().to_string();
    let dotted = format!("{}/./matrix.json", tmp.path().display());
    let s = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    for args in [
        s(&["report", &name(&m), "-o", &name(&m)]),
        s(&["report", &name(&m), "--format", "json", "-o", &dotted]),
        s(&["report", &name(&hard), &name(&hard), "--output", &name(&m)]),
        s(&["model", &name(&m), "--save", &name(&hard)]),
    ] {
        refused_before_work(&args, "this command reads");
        assert_eq!(
            std::fs::read(&m).unwrap(),
            before,
            "{args:?} changed the input"
        );
    }
    // Another file beside it is written as ever.
    let out = tmp.path().join("report.html");
    let st = numabench()
        .args(["report", &name(&m), "-o", &name(&out)])
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(0));
    assert!(std::fs::read_to_string(&out).unwrap().contains("<html"));
}

#[test]
fn a_save_that_fails_at_the_end_puts_the_document_on_stdout() {
    // /dev/full passes the check (a device is written through) and fails
    // the write, as a path swapped for a link mid-run or a full disk would.
    let out = numabench()
        .args([
            "sweep",
            "--op",
            "read",
            "-s",
            "16K",
            "-r",
            "1",
            "--threads",
            "1",
        ])
        .args(["--save", "/dev/full"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("/dev/full") && err.contains("on standard output instead"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["tool"], "numabench");
    assert!(!doc["records"].as_array().unwrap().is_empty());
}

/// A tmpfs of `size` mounted on a fresh folder, unmounted on drop; `None`
/// (with a note) where this process may not mount.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn new(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("note: cannot mount a tmpfs here (not root?): skipped");
            return None;
        }
        Some(SmallDisk { dir })
    }

    /// `run --profile smoke` into `runs` on the disk, which must fail (exit
    /// 1): the folder, the output and stderr.
    fn smoke_run(&self) -> (PathBuf, std::process::Output, String) {
        let runs = self.dir.path().join("runs");
        let out = numabench()
            .args(["run", "--profile", "smoke", "--dir"])
            .arg(&runs)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{err}");
        (runs, out, err)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}

#[test]
fn a_run_on_a_full_disk_keeps_its_document() {
    // Room for nothing: the document goes to stdout, the summary to stderr,
    // and no empty run folder is left.
    let Some(disk) = SmallDisk::new("4k") else {
        return;
    };
    let (runs, out, err) = disk.smoke_run();
    assert!(err.contains("on standard output instead"), "{err}");
    assert!(err.contains("triad, one thread"), "no summary: {err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!doc["records"].as_array().unwrap().is_empty());
    assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 0);
}

#[test]
fn a_run_with_room_for_its_document_only_says_what_is_missing() {
    let Some(disk) = SmallDisk::new("16k") else {
        return;
    };
    let (runs, out, err) = disk.smoke_run();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("triad, one thread"), "no summary: {text}");
    assert!(err.contains("holds results.json, but"), "{err}");
    assert!(err.contains("No space left"), "{err}");
    let (folder, doc) = only_run_folder(&runs);
    assert_eq!(doc["tool"], "numabench");
    // No temporary file is left by the writes that failed.
    for e in std::fs::read_dir(&folder).unwrap() {
        let name = e.unwrap().file_name();
        assert!(!name.to_string_lossy().starts_with('.'), "{name:?} left");
    }
}
