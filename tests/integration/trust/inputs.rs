//! Non-regular and malformed inputs: FIFOs, devices, directories, bad sysfs values,
//! control characters on the way to a terminal or a table.

use crate::util::{fixture, numabench};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Longer than any of these commands needs; a hang fails the test instead
/// of blocking the suite.
const HANG: Duration = Duration::from_secs(30);

/// A copy of the `two-node` fixture machine, to damage one file at a time.
struct Tree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn two_node() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("m");
        std::fs::create_dir(&root).unwrap();
        copy_tree(&fixture("two-node"), &root);
        Self { _tmp: tmp, root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        std::fs::write(self.path(rel), contents).unwrap();
    }

    /// Replaces `rel` with a FIFO.
    fn fifo(&self, rel: &str) {
        std::fs::remove_file(self.path(rel)).unwrap();
        mkfifo(&self.path(rel));
    }

    /// `numabench topo --sysfs-root <tree> [extra]`, killed after [`HANG`].
    fn topo(&self, extra: &[&str]) -> Run {
        let mut args = vec!["topo", "--sysfs-root", self.root.to_str().unwrap()];
        args.extend(extra);
        run(&args)
    }
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            std::fs::create_dir(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Runs numabench in an empty directory, killed after [`HANG`] (a hang
/// reads as no exit code, which every assertion below rejects).
fn run(args: &[&str]) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = numabench()
        .current_dir(tmp.path())
        .args(args)
        .timeout(HANG)
        .output()
        .unwrap();
    let run = Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: started.elapsed(),
    };
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "{args:?} left files behind"
    );
    run
}

impl Run {
    /// The bad-input contract: exit 2, one line naming each of `words`,
    /// nothing on stdout.
    fn refused(&self, words: &[&str]) {
        let err = &self.stderr;
        assert_eq!(self.code, Some(2), "took {:?}: {err}", self.took);
        assert!(self.stdout.is_empty(), "printed: {}", self.stdout);
        assert_eq!(err.lines().count(), 1, "not one line: {err}");
        assert!(err.starts_with("numabench: error: "), "{err}");
        for w in words {
            assert!(err.contains(w), "'{w}' missing from: {err}");
        }
    }

    fn succeeded(&self) -> &Self {
        assert_eq!(self.code, Some(0), "{}", self.stderr);
        self
    }
}

#[test]
fn a_million_online_cpus_are_refused_at_once() {
    let tree = Tree::two_node();
    tree.write("sys/devices/system/cpu/online", "0-1048575\n");
    let run = tree.topo(&[]);
    run.refused(&["sys/devices/system/cpu/online", "1048575", "8191"]);
    assert!(run.took < Duration::from_secs(5), "took {:?}", run.took);
}

#[test]
fn every_cpu_and_node_list_is_bounded() {
    for (rel, value) in [
        ("sys/devices/system/cpu/possible", "0-9000"),
        ("sys/devices/system/node/online", "0-1,5000"),
        ("sys/devices/system/node/has_memory", "0-2000"),
        ("sys/devices/system/node/node0/cpulist", "0-7,8192"),
        (
            "sys/devices/system/cpu/cpu3/topology/thread_siblings_list",
            "3,1000000",
        ),
        (
            "sys/devices/system/cpu/cpu0/cache/index0/shared_cpu_list",
            "0-65535",
        ),
    ] {
        let tree = Tree::two_node();
        tree.write(rel, value);
        tree.topo(&[]).refused(&[rel, "beyond"]);
    }
    // A CPU directory numbered far out, with no online list to say better.
    let tree = Tree::two_node();
    std::fs::remove_file(tree.path("sys/devices/system/cpu/online")).unwrap();
    std::fs::create_dir(tree.path("sys/devices/system/cpu/cpu99999999999")).unwrap();
    tree.topo(&[])
        .refused(&["sys/devices/system/cpu", "99999999999"]);
}

#[test]
fn the_largest_supported_cpu_id_still_reads() {
    let tree = Tree::two_node();
    tree.write("sys/devices/system/cpu/online", "0-15,8191\n");
    let run = tree.topo(&["--json"]);
    run.succeeded();
    let topo: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let online = topo["cpus_online"].as_array().unwrap();
    assert_eq!(online.last().unwrap(), 8191);
    assert!(run.took < Duration::from_secs(10), "took {:?}", run.took);
}

