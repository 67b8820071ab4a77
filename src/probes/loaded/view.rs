//! How loaded-latency records are shown: a summary table (idle latency,
//! knee, most bandwidth per pair), a table per pair with every point, and
//! in the report one latency-vs-bandwidth chart with every pair's curve and
//! its knee marked; CSV has a line per point. All from the records alone.

use crate::results::names::loaded::{self as ld, IDLE, kind};
use crate::results::names::{metric, param, probe};
use crate::results::{Document, Record};
use crate::view::{Block, Chart, Csv, Line, Marker, Section, View};

/// The loaded-latency view, registered in `probes::REGISTRY`.
pub(crate) struct LoadedView;

fn is(r: &Record, k: &str) -> bool {
    r.str_param(ld::param::KIND) == Some(k)
}

fn pair_of(r: &Record) -> (i64, i64) {
    let n = |k| r.f64_param(k).map_or(-1, |v| v as i64);
    (n(param::CPU_NODE), n(param::MEM_NODE))
}

/// One pair's records: its points in load order and its knee record.
struct Pair<'a> {
    cpu_node: i64,
    mem_node: i64,
    points: Vec<&'a Record>,
    knee: Option<&'a Record>,
}

impl Pair<'_> {
    fn label(&self) -> String {
        format!("{}->{}", self.cpu_node, self.mem_node)
    }
}

fn pairs<'a>(records: &[&'a Record]) -> Vec<Pair<'a>> {
    let mut out: Vec<Pair<'a>> = Vec::new();
    for r in records {
        let (c, m) = pair_of(r);
        let at = match out.iter().position(|p| (p.cpu_node, p.mem_node) == (c, m)) {
            Some(i) => i,
            None => {
                out.push(Pair {
                    cpu_node: c,
                    mem_node: m,
                    points: Vec::new(),
                    knee: None,
                });
                out.len() - 1
            }
        };
        if is(r, kind::POINT) {
            out[at].points.push(r);
        } else if is(r, kind::KNEE) {
            out[at].knee = Some(r);
        }
    }
    out
}

fn fmt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

fn delay(r: &Record) -> String {
    r.f64_param(ld::param::DELAY_NS)
        .map_or(IDLE.into(), |d| format!("{d:.0}"))
}

impl View for LoadedView {
    fn probe(&self) -> &'static str {
        probe::LOADED
    }

    fn heading(&self) -> String {
        "Loaded latency".into()
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "One thread chases pointers through memory while injector threads (the other cores of its node, or of the node --injector-node names) move their own buffers on the same memory, with a spin per 4 KiB chunk stepped from long (near idle) to none (full load): latency against the bandwidth the injectors moved. The dashed line is the knee, where latency first reaches twice the idle figure; past it, every extra MB/s costs much more latency.",
        )
    }

    fn sections(&self, _doc: &Document, records: &[&Record]) -> Vec<Section> {
        let pairs = pairs(records);
        let mut head = summary(&pairs);
        head.lines
            .extend(crate::probes::node_chase::builds_line(records));
        let mut out = vec![head];
        out.extend(pairs.iter().map(pair_section));
        out
    }

    fn csv(&self, _doc: &Document, records: &[&Record]) -> Option<Csv> {
        Some(csv(records))
    }

    fn blocks(&self, doc: &Document, records: &[&Record]) -> Vec<Block> {
        let mut out: Vec<Block> = Vec::new();
        let mut secs = self.sections(doc, records).into_iter();
        out.extend(secs.next().map(Block::Section));
        out.push(Block::Chart(chart(&pairs(records))));
        out.extend(secs.map(Block::Section));
        out
    }
}

