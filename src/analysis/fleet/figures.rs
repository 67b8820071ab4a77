//! One results document reduced to a fleet's row: its key figures, each
//! the worst cell of the matrix where the matrix has several (a missing
//! memory channel on one socket shows in that socket's cell only; an
//! average over the cells would hide half of it), and its settings. The
//! matrix's and the host's figures are read here; each probe reads its
//! own (`Probe::fleet_figures`) with the helpers below.

use super::{Config, Figure, Machine, OWN};
use crate::analysis::atlas::Atlas;
use crate::analysis::model::PeakSource;
use crate::results::names::fleet::{config as cfg, figure as id};
use crate::results::names::matrix::{kind, param as mx};
use crate::results::names::{metric, probe};
use crate::results::{LeanDocument, LeanRecord, Record};
use crate::view::Probe;

/// One cell of one figure: (cpu node, memory node, value, samples).
pub(crate) type Cell<'a> = (u64, u64, f64, &'a [f64]);

fn cells<'a>(matrix: &[&'a Record], which: &str, m: &str) -> Vec<Cell<'a>> {
    matrix
        .iter()
        .filter(|r| r.str_param(mx::KIND) == Some(which))
        .filter_map(|r| {
            let (c, n) = r.node_pair()?;
            let v = r.measured(m)?.value;
            let s = r.samples.get(m).map_or(&[][..], Vec::as_slice);
            Some((c, n, v, s))
        })
        .collect()
}

/// `r`'s figure `m` as a cell of its node pair, without its samples: a
/// probe's figure is compared across fleets without noise marks.
pub(crate) fn cell(r: &Record, m: &str) -> Option<Cell<'static>> {
    let (c, n) = r.node_pair()?;
    Some((c, n, r.measured(m)?.value, &[]))
}

