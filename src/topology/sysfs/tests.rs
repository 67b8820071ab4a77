//! Tests of the sysfs reader: fixtures, value parsers, damaged trees.

use super::*;

mod reading {
    use super::*;

    #[test]
    fn sizes_as_sysfs_writes_them() {
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn bracketed_choice() {
        assert_eq!(
            bracketed("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("always madvise never"), None);
    }

    #[test]
    fn node_meminfo_lines() {
        let text = "Node 1 MemTotal:       65854000 kB\nNode 1 MemFree:        60000000 kB\nNode 1 HugePages_Total:     0\n";
        assert_eq!(meminfo_kb(text, "MemTotal"), Some(65_854_000));
        assert_eq!(meminfo_kb(text, "MemFree"), Some(60_000_000));
        assert_eq!(meminfo_kb("MemTotal: 10 kB\n", "MemTotal"), Some(10));
        assert_eq!(meminfo_kb(text, "Active"), None);
    }

    #[test]
    fn cpu_models() {
        assert_eq!(
            cpu_model("processor: 0\nmodel name\t: AMD EPYC\n"),
            "AMD EPYC"
        );
        assert_eq!(cpu_model("CPU part\t: 0xd0c\n"), "CPU part 0xd0c");
        assert_eq!(cpu_model(""), "");
        assert_eq!(
            cpu_model(
                "processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\nclock\t\t: 3800.000000MHz\n"
            ),
            "POWER9 (raw), altivec supported"
        );
        assert_eq!(
            cpu_model(
                "processor  : 0\nvendor     : GenuineIntel\narch       : IA-64\nfamily     : Itanium 2\nmodel      : 2\n"
            ),
            "Itanium 2"
        );
        assert_eq!(
            cpu_model(
                "vendor_id       : IBM/S390\n# processors    : 4\nprocessor 0: version = FF,  identification = 0D7A28,  machine = 8561\n"
            ),
            "IBM/S390 machine 8561"
        );
    }

    #[test]
    fn pcie_links() {
        assert_eq!(parse_link_speed("16.0 GT/s PCIe\n"), Ok(Some(16.0)));
        assert_eq!(parse_link_speed("Unknown\n"), Ok(None));
        for bad in ["NaN GT/s", "-16 GT/s", "inf", "0 GT/s", "1e9", "fast", ""] {
            assert_eq!(parse_link_speed(bad), Err(()), "{bad}");
        }
        assert_eq!(parse_link_width("16"), Ok(Some(16)));
        assert_eq!(parse_link_width("0"), Ok(None));
        assert_eq!(parse_link_width("-16"), Err(()));
        assert_eq!(parse_link_width("64"), Err(()));
        let gpu = Accelerator {
            pci_address: String::new(),
            vendor: String::new(),
            device: String::new(),
            class: String::new(),
            kind: String::new(),
            numa_node: None,
            link_speed_gt_s: Some(16.0),
            link_width: Some(16),
            max_link_speed_gt_s: None,
            max_link_width: None,
        };
        // PCIe 4.0 x16: 31.5 GB/s per direction after 128b/130b encoding.
        let peak = gpu.link_peak_mb_s().unwrap();
        assert!((peak - 31_507.7).abs() < 1.0, "{peak}");
    }
}

mod value_parsers {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text is a speed or width in range, unknown, or an error:
        /// never a panic, NaN, or a negative or infinite figure.
        #[test]
        fn link_values_are_in_range_or_refused(text in "\\PC{0,24}|-?[0-9.eE+]{1,12} GT/s|NaN|inf") {
            if let Ok(Some(gt)) = parse_link_speed(&text) {
                prop_assert!(gt.is_finite() && gt > 0.0 && gt <= 256.0);
            }
            if let Ok(Some(w)) = parse_link_width(&text) {
                prop_assert!((1..=32).contains(&w));
            }
        }

        /// Any meminfo text gives sizes up to 1 EiB with free <= total, or an
        /// error naming the file.
        #[test]
        fn meminfo_is_a_size_or_an_error(
            total in "\\PC{0,12}|[0-9]{1,22}( kB)?",
            free in "\\PC{0,12}|[0-9]{1,22}( kB)?",
        ) {
            let m = Meminfo {
                file: "proc/meminfo".into(),
                text: Some(format!("MemTotal: {total}\nMemFree: {free}\n")),
            };
            match m.total_free() {
                Ok(Some((t, f))) => prop_assert!(f.is_some_and(|f| f <= t) && t <= MAX_BYTES),
                Ok(None) => prop_assert!(false, "a present file is never unknown"),
                Err(TopologyError::Malformed { file, .. }) => prop_assert_eq!(file, "proc/meminfo"),
                Err(e) => prop_assert!(false, "{e}"),
            }
        }
    }
}

mod damaged_trees {
    use super::*;
    use proptest::prelude::*;
    use std::path::Path;

    fn copy_tree(from: &Path, to: &Path) {
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            let kind = entry.file_type().unwrap();
            if kind.is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target)
                    .unwrap();
            } else if kind.is_dir() {
                std::fs::create_dir(&target).unwrap();
                copy_tree(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).unwrap();
            }
        }
    }

    fn copy_of(fixture: &str) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sysfs")
            .join(fixture);
        copy_tree(&from, tmp.path());
        tmp
    }

    /// `fixture` read with each file of `damage` (a path in the tree, its
    /// new text) written over first.
    fn read_damaged(fixture: &str, damage: &[(&str, &str)]) -> Topology {
        let tmp = copy_of(fixture);
        for (file, text) in damage {
            std::fs::write(tmp.path().join(file), text).unwrap();
        }
        read_topology(&SysfsRoot::new(tmp.path())).unwrap()
    }

    #[test]
    fn siblings_are_held_to_the_online_cpus_and_include_the_cpu_itself() {
        let topo = read_damaged(
            "interleaved-smt",
            &[(
                "sys/devices/system/cpu/cpu0/topology/thread_siblings_list",
                "1-8191\n",
            )],
        );
        let cpu0 = topo.cpu(0).unwrap();
        assert!(cpu0.smt_siblings.contains(0), "{:?}", cpu0.smt_siblings);
        assert!(
            cpu0.smt_siblings.is_subset(&topo.cpus_online),
            "{:?}",
            cpu0.smt_siblings
        );
        assert_eq!(cpu0.smt_siblings.len(), topo.cpus_online.len());
        // The untouched CPUs keep what the kernel wrote: pairs.
        assert_eq!(topo.cpu(1).unwrap().smt_siblings.len(), 2);
    }

    #[test]
    fn a_kernel_without_numa_is_one_node_with_every_cpu_and_all_memory() {
        let tmp = copy_of("local-1node");
        std::fs::remove_dir_all(tmp.path().join("sys/devices/system/node")).unwrap();
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        assert!(!topo.numa_sysfs);
        assert_eq!(topo.nodes.len(), 1);
        let node = &topo.nodes[0];
        assert_eq!(node.id, 0);
        assert_eq!(node.cpus, topo.cpus_online);
        assert!(node.has_cpu && node.has_memory);
        assert!(node.mem_total_bytes > 0 && node.mem_free_bytes <= Some(node.mem_total_bytes));
        assert_eq!(node.distances, [10]);
        assert!(
            topo.cpus.iter().all(|c| c.node == Some(0)),
            "{:?}",
            topo.cpus
        );
        let text = crate::output::topo_text::render(&topo);
        assert!(
            text.contains("no NUMA information; shown as one node"),
            "{text}"
        );
    }

    #[test]
    fn zero_hmat_figures_are_not_reported_and_noted() {
        let tmp = copy_of("cxl-memonly");
        let dir = tmp
            .path()
            .join("sys/devices/system/node/node2/access0/initiators");
        std::fs::write(dir.join("read_latency"), "0\n").unwrap();
        std::fs::write(dir.join("write_bandwidth"), "0\n").unwrap();
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        let hmat = topo.node(2).unwrap().hmat.as_ref().unwrap();
        assert_eq!(hmat.read_latency_ns, None);
        assert_eq!(hmat.write_bandwidth_mb_s, None);
        assert!(hmat.read_bandwidth_mb_s.is_some());
        let notes = topo.notes.join("\n");
        assert!(
            notes.contains("HMAT gives 0 for write_bandwidth, read_latency"),
            "{notes}"
        );
    }

    #[test]
    fn cpu_initiators_come_from_access1() {
        let tmp = copy_of("cxl-memonly");
        let node2 = tmp.path().join("sys/devices/system/node/node2");
        // access0 names the CPU-less node 3 (say) as its best initiator;
        // access1, the best CPU initiator, is node 0 at other figures.
        let a1 = node2.join("access1/initiators");
        std::fs::create_dir_all(a1.join("node0")).unwrap();
        for (f, v) in [
            ("read_bandwidth", "11111"),
            ("write_bandwidth", "11112"),
            ("read_latency", "333"),
            ("write_latency", "334"),
        ] {
            std::fs::write(a1.join(f), format!("{v}\n")).unwrap();
        }
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        let hmat = topo.node(2).unwrap().hmat.as_ref().unwrap();
        assert_eq!(hmat.initiators.to_list(), "0");
        assert_eq!(hmat.read_bandwidth_mb_s, Some(11111));
        assert_eq!(hmat.read_latency_ns, Some(333));
    }

    #[test]
    fn a_loop_of_links_is_an_error_naming_the_file_not_an_empty_node() {
        for (name, target) in [("cpulist", "cpulist"), ("cpulist", "other")] {
            let tmp = copy_of("two-node");
            let node0 = tmp.path().join("sys/devices/system/node/node0");
            std::fs::remove_file(node0.join(name)).unwrap();
            std::os::unix::fs::symlink(target, node0.join(name)).unwrap();
            if target != name {
                std::os::unix::fs::symlink(name, node0.join(target)).unwrap();
            }
            let e = read_topology(&SysfsRoot::new(tmp.path())).unwrap_err();
            let text = e.to_string();
            assert!(
                text.contains("node0/cpulist is a loop of symbolic links"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_node_directory_with_an_absurd_id_is_ignored_with_a_note_or_refused() {
        let base = crate::topology::fixture("two-node");
        for name in ["node4294967296", "node99999999999999999999999", "node1024"] {
            let tmp = copy_of("two-node");
            let node = tmp.path().join("sys/devices/system/node");
            std::fs::create_dir(node.join(name)).unwrap();
            for f in ["cpulist", "meminfo", "distance"] {
                std::fs::copy(node.join("node1").join(f), node.join(name).join(f)).unwrap();
            }
            let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
            assert_eq!(topo.nodes, base.nodes, "{name}");
            let notes = topo.notes.join("\n");
            assert!(
                notes.contains(&format!("{name}: a node id beyond 1023")),
                "{notes}"
            );
            // Without node/online the directory names are all there is.
            std::fs::remove_file(node.join("online")).unwrap();
            let e = read_topology(&SysfsRoot::new(tmp.path())).unwrap_err();
            assert!(e.to_string().contains(name), "{e}");
        }
    }

    #[test]
    fn an_online_node_without_its_directory_is_said() {
        let tmp = copy_of("two-node");
        let node = tmp.path().join("sys/devices/system/node");
        std::fs::rename(node.join("node1"), node.join("node1024")).unwrap();
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        let notes = topo.notes.join("\n");
        assert!(
            notes.contains("node 1 is online but sys/devices/system/node/node1 is missing"),
            "{notes}"
        );
    }

    #[test]
    fn nodes_that_copy_each_other_keep_their_memory_and_one_keeps_the_cpus() {
        let tmp = copy_of("two-node");
        let node = tmp.path().join("sys/devices/system/node");
        std::fs::write(node.join("node1/cpulist"), "0-7\n").unwrap();
        std::fs::write(node.join("node0/distance"), "10 10\n").unwrap();
        std::fs::write(node.join("node1/distance"), "10 10\n").unwrap();
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        let notes = topo.notes.join("\n");
        assert!(
            notes.contains("firmware bug: nodes 0-1 list the same CPUs (0-7); they are taken as node 0's, and nodes 1 as memory without CPUs"),
            "{notes}"
        );
        assert!(topo.warnings().iter().any(|w| w.contains("firmware bug")));
        assert_eq!(topo.node(0).unwrap().cpus.to_list(), "0-7");
        let n1 = topo.node(1).unwrap();
        assert!(n1.cpus.is_empty() && !n1.has_cpu && n1.has_memory);
        assert_eq!(topo.usable_cpu_nodes().to_list(), "0");
        assert_eq!(topo.usable_memory_nodes().to_list(), "0-1");
        assert!(
            topo.cpus
                .iter()
                .filter(|c| c.id < 8)
                .all(|c| c.node == Some(0))
        );
        // The clean machine has no such note.
        let clean = copy_of("two-node");
        let topo = read_topology(&SysfsRoot::new(clean.path())).unwrap();
        assert!(topo.notes.is_empty(), "{:?}", topo.notes);
    }

    /// Each `cpuN/topology` directory of a copy of `fixture`.
    fn topology_dirs(root: &Path) -> Vec<std::path::PathBuf> {
        let cpu = root.join("sys/devices/system/cpu");
        std::fs::read_dir(cpu)
            .unwrap()
            .flatten()
            .map(|d| d.path().join("topology"))
            .filter(|t| t.is_dir())
            .collect()
    }

    #[test]
    fn packages_come_from_the_package_lists_where_the_ids_cannot_say() {
        for (id, says) in [("-1", false), ("0", true)] {
            let tmp = copy_of("two-node");
            for t in topology_dirs(tmp.path()) {
                std::fs::write(t.join("physical_package_id"), format!("{id}\n")).unwrap();
            }
            let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
            assert_eq!(topo.packages(), 2);
            assert_eq!(topo.cpu(8).unwrap().package, Some(1));
            let notes = topo.notes.join("\n");
            assert_eq!(
                notes.contains("physical_package_id does not match"),
                says,
                "{notes}"
            );
        }
        // Ids that agree with the lists are kept as the kernel wrote them.
        let wide = crate::topology::fixture("quirk-wide-package-ids");
        assert_eq!(wide.cpu(8).unwrap().package, Some(65536));
    }

    #[test]
    fn core_cpus_stand_for_thread_siblings() {
        let tmp = copy_of("interleaved-smt");
        for t in topology_dirs(tmp.path()) {
            std::fs::rename(t.join("thread_siblings_list"), t.join("core_cpus_list")).unwrap();
            // Core ids alone would make one core of each package.
            std::fs::write(t.join("core_id"), "0\n").unwrap();
        }
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        assert_eq!(topo.cores(), 16);
        assert_eq!(topo.cpu(0).unwrap().smt_siblings.to_list(), "0,16");
    }

    #[test]
    fn amd_compute_units_sharing_a_core_id_are_still_two_cores() {
        let tmp = copy_of("amd-4node");
        for t in topology_dirs(tmp.path()) {
            let n: usize = t.parent().unwrap().file_name().unwrap().to_str().unwrap()[3..]
                .parse()
                .unwrap();
            std::fs::write(
                t.join("thread_siblings_list"),
                format!("{}-{}\n", n & !1, n | 1),
            )
            .unwrap();
            std::fs::write(t.join("core_id"), format!("{}\n", (n % 16) / 2)).unwrap();
        }
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        assert_eq!((topo.cores(), topo.threads_per_core()), (32, 1));
        // Another vendor's siblings stay threads.
        let info = tmp.path().join("proc/cpuinfo");
        let text = std::fs::read_to_string(&info).unwrap();
        std::fs::write(&info, text.replace("AuthenticAMD", "GenuineIntel")).unwrap();
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        assert_eq!((topo.cores(), topo.threads_per_core()), (16, 2));
    }

    #[test]
    fn cpus_listed_by_two_nodes_go_to_the_lower_one() {
        let tmp = copy_of("two-node");
        let node = tmp.path().join("sys/devices/system/node");
        std::fs::write(node.join("node1/cpulist"), "4-15\n").unwrap();
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        assert_eq!(topo.node(0).unwrap().cpus.to_list(), "0-7");
        assert_eq!(topo.node(1).unwrap().cpus.to_list(), "8-15");
        let notes = topo.notes.join("\n");
        assert!(
            notes.contains("node 1 lists CPUs 4-7 that node(s) 0 list too"),
            "{notes}"
        );
    }

    #[test]
    fn a_cache_with_a_level_or_size_of_0_is_not_shown_and_a_0_line_is_not_reported() {
        let base = crate::topology::fixture("two-node");
        let l3 = |t: &Topology| t.caches.iter().filter(|c| c.level == 3).count();
        assert!(l3(&base) > 0);
        for (file, bad, says) in [
            ("level", "0", "level 0 is not one a cache has"),
            ("level", "4294967295", "is not one a cache has"),
            ("size", "0K", "a size of 0"),
        ] {
            let tmp = copy_of("two-node");
            let cpu = tmp.path().join("sys/devices/system/cpu");
            for dir in std::fs::read_dir(&cpu).unwrap().flatten() {
                let index3 = dir.path().join("cache/index3");
                if index3.is_dir() {
                    std::fs::write(index3.join(file), format!("{bad}\n")).unwrap();
                }
            }
            let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
            assert_eq!(l3(&topo), 0, "{file}={bad}");
            assert_eq!(topo.caches.len(), base.caches.len() - l3(&base));
            let notes = topo.notes.join("\n");
            assert!(notes.contains(says), "{file}={bad}: {notes}");
        }
        let topo = read_damaged(
            "two-node",
            &[(
                "sys/devices/system/cpu/cpu0/cache/index3/coherency_line_size",
                "0\n",
            )],
        );
        let c = topo
            .caches
            .iter()
            .find(|c| c.level == 3 && c.cpus.contains(0))
            .unwrap();
        assert_eq!(c.line_bytes, None);
        assert!(
            topo.notes.join("\n").contains("a line of 0 B"),
            "{:?}",
            topo.notes
        );
        assert!(
            base.caches
                .iter()
                .all(|c| c.line_bytes.is_some_and(|b| b > 0))
        );
    }

    #[test]
    fn a_tier_naming_nodes_that_are_not_online_keeps_only_the_online_ones() {
        let base = crate::topology::fixture("cxl-memonly");
        assert!(base.notes.is_empty(), "{:?}", base.notes);
        let tiers = |t: &Topology| -> Vec<(u32, String)> {
            t.memory_tiers
                .iter()
                .map(|m| (m.id, m.nodes.to_list()))
                .collect()
        };
        let dir = "sys/devices/virtual/memory_tiering";
        let topo = read_damaged(
            "cxl-memonly",
            &[
                (&format!("{dir}/memory_tier4/nodelist"), "0-1,7,1000\n"),
                (&format!("{dir}/memory_tier22/nodelist"), "9\n"),
            ],
        );
        assert_eq!(tiers(&topo), [(4, "0-1".to_string())]);
        assert_eq!(topo.node(2).unwrap().tier, None);
        assert_eq!(topo.node(0).unwrap().tier, Some(4));
        let notes = topo.notes.join("\n");
        assert!(
            notes.contains("node(s) 7,1000 are not online; they are left out"),
            "{notes}"
        );
        assert!(
            notes.contains("node(s) 9 are not online; the tier is not shown"),
            "{notes}"
        );
    }

    #[test]
    fn a_distance_no_kernel_writes_leaves_its_row_out_with_a_note() {
        for bad in ["0 21", "10 4294967295", "10 256", "9 21"] {
            let row = format!("{bad}\n");
            let topo = read_damaged(
                "two-node",
                &[("sys/devices/system/node/node0/distance", &row)],
            );
            assert!(topo.node(0).unwrap().distances.is_empty(), "{bad}");
            assert_eq!(topo.node(1).unwrap().distances, [21, 10]);
            let notes = topo.notes.join("\n");
            assert!(notes.contains("is not one Linux writes"), "{bad}: {notes}");
        }
    }

    #[test]
    fn a_distance_row_that_fits_no_node_set_is_left_out_with_a_note() {
        let tmp = copy_of("two-node");
        let node = tmp.path().join("sys/devices/system/node");
        std::fs::write(node.join("node0/distance"), "10 21 31\n").unwrap();
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        assert!(topo.node(0).unwrap().distances.is_empty());
        assert_eq!(topo.node(1).unwrap().distances, [21, 10]);
        let notes = topo.notes.join("\n");
        assert!(notes.contains("3 distances for 2 online nodes"), "{notes}");
    }

    #[test]
    fn an_invisible_byte_in_a_list_is_shown_escaped() {
        let tmp = copy_of("two-node");
        let node = tmp.path().join("sys/devices/system/node");
        std::fs::write(node.join("online"), "0-1\u{1}\n").unwrap();
        let e = read_topology(&SysfsRoot::new(tmp.path()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\\x01") || e.contains("\\u{1}"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any file of a capture replaced by arbitrary bytes gives a topology
        /// or an error naming the file, never a panic.
        #[test]
        fn any_damaged_file_is_an_error_not_a_panic(pick in 0usize..10_000, junk in proptest::collection::vec(any::<u8>(), 0..64)) {
            let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs/cxl-memonly");
            let files: Vec<String> = {
                let src = SysfsRoot::new(&fixture);
                read_topology(&src).unwrap();
                src.accessed().files.into_iter().collect()
            };
            let tmp = tempfile::tempdir().unwrap();
            copy_tree(&fixture, tmp.path());
            let victim = &files[pick % files.len()];
            std::fs::write(tmp.path().join(victim), &junk).unwrap();
            match read_topology(&SysfsRoot::new(tmp.path())) {
                Ok(_) => {}
                Err(TopologyError::Malformed { file, .. }) => prop_assert_eq!(&file, victim),
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
        }
    }
}