fn summary(pairs: &[Pair<'_>]) -> Section {
    let mut s = Section::new("loaded latency by node pair");
    s.header = [
        "cpu->mem",
        "injectors",
        "idle ns",
        "knee MB/s",
        "knee ns",
        "max MB/s",
        "ns at max",
    ]
    .map(String::from)
    .to_vec();
    for p in pairs {
        let k = p.knee;
        let get = |key: &str| k.and_then(|r| r.value(key));
        s.rows.push(vec![
            p.label(),
            fmt(k.and_then(|r| r.f64_param(ld::param::INJECTORS)), 0),
            fmt(get(ld::metric::IDLE_LATENCY_NS), 1),
            fmt(get(ld::metric::KNEE_BANDWIDTH_MB_S), 0),
            fmt(get(ld::metric::KNEE_LATENCY_NS), 1),
            fmt(get(ld::metric::MAX_BANDWIDTH_MB_S), 0),
            fmt(get(ld::metric::MAX_LOAD_LATENCY_NS), 1),
        ]);
    }
    s.lines.push(format!(
        "knee: where the chase's latency first reaches {}x its idle figure, the injected bandwidth interpolated between the points around it; '-' where no load got there",
        super::KNEE_FACTOR
    ));
    if let Some(r) = pairs
        .first()
        .and_then(|p| p.knee.or(p.points.first().copied()))
    {
        s.lines.push(format!(
            "chase: {} through {} on {} pages; injectors: {} with kernel {}, a spin of {} ns per iteration calibrated on this CPU",
            r.param_shown(crate::results::names::param::PATTERN).unwrap_or_default(),
            crate::units::bytes(r.f64_param(param::SIZE_BYTES).unwrap_or(0.0) as u64),
            r.param_shown(param::PAGE_SIZE).unwrap_or_default(),
            r.param_shown(ld::param::MIX).unwrap_or_default(),
            r.param_shown(param::KERNEL).unwrap_or_default(),
            fmt(r.f64_param(ld::param::NS_PER_SPIN), 2),
        ));
    }
    s
}

fn pair_section(p: &Pair<'_>) -> Section {
    let first = p.points.first().copied().or(p.knee);
    let mut s = Section::new(format!(
        "cpu node {} -> mem node {}: chase on CPU {}, injectors on CPUs {} of node {}",
        p.cpu_node,
        p.mem_node,
        first
            .and_then(|r| r.param_shown(param::CPU))
            .unwrap_or_default(),
        first
            .and_then(|r| r.list_param(ld::param::INJECTOR_CPUS))
            .map(|cpus| {
                let cpus: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
                cpus.join(",")
            })
            .unwrap_or_default(),
        first
            .and_then(|r| r.param_shown(ld::param::INJECTOR_NODE))
            .unwrap_or_default(),
    ));
    s.header = [
        "delay ns",
        "spins",
        "injectors",
        "injected MB/s",
        "latency ns",
        "cv %",
        "x idle",
        "on node %",
    ]
    .map(String::from)
    .to_vec();
    let idle = p
        .knee
        .and_then(|k| k.value(ld::metric::IDLE_LATENCY_NS))
        .or_else(|| p.points.first().and_then(|r| r.value(metric::LATENCY_NS)));
    for r in &p.points {
        let lat = r.value(metric::LATENCY_NS);
        let flag = if r.has_param(ld::param::NOT_MONOTONE) {
            " (!)"
        } else {
            ""
        };
        s.rows.push(vec![
            delay(r),
            fmt(r.f64_param(ld::param::SPINS), 0),
            fmt(r.f64_param(ld::param::INJECTORS), 0),
            fmt(r.value(metric::BANDWIDTH_MB_S), 0),
            format!("{}{flag}", fmt(lat, 1)),
            fmt(r.value(metric::CV_PCT), 1),
            fmt(lat.zip(idle).map(|(l, i)| l / i), 2),
            fmt(r.placement.as_ref().and_then(|x| x.on_target_pct), 1),
        ]);
    }
    for r in p.points.iter().copied().chain(p.knee) {
        s.lines.extend(r.notes.iter().map(|n| format!("note: {n}")));
    }
    s
}

fn chart(pairs: &[Pair<'_>]) -> Chart {
    let mut c = Chart {
        title: "loaded latency: chase latency vs injected bandwidth".into(),
        x_label: "injected bandwidth (MB/s)".into(),
        y_label: "latency (ns)".into(),
        ..Default::default()
    };
    for p in pairs {
        c.lines.push(Line {
            label: p.label(),
            points: p
                .points
                .iter()
                .filter_map(|r| {
                    let bw = r.value(metric::BANDWIDTH_MB_S)?;
                    // A loaded point that counted no bytes measured no load:
                    // drawn at zero it would bend the curve back to idle.
                    let loaded = r.f64_param(ld::param::INJECTORS).is_some_and(|n| n > 0.0);
                    if loaded && (bw.is_nan() || bw <= 0.0) {
                        return None;
                    }
                    Some((bw, r.value(metric::LATENCY_NS)?))
                })
                .collect(),
        });
        if let Some(x) = p
            .knee
            .and_then(|k| k.value(ld::metric::KNEE_BANDWIDTH_MB_S))
        {
            c.markers.push(Marker {
                x,
                label: format!("knee {}", p.label()),
            });
        }
    }
    c
}

fn csv(records: &[&Record]) -> Csv {
    let mut out = Csv {
        header: [
            param::CPU_NODE,
            param::MEM_NODE,
            ld::param::DELAY_NS,
            ld::param::SPINS,
            ld::param::INJECTORS,
            metric::BANDWIDTH_MB_S,
            metric::LATENCY_NS,
            metric::LATENCY_STDDEV_NS,
            metric::CV_PCT,
        ]
        .map(String::from)
        .to_vec(),
        ..Default::default()
    };
    for r in records.iter().filter(|r| is(r, kind::POINT)) {
        let (c, m) = pair_of(r);
        out.rows.push(vec![
            c.to_string(),
            m.to_string(),
            delay(r),
            fmt(r.f64_param(ld::param::SPINS), 0),
            fmt(r.f64_param(ld::param::INJECTORS), 0),
            fmt(r.value(metric::BANDWIDTH_MB_S), 1),
            fmt(r.value(metric::LATENCY_NS), 2),
            fmt(r.value(metric::LATENCY_STDDEV_NS), 2),
            fmt(r.value(metric::CV_PCT), 2),
        ]);
    }
    for r in records {
        out.notes.extend(r.notes.iter().cloned());
    }
    out
}