/// The worst local (or remote) cell: the lowest bandwidth, the highest
/// latency.
pub(crate) fn worst(cells: &[Cell<'_>], local: bool, lower_better: bool) -> Option<Figure> {
    let pick = cells
        .iter()
        .filter(|c| (c.0 == c.1) == local)
        .min_by(|a, b| {
            if lower_better {
                b.2.total_cmp(&a.2)
            } else {
                a.2.total_cmp(&b.2)
            }
        })?;
    Some(Figure {
        value: pick.2,
        cell: Some(format!("{}->{}", pick.0, pick.1)),
        samples: pick.3.to_vec(),
    })
}

/// A figure of no single cell.
pub(crate) fn plain(value: f64) -> Option<Figure> {
    Some(Figure {
        value,
        cell: None,
        samples: Vec::new(),
    })
}

/// The value of each of the fleet's own figures, by its id.
fn figure(doc: &LeanDocument, spec_id: &str, matrix: &[&Record], atlas: &Atlas) -> Option<Figure> {
    let single = || cells(matrix, kind::SINGLE, metric::BANDWIDTH_MB_S);
    let saturated = || cells(matrix, kind::SATURATED, metric::BANDWIDTH_MB_S);
    let latency = || cells(matrix, kind::LATENCY, metric::LATENCY_NS);
    match spec_id {
        id::LOCAL_BW_1T => worst(&single(), true, false),
        id::REMOTE_BW_1T => worst(&single(), false, false),
        id::LOCAL_BW_SAT => worst(&saturated(), true, false),
        id::REMOTE_BW_SAT => worst(&saturated(), false, false),
        id::LOCAL_LATENCY => worst(&latency(), true, true),
        id::REMOTE_LATENCY => worst(&latency(), false, true),
        id::CLASSES if !atlas.single.is_empty() => {
            let (_, classes) = crate::analysis::placement::system_classes(atlas);
            plain(classes.classes.len() as f64)
        }
        id::NODES => plain(doc.host.topology.nodes.len() as f64).filter(|f| f.value > 0.0),
        id::MEMORY_GIB => plain(memory_bytes(doc) as f64 / GIB).filter(|f| f.value > 0.0),
        _ => None,
    }
}

const GIB: f64 = (1u64 << 30) as f64;

fn memory_bytes(doc: &LeanDocument) -> u64 {
    doc.host
        .topology
        .nodes
        .iter()
        .map(|n| n.mem_total_bytes)
        .sum()
}

/// Each node's share of the memory, to the nearest 5% (`50/50%`): the
/// total is the kind's already, and shares in 5% steps centred on the usual
/// splits (50, 25, 12.5 rounded) do not flip between identical machines
/// that differ by a few MiB, as GiB figures rounded at .5 would.
fn memory_shares(nodes: &[crate::results::LeanNode]) -> String {
    let total: u64 = nodes.iter().map(|n| n.mem_total_bytes).sum();
    if total == 0 {
        return "unknown".into();
    }
    let shares: Vec<String> = nodes
        .iter()
        .map(|n| {
            let pct = 100.0 * n.mem_total_bytes as f64 / total as f64;
            format!("{:.0}", (pct / 5.0).round() * 5.0)
        })
        .collect();
    format!("{}%", shares.join("/"))
}

/// The settings a kind's machines should share.
fn config(doc: &LeanDocument, atlas: &Atlas) -> Config {
    let h = &doc.host;
    let text = |s: &str| crate::text::escape(s).into_owned();
    let mut c: Config = vec![
        (cfg::KERNEL, text(&h.kernel)),
        (
            cfg::THP,
            format!(
                "{}/{}",
                text(h.thp.enabled.as_deref().unwrap_or("none")),
                text(h.thp.defrag.as_deref().unwrap_or("none"))
            ),
        ),
        (
            cfg::NUMA_BALANCING,
            h.numa_balancing.map_or("unknown".into(), |b| b.to_string()),
        ),
        (cfg::MEMORY_PER_NODE, memory_shares(&h.topology.nodes)),
        (cfg::CPUS, h.topology.cpus.to_string()),
        (cfg::VERSION, text(&doc.version)),
    ];
    if let Some(p) = &atlas.peak
        && let PeakSource::Dmi { mt_s, channels, .. } = p.source
    {
        c.push((
            cfg::DIMMS,
            format!("{channels} channels/node at {mt_s} MT/s"),
        ));
    }
    c
}

/// `doc`, read from `source`, as a row of the fleet: the fleet's own
/// figures, then those of each probe of `registry` (as
/// [`super::specs`] lists them).
pub(crate) fn read(doc: &LeanDocument, source: &str, registry: &[&dyn Probe]) -> Machine {
    let records: Vec<Record> = doc.records.iter().map(LeanRecord::to_record).collect();
    let of = |name: &str| -> Vec<&Record> { records.iter().filter(|r| r.probe == name).collect() };
    let matrix = of(probe::MATRIX);
    let atlas = Atlas::from_records(matrix.iter().copied());
    let mut figures: Vec<Option<Figure>> = OWN
        .iter()
        .map(|s| figure(doc, s.id, &matrix, &atlas))
        .collect();
    for p in registry {
        let own = of(p.probe());
        figures.extend(p.fleet_figures().iter().map(|f| (f.read)(&own)));
    }
    Machine {
        name: crate::text::escape(doc.machine()).into_owned(),
        hostname: crate::text::escape(&doc.host.hostname).into_owned(),
        source: crate::text::escape(source).into_owned(),
        started: crate::text::escape(&doc.started).into_owned(),
        complete: doc.complete,
        cpu_model: crate::text::escape(&doc.host.cpu_model).into_owned(),
        nodes: doc.host.topology.nodes.len(),
        memory_bytes: memory_bytes(doc),
        figures,
        config: config(doc, &atlas),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::kernels::pattern::Pattern;
    use crate::probes::REGISTRY;
    use crate::results::names::c2c::variant::CAS;
    use crate::results::names::fleet::figure as id;
    use crate::results::names::loaded::{kind as ld_kind, metric as ld_metric, param as ld};
    use crate::results::names::param;
    use crate::results::names::peak::{kind as pk_kind, param as pk};
    use crate::results::{Better, Document, Record};

    /// A matrix record as the probe writes it.
    pub(crate) fn cell(which: &str, c: usize, m: usize, v: f64) -> Record {
        let (key, unit, better) = if which == kind::LATENCY {
            (metric::LATENCY_NS, "ns", Better::Lower)
        } else {
            (metric::BANDWIDTH_MB_S, "MB/s", Better::Higher)
        };
        let mut r = Record::new(probe::MATRIX, &format!("{which} {c}->{m}"))
            .param(mx::KIND, which)
            .param(param::CPU_NODE, c)
            .param(param::MEM_NODE, m)
            .metric(key, v, unit, better);
        r.samples.insert(key.into(), vec![v * 0.99, v, v * 0.995]);
        r
    }

    /// A 2-node document with every matrix cell.
    pub(crate) fn two_node_doc(host: &str, local: f64, remote: f64) -> Document {
        let mut d = Document::new(&crate::topology::fixture("two-node"));
        d.host.hostname = host.into();
        d.host.batch_node = None;
        for (c, m) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let bw = if c == m { local } else { remote };
            d.records.push(cell(kind::SINGLE, c, m, bw));
            d.records.push(cell(kind::SATURATED, c, m, bw * 4.0));
            let lat = if c == m { 90.0 } else { 140.0 };
            d.records.push(cell(kind::LATENCY, c, m, lat));
        }
        d.finish();
        d
    }

    fn lean(d: &Document) -> LeanDocument {
        LeanDocument::from_json(std::str::from_utf8(&d.to_json().unwrap()).unwrap()).unwrap()
    }

    fn value(m: &Machine, key: &str) -> Option<f64> {
        let i = super::super::specs(REGISTRY)
            .iter()
            .position(|s| s.id == key)
            .unwrap();
        m.figure(i).map(|f| f.value)
    }

    #[test]
    fn the_worst_cell_is_the_figure() {
        let mut d = two_node_doc("a", 10_000.0, 6_000.0);
        // Node 1's own memory lost half its channels.
        d.records[9] = cell(kind::SINGLE, 1, 1, 5_000.0);
        let m = read(&lean(&d), "a.json", REGISTRY);
        assert_eq!(value(&m, id::LOCAL_BW_1T), Some(5_000.0));
        let specs = super::super::specs(REGISTRY);
        let i = specs.iter().position(|s| s.id == id::LOCAL_BW_1T).unwrap();
        assert_eq!(m.figure(i).unwrap().cell.as_deref(), Some("1->1"));
        assert_eq!(value(&m, id::REMOTE_BW_1T), Some(6_000.0));
        assert_eq!(value(&m, id::LOCAL_BW_SAT), Some(40_000.0));
        assert_eq!(value(&m, id::LOCAL_LATENCY), Some(90.0));
        assert_eq!(value(&m, id::REMOTE_LATENCY), Some(140.0));
        assert_eq!(value(&m, id::NODES), Some(2.0));
        assert!(value(&m, id::CLASSES).unwrap() >= 2.0);
        assert_eq!(m.name, "a");
        assert_eq!(m.setting(cfg::KERNEL), Some(d.host.kernel.as_str()));
    }

    #[test]
    fn memory_shares_do_not_flip_on_a_few_mib() {
        let node = |gib: f64| crate::results::LeanNode {
            id: 0,
            has_cpu: true,
            has_memory: true,
            mem_total_bytes: (gib * GIB) as u64,
        };
        assert_eq!(memory_shares(&[node(255.49), node(255.51)]), "50/50%");
        assert_eq!(memory_shares(&[node(256.0), node(192.0)]), "55/45%");
        assert_eq!(memory_shares(&[]), "unknown");
    }

    #[test]
    fn a_document_without_a_matrix_has_only_its_host_figures() {
        let mut d = two_node_doc("b", 1.0, 1.0);
        d.records.clear();
        let m = read(&lean(&d), "b.json", REGISTRY);
        assert_eq!(value(&m, id::LOCAL_BW_1T), None);
        assert_eq!(value(&m, id::CLASSES), None);
        assert_eq!(value(&m, id::NODES), Some(2.0));
    }

    #[test]
    fn the_short_probes_give_their_figures_where_present() {
        let mut d = two_node_doc("c", 10_000.0, 6_000.0);
        let at = |name: &str, c: u64, m: u64| {
            Record::new(name, "r")
                .param(param::CPU_NODE, c)
                .param(param::MEM_NODE, m)
        };
        for (c, m, ns) in [(0, 0, 95.0), (1, 1, 101.0), (0, 1, 150.0)] {
            d.records.push(
                at(probe::LATENCY, c, m)
                    .param(param::PATTERN, Pattern::PAGE_LOCAL)
                    .metric(metric::LATENCY_NS, ns, "ns", Better::Lower),
            );
        }
        d.records.push(
            at(probe::LOADED, 0, 0)
                .param(ld::KIND, ld_kind::KNEE)
                .metric(ld_metric::MAX_LOAD_LATENCY_NS, 210.0, "ns", Better::Lower),
        );
        // The one-thread best is lower than every all-core one: not the figure.
        for (threads, bw) in [(1, 20_000.0), (16, 90_000.0)] {
            for c in [0, 1] {
                let bw = if c == 1 { bw - 1_000.0 } else { bw };
                d.records.push(
                    at(probe::PEAK, c, c)
                        .param(pk::KIND, pk_kind::BEST)
                        .param(param::THREADS, threads)
                        .metric(metric::BANDWIDTH_MB_S, bw, "MB/s", Better::Higher),
                );
            }
        }
        for ns in [30.0, 110.0, 120.0] {
            d.records.push(
                Record::new(probe::C2C, "cas")
                    .param(param::VARIANT, CAS)
                    .metric(metric::LATENCY_NS, ns, "ns", Better::Lower),
            );
        }
        let m = read(&lean(&d), "c.json", REGISTRY);
        assert_eq!(value(&m, id::LOCAL_PAGE_LOCAL_LATENCY), Some(101.0));
        assert_eq!(value(&m, id::LOCAL_LOADED_LATENCY), Some(210.0));
        assert_eq!(value(&m, id::LOCAL_PEAK_BW), Some(89_000.0));
        assert_eq!(value(&m, id::C2C_LATENCY), Some(110.0));
        let bare = read(&lean(&two_node_doc("d", 1.0, 1.0)), "d.json", REGISTRY);
        assert_eq!(value(&bare, id::C2C_LATENCY), None);
        assert_eq!(value(&bare, id::LOCAL_PEAK_BW), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// A document with any byte changed reads as a machine or an error,
        /// and whatever reads goes through the report and every format.
        #[test]
        fn a_damaged_document_is_a_machine_or_an_error(at in 0usize..100_000, byte in 0u8..128) {
            let mut json = two_node_doc("x", 10_000.0, 6_000.0).to_json().unwrap();
            let i = at % json.len();
            json[i] = byte;
            let Ok(text) = std::str::from_utf8(&json) else { return Ok(()) };
            if let Ok(doc) = LeanDocument::from_json(text) {
                let m = read(&doc, "x.json", REGISTRY);
                let specs = crate::analysis::fleet::specs(REGISTRY);
                let r = crate::analysis::fleet::report(vec![m.clone(), m.clone(), m], Default::default(), specs);
                for f in [
                    crate::output::render::Format::Text,
                    crate::output::render::Format::Csv,
                    crate::output::render::Format::Json,
                    crate::output::render::Format::Html,
                ] {
                    crate::output::fleet::report(&r, &[], f).unwrap();
                }
            }
        }
    }
}