#[test]
fn a_fifo_in_the_tree_is_refused_not_waited_on() {
    for rel in [
        "proc/sys/kernel/hostname",
        "sys/devices/system/cpu/online",
        "sys/devices/system/node/node1/meminfo",
        "proc/meminfo",
    ] {
        let tree = Tree::two_node();
        tree.fifo(rel);
        tree.topo(&[]).refused(&[rel, "not a regular file"]);
    }
}

#[test]
fn a_directory_or_device_in_place_of_a_file_is_refused() {
    let tree = Tree::two_node();
    let rel = "sys/devices/system/node/node0/distance";
    std::fs::remove_file(tree.path(rel)).unwrap();
    std::fs::create_dir(tree.path(rel)).unwrap();
    tree.topo(&[]).refused(&[rel, "not a regular file"]);

    // A link out of the tree to a device or FIFO is refused the same way.
    for target in ["/dev/zero", "/dev/null"] {
        let tree = Tree::two_node();
        let rel = "proc/cpuinfo";
        std::fs::remove_file(tree.path(rel)).unwrap();
        std::os::unix::fs::symlink(target, tree.path(rel)).unwrap();
        tree.topo(&[]).refused(&[rel, "not a regular file"]);
    }

    // A device node planted inside the tree.
    let tree = Tree::two_node();
    let rel = "proc/cpuinfo";
    std::fs::remove_file(tree.path(rel)).unwrap();
    let c = CString::new(tree.path(rel).as_os_str().as_bytes()).unwrap();
    // SAFETY: NUL-terminated path that outlives the call; makedev is pure.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 5)) };
    if made == 0 {
        tree.topo(&[]).refused(&[rel, "not a regular file"]);
    } else {
        eprintln!("skipped the device case: mknod needs root");
    }
}

#[test]
fn an_endless_file_is_cut_off_and_refused() {
    let tree = Tree::two_node();
    let rel = "proc/cpuinfo";
    let file = std::fs::File::create(tree.path(rel)).unwrap();
    // Sparse: 65 MiB of zeros without writing them.
    file.set_len(65 << 20).unwrap();
    tree.topo(&[]).refused(&[rel, "64 MiB"]);
}

#[test]
fn malformed_meminfo_is_refused_naming_file_and_value() {
    let cases = [
        (
            "sys/devices/system/node/node1/meminfo",
            "garbage\n",
            "garbage",
        ),
        (
            "sys/devices/system/node/node0/meminfo",
            "Node 0 MemTotal:       lots kB\nNode 0 MemFree: 1 kB\n",
            "lots",
        ),
        (
            "proc/meminfo",
            "MemTotal: 18446744073709551615 kB\nMemFree: 1 kB\n",
            "18446744073709551615",
        ),
        (
            "sys/devices/system/node/node0/meminfo",
            "Node 0 MemTotal: 2000000000000000 kB\nNode 0 MemFree: 1 kB\n",
            "2000000000000000",
        ),
        (
            "sys/devices/system/node/node1/meminfo",
            "Node 1 MemTotal: 1000 kB\nNode 1 MemFree: 2000 kB\n",
            "MemFree of 2000 kB",
        ),
    ];
    for (rel, text, value) in cases {
        let tree = Tree::two_node();
        tree.write(rel, text);
        tree.topo(&[]).refused(&[rel, value]);
    }
}

#[test]
fn malformed_numbers_and_sizes_exit_2() {
    for (rel, text) in [
        (
            "sys/devices/system/cpu/cpu0/cache/index0/size",
            "99999999999G",
        ),
        ("sys/devices/system/node/node0/distance", "10 x21"),
        ("proc/sys/kernel/numa_balancing", "on"),
        (
            "sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages",
            "18446744073709551615",
        ),
    ] {
        let tree = Tree::two_node();
        tree.write(rel, text);
        tree.topo(&[]).refused(&[rel]);
    }
}

