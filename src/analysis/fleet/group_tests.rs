use super::*;
use crate::analysis::fleet::{Figure, Machine, specs};
use crate::results::names::fleet::{config as cfg, figure as id};

/// A machine with a local bandwidth, a local latency, a kernel.
fn machine(name: &str, nodes: usize, mem_gib: u64, bw: f64, lat: f64, kernel: &str) -> Machine {
    let figures = specs(&[])
        .iter()
        .map(|s| {
            let value = match s.id {
                id::LOCAL_BW_1T => bw,
                id::LOCAL_LATENCY => lat,
                id::NODES => nodes as f64,
                id::MEMORY_GIB => mem_gib as f64,
                _ => return None,
            };
            Some(Figure {
                value,
                cell: Some("0->0".into()),
                samples: vec![],
            })
        })
        .collect();
    Machine {
        name: name.into(),
        hostname: name.into(),
        source: format!("{name}.json"),
        started: String::new(),
        complete: true,
        cpu_model: "EPYC".into(),
        nodes,
        memory_bytes: (mem_gib << 30) - (name.len() as u64) * (1 << 20),
        figures,
        config: vec![(cfg::KERNEL, kernel.into())],
    }
}

fn fleet(n: usize) -> Vec<Machine> {
    (0..n)
        .map(|i| {
            let jitter = (i % 5) as f64;
            machine(
                &format!("n{i:03}"),
                4,
                256,
                20_000.0 + 50.0 * jitter,
                100.0 + jitter,
                "6.1",
            )
        })
        .collect()
}

fn figure<'a>(k: &'a KindReport, key: &str) -> &'a FigureReport {
    k.figures.iter().find(|f| f.id == key).unwrap()
}

#[test]
fn planted_outliers_of_every_sort_are_named() {
    let mut m = fleet(200);
    m[7].figures[0].as_mut().unwrap().value = 10_000.0; // a missing channel
    m[8].figures[4].as_mut().unwrap().value = 131.0; // latency 30% high
    m[9] = machine("n009", 2, 256, 20_000.0, 100.0, "6.1"); // NPS setting
    m[10].config[0].1 = "6.5".into(); // kernel drift
    let r = report(m, Rule::default(), specs(&[]));
    assert_eq!(r.kinds.len(), 2);
    let main = &r.kinds[0];
    assert_eq!(main.machines.len(), 199);
    assert_eq!(main.kind.nodes, 4);
    assert_eq!(main.kind.memory_gib, 256);
    let bw = figure(main, id::LOCAL_BW_1T);
    assert_eq!(bw.outliers.len(), 1, "{:?}", bw.outliers);
    assert_eq!(bw.outliers[0].machine, "n007");
    assert!(bw.outliers[0].worse);
    assert!((bw.outliers[0].deviation_pct + 50.0).abs() < 1.0);
    let lat = figure(main, id::LOCAL_LATENCY);
    assert_eq!(lat.outliers.len(), 1);
    assert_eq!(lat.outliers[0].machine, "n008");
    assert!(lat.outliers[0].worse);
    assert_eq!(main.drift.len(), 1);
    assert_eq!(main.drift[0].usual, "6.1");
    assert_eq!(main.drift[0].differing, [("n010".into(), "6.5".into())]);
    let rare = &r.kinds[1];
    assert_eq!(rare.kind.nodes, 2);
    assert_eq!(rare.rare_beside.as_ref().unwrap().1, 199);
    assert_eq!(r.flagged(), ["n007", "n008", "n009", "n010"]);
}

#[test]
fn a_uniform_fleet_has_no_finding() {
    let r = report(fleet(50), Rule::default(), specs(&[]));
    assert_eq!(r.kinds.len(), 1);
    assert!(r.flagged().is_empty(), "{:?}", r.flagged());
    let s = figure(&r.kinds[0], id::LOCAL_BW_1T).spread.unwrap();
    assert_eq!(s.n, 50);
    assert_eq!(s.median, 20_100.0);
}

#[test]
fn a_mixed_cluster_is_compared_like_with_like() {
    // Half the machines have twice the memory and twice the bandwidth:
    // two kinds, neither rare, nobody an outlier.
    let mut m = fleet(20);
    for (i, x) in m.iter_mut().enumerate().take(10) {
        *x = machine(&format!("big{i}"), 4, 512, 40_000.0, 100.0, "6.1");
    }
    let r = report(m, Rule::default(), specs(&[]));
    assert_eq!(r.kinds.len(), 2);
    assert!(r.kinds.iter().all(|k| k.rare_beside.is_none()));
    assert!(r.flagged().is_empty(), "{:?}", r.flagged());
}

#[test]
fn memory_sizes_a_few_mib_apart_are_one_kind() {
    let mut m = fleet(10);
    // 255.99 GiB against 256 GiB: one size, not a rounding boundary.
    m[3].memory_bytes -= 200 << 20;
    let r = report(m, Rule::default(), specs(&[]));
    assert_eq!(r.kinds.len(), 1);
}
