//! Every format flag on the commands whose output is not a results
//! document: topo, place and compare.

use crate::util::{fixture, numabench, stdout_of};

const FLAGS: [&str; 6] = [
    "--json",
    "--csv",
    "--markdown",
    "--latex",
    "--html",
    "--format=text",
];

fn check(flag: &str, out: &str, must: &str) {
    match flag {
        "--json" => {
            serde_json::from_str::<serde_json::Value>(out).unwrap();
        }
        "--markdown" => assert!(out.starts_with("# ") || out.starts_with("| "), "{out}"),
        "--latex" => assert!(out.starts_with("\\documentclass") && out.contains("\\end{document}")),
        "--html" => assert!(out.starts_with("<!DOCTYPE html>") && out.ends_with("</html>\n")),
        _ => {}
    }
    assert!(out.contains(must), "{flag}: no {must}: {out}");
}

#[test]
fn topo_prints_every_format() {
    let root = fixture("two-node");
    for flag in FLAGS {
        let out = String::from_utf8(stdout_of([
            "topo",
            "--sysfs-root",
            root.to_str().unwrap(),
            flag,
        ]))
        .unwrap();
        check(
            flag,
            &out,
            if flag == "--json" { "twonode" } else { "62.6" },
        );
    }
    let csv = String::from_utf8(stdout_of([
        "topo",
        "--sysfs-root",
        root.to_str().unwrap(),
        "--csv",
    ]))
    .unwrap();
    assert!(csv.contains("\ndistances,0,1,21\n"), "{csv}");
}

#[test]
fn compare_prints_every_format() {
    let cases = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cases");
    for flag in FLAGS {
        let out = numabench()
            .current_dir(&cases)
            .args([
                "compare",
                "matrix.text.doc.json",
                "matrix.json.doc.json",
                flag,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{flag}");
        check(flag, &String::from_utf8(out.stdout).unwrap(), "latency");
    }
}

#[test]
fn place_prints_every_format() {
    for flag in FLAGS {
        let out =
            String::from_utf8(stdout_of(["place", "-s", "1M", "--pages", "base", flag])).unwrap();
        check(flag, &out, "default");
    }
}

#[test]
fn two_formats_at_once_are_refused() {
    let out = numabench()
        .args(["topo", "--json", "--csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
}