#[test]
fn a_bad_pcie_speed_is_unknown_with_a_warning() {
    let dev = "sys/bus/pci/devices/0000:3b:00.0";
    for (file, value) in [
        ("current_link_speed", "NaN GT/s PCIe"),
        ("current_link_speed", "-16 GT/s PCIe"),
        ("current_link_speed", "inf GT/s"),
        ("current_link_width", "-16"),
    ] {
        let tree = Tree::two_node();
        tree.write(&format!("{dev}/{file}"), format!("{value}\n"));
        let text = tree.topo(&[]);
        text.succeeded();
        assert!(
            text.stderr.contains(&format!("{dev}/{file}")) && text.stderr.contains(value),
            "{value}: {}",
            text.stderr
        );
        let row = text
            .stdout
            .lines()
            .find(|l| l.starts_with("0000:3b:00.0"))
            .unwrap();
        assert!(row.contains("unknown"), "{row}");
        for bad in ["NaN", "inf", "-1", "-3"] {
            assert!(!row.contains(bad), "{value}: {row}");
        }
        let json = tree.topo(&["--json"]);
        let topo: serde_json::Value = serde_json::from_str(&json.succeeded().stdout).unwrap();
        let gpu = topo["accelerators"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["pci_address"] == "0000:3b:00.0")
            .unwrap();
        assert!(gpu[file.replace("current_", "").replace("speed", "speed_gt_s")].is_null());
    }
}

#[test]
fn a_link_out_of_the_root_is_ignored_with_a_warning() {
    let tree = Tree::two_node();
    let secret = tree._tmp.path().join("secret");
    std::fs::write(&secret, "SECRET-FROM-OUTSIDE\n").unwrap();
    let rel = "proc/sys/kernel/hostname";
    std::fs::remove_file(tree.path(rel)).unwrap();
    std::os::unix::fs::symlink(&secret, tree.path(rel)).unwrap();
    // A directory link out of the root is ignored too.
    std::fs::create_dir_all(tree._tmp.path().join("outside/hugepages-2048kB")).unwrap();
    std::fs::write(
        tree._tmp
            .path()
            .join("outside/hugepages-2048kB/nr_hugepages"),
        "777\n",
    )
    .unwrap();
    let hp = "sys/devices/system/node/node1/hugepages";
    std::fs::remove_dir_all(tree.path(hp)).unwrap();
    std::os::unix::fs::symlink(tree._tmp.path().join("outside"), tree.path(hp)).unwrap();
    let run = tree.topo(&[]);
    run.succeeded();
    assert!(!run.stdout.contains("SECRET"), "{}", run.stdout);
    assert!(!run.stdout.contains("777"), "{}", run.stdout);
    assert!(
        run.stdout.starts_with("host      (unknown)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains(rel) && run.stderr.contains("out of the root"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(hp), "{}", run.stderr);
}

#[test]
fn links_inside_the_tree_keep_working() {
    let tree = Tree::two_node();
    // As on a live system: a PCI device entry links into sys/devices, and a
    // node file links to a sibling through "..".
    let devices = tree.path("sys/devices/pci0000:3a");
    std::fs::create_dir_all(&devices).unwrap();
    let bdf = tree.path("sys/bus/pci/devices/0000:3b:00.0");
    std::fs::rename(&bdf, devices.join("0000:3b:00.0")).unwrap();
    std::os::unix::fs::symlink("../../../devices/pci0000:3a/0000:3b:00.0", &bdf).unwrap();
    let meminfo = tree.path("sys/devices/system/node/node1/meminfo");
    std::fs::rename(&meminfo, tree.path("sys/devices/system/node/meminfo1")).unwrap();
    std::os::unix::fs::symlink("../meminfo1", &meminfo).unwrap();
    let run = tree.topo(&[]);
    run.succeeded();
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    assert_eq!(
        run.stdout,
        String::from_utf8(crate::util::stdout_of([
            "topo",
            "--sysfs-root",
            fixture("two-node").to_str().unwrap()
        ]))
        .unwrap()
    );
}

#[test]
fn control_characters_from_the_machine_are_made_visible() {
    let tree = Tree::two_node();
    tree.write("proc/sys/kernel/hostname", "evil\x1b]0;owned\x07host\n");
    tree.write(
        "proc/cpuinfo",
        "processor\t: 0\nmodel name\t: Xeon\x1b[2J\u{9b}1m\x7f\n",
    );
    tree.write(
        "sys/kernel/mm/transparent_hugepage/enabled",
        "always [mad\x1bvise] never\n",
    );
    let run = tree.topo(&[]);
    run.succeeded();
    for raw in ['\x1b', '\x07', '\u{9b}', '\x7f'] {
        assert!(!run.stdout.contains(raw), "{raw:?} reached stdout");
    }
    assert!(
        run.stdout.contains(r"evil\x1b]0;owned\x07host"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(r"Xeon\x1b[2J\x9b1m\x7f"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(r"mad\x1bvise"), "{}", run.stdout);
    // Errors quoting a value escape it as well.
    let tree = Tree::two_node();
    tree.write("proc/sys/kernel/numa_balancing", "1\x1b[31m\n");
    let run = tree.topo(&[]);
    run.refused(&[r"1\x1b[31m"]);
    assert!(!run.stderr.contains('\x1b'));
}

#[test]
fn a_results_file_that_is_no_regular_file_is_refused_not_waited_on() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("results.json");
    mkfifo(&fifo);
    let fifo = fifo.to_str().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let not_regular = "not a regular file";
    for (args, word) in [
        (vec!["report", fifo], not_regular),
        (vec!["compare", fifo, fifo], not_regular),
        (vec!["model", fifo], not_regular),
        (vec!["report", "/dev/zero"], not_regular),
        (vec!["compare", "/dev/null", "/dev/null"], not_regular),
        (vec!["report", dir], "a directory"),
    ] {
        run(&args).refused(&[word, args[1]]);
    }
    // An endless regular file stops at the cap.
    let big = tmp.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(65 << 20)
        .unwrap();
    run(&["report", big.to_str().unwrap()]).refused(&["64 MiB"]);
}

#[test]
fn an_empty_node_list_is_bad_input() {
    for flag in ["--cpu-nodes", "--mem-nodes"] {
        for empty in ["", " "] {
            crate::util::rejects(&["matrix", flag, empty, "-r", "1"], &[flag, "empty"]);
        }
    }
    crate::util::rejects(
        &["model", "--validate", "--mem-nodes", "", "-s", "1M"],
        &["--mem-nodes", "empty"],
    );
}

#[test]
fn a_size_given_that_memory_cannot_hold_is_refused_before_measuring() {
    for op in ["read", "triad", "latency"] {
        let run = run(&["sweep", "-s", "104857600K", "-r", "1", "--op", op]);
        run.refused(&["-s 104857600", "free on node 0", op]);
        assert!(run.took < Duration::from_secs(10), "took {:?}", run.took);
    }
}

#[test]
fn a_size_not_measured_is_a_note_in_every_format_and_the_run_incomplete() {
    // A time limit too short for the whole sweep leaves sizes unmeasured.
    let base = [
        "sweep",
        "--op",
        "read",
        "-r",
        "1",
        "--threads",
        "1",
        "-t",
        "0.2",
    ];
    let with = |extra: &str| {
        let mut a = base.to_vec();
        a.push(extra);
        let run = run(&a);
        run.succeeded();
        run.stdout
    };
    let csv = with("--csv");
    let last = csv.lines().last().unwrap();
    assert!(
        last.starts_with("# note: ") && last.contains("not measured"),
        "{csv}"
    );
    let table = with("--table");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("note: ") && l.contains("not measured")),
        "{table}"
    );
    let doc: serde_json::Value = serde_json::from_str(&with("--json")).unwrap();
    assert_eq!(doc["complete"], false);
    let notes: Vec<&serde_json::Value> = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["notes"].as_array().into_iter().flatten())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("not measured")),
        "{notes:?}"
    );
}

/// A small sweep results file whose record names, metric and host strings
/// carry terminal controls and a right-to-left override, as a hostile or
/// damaged file could.
fn hostile_results(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let saved = dir.join(format!("clean-{name}"));
    run(&[
        "sweep",
        "--op",
        "read",
        "-s",
        "16K",
        "-r",
        "1",
        "--threads",
        "1",
        "--save",
        saved.to_str().unwrap(),
    ])
    .succeeded();
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    doc["host"]["hostname"] = "host\x1b[2J\x07\u{202e}".into();
    doc["host"]["cpu_model"] = "cpu\u{9b}31m".into();
    for r in doc["records"].as_array_mut().unwrap() {
        r["name"] = "read\x1b]0;owned\x07|<b>&".into();
    }
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    path
}

#[test]
fn compare_shows_control_characters_and_markup_from_files_safely() {
    let tmp = tempfile::tempdir().unwrap();
    let base = hostile_results(tmp.path(), "base.json");
    let other = hostile_results(tmp.path(), "other.json");
    let (b, o) = (base.to_str().unwrap(), other.to_str().unwrap());
    let labels = "lab\x1b[5m|<i>&,two";
    for format in [None, Some("--markdown"), Some("--csv"), Some("--json")] {
        let mut args = vec!["compare", b, o, "--labels", labels];
        args.extend(format);
        let out = run(&args);
        out.succeeded();
        for raw in ['\x1b', '\x07', '\u{9b}', '\u{202e}'] {
            assert!(
                !out.stdout.contains(raw),
                "{format:?}: {raw:?} reached stdout"
            );
        }
        if format == Some("--json") {
            // JSON escapes instead, and reads back as the same text.
            let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
            assert_eq!(v["rows"][0]["test"], "read\x1b]0;owned\x07|<b>&");
            continue;
        }
        assert!(
            out.stdout.contains(r"read\x1b]0;owned\x07"),
            "{}",
            out.stdout
        );
        if format == Some("--markdown") {
            assert!(
                out.stdout.contains(r"read\x1b]0;owned\x07\|\<b>&"),
                "{}",
                out.stdout
            );
            assert!(
                out.stdout.contains(r"| lab\x1b[5m\|\<i>& |"),
                "{}",
                out.stdout
            );
            // Every row has as many cells as the header.
            let cells: Vec<usize> = out
                .stdout
                .lines()
                .map(|l| l.matches('|').count() - l.matches("\\|").count())
                .collect();
            assert!(cells.windows(2).all(|w| w[0] == w[1]), "{}", out.stdout);
        }
        if format.is_none() {
            assert!(out.stdout.contains(r"lab\x1b[5m|<i>&"), "{}", out.stdout);
        }
    }
    // The report shows the host name without the override: as an escape in
    // Markdown, replaced in HTML.
    for (format, shown) in [
        ("markdown", r"host\x1b[2J\x07\u{202e}"),
        ("html", "host\u{FFFD}[2J\u{FFFD}\u{FFFD}"),
    ] {
        let out = run(&["report", b, "--format", format]);
        out.succeeded();
        assert!(
            !out.stdout.contains('\u{202e}') && out.stdout.contains(shown),
            "{format}: {}",
            out.stdout
        );
    }
    // The documents themselves: every control and override as a JSON
    // escape, the values unchanged.
    let out = run(&["report", b, "--format", "json"]);
    out.succeeded();
    for raw in ['\x1b', '\x07', '\u{9b}', '\u{202e}'] {
        assert!(!out.stdout.contains(raw), "json: {raw:?} reached stdout");
    }
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["host"]["hostname"], "host\x1b[2J\x07\u{202e}");
    assert_eq!(v["host"]["cpu_model"], "cpu\u{9b}31m");
    // The file's path in an error is shown safely too.
    let odd = tmp.path().join("odd\x1b[2Jname.json");
    run(&["report", odd.to_str().unwrap()]).refused(&[r"odd\x1b[2Jname.json"]);
}

#[test]
fn sets_and_lists_in_a_results_file_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean.json");
    run(&[
        "sweep",
        "--op",
        "read",
        "-s",
        "16K",
        "-r",
        "1",
        "--threads",
        "1",
        "--save",
        clean.to_str().unwrap(),
    ])
    .succeeded();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&clean).unwrap()).unwrap();
    let cpu = doc["host"]["topology"]["cpus"][0].clone();
    // Before the bounds, each of these few bytes sized a 128 KiB bitmap
    // (2.5 GiB in all), or 20000 CPUs of 1 KiB sets each.
    for (count, siblings) in [(20_000, 1_048_575), (20_000, 8191)] {
        let mut hostile = doc.clone();
        hostile["host"]["topology"]["cpus"] = (0..count)
            .map(|i| {
                let mut c = cpu.clone();
                c["id"] = i.into();
                c["smt_siblings"] = serde_json::json!([siblings]);
                c
            })
            .collect();
        let path = tmp.path().join("hostile.json");
        std::fs::write(&path, serde_json::to_vec(&hostile).unwrap()).unwrap();
        let html = tmp.path().join("r.html");
        // A memory limit the bitmaps would have broken.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1000000 && exec \"$0\" report \"$1\" -o \"$2\"")
            .arg(assert_cmd::cargo::cargo_bin("numabench"))
            .arg(&path)
            .arg(&html)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(err.contains("host description cannot be read"), "{err}");
        assert!(html.is_file());
    }
}
