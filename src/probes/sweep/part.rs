//! The sweep in the jobs over several probes: its lines in run's summary,
//! each figure named by the level of the memory hierarchy it was measured
//! in. Its part in `run` is a step in run's own process.

use super::SweepView;
use super::levels::Levels;
use crate::analysis::sweep_summary::Summary;
use crate::results::Record;
use crate::results::names::{param, probe};
use crate::topology::Topology;
use crate::results::Document;
use crate::view::{FolderFile, InRun, Part, Probe, Profile, Scope, Trim, View};

/// After the parts that chase a buffer past the L3, in run's own process:
/// each of those maps about as much memory as the one before it has just
/// freed, and a virtual machine may hand freed memory back to its host
/// within seconds (faulting a 7.5 GiB chase buffer in again took 17 s of
/// system time after 30 s idle, 2 s right after another was freed).
const PART: Part = Part {
    profile: Profile::Default,
    order: 3,
    args: |_, _| Vec::new(),
    counted_as: None,
    in_process: Some(in_run),
    plan: |topo, scope| estimate(topo, &config(topo, scope).0),
};

/// The default sweep, sized past this machine's L3; trimmed to a budget,
/// every other size (the largest kept) and fewer repeats.
fn config(topo: &Topology, scope: Scope) -> (super::SweepConfig, Option<String>) {
    let (mut cfg, note) = super::levels::sweep_config(topo);
    if scope.trim >= Trim::Sizes
        && let Some(sizes) = cfg.sizes.as_mut()
    {
        let last = sizes.len().saturating_sub(1);
        let mut i = 0;
        sizes.retain(|_| {
            i += 1;
            (i - 1) % 2 == last % 2
        });
    }
    let timing = crate::probes::cost::timing(scope.trim);
    cfg.tries = timing.tries;
    cfg.min_run = timing.min_run;
    (cfg, note)
}

/// What the sweep will measure with `cfg`: per size one team that maps
/// its arrays once and times each operation, and a chase of the size.
pub(crate) fn estimate(topo: &Topology, cfg: &super::SweepConfig) -> crate::view::PartPlan {
    use crate::probes::cost::{self, Estimate};
    let first = topo.allowed.cpus.iter().next().unwrap_or(0);
    let sizes = cfg
        .sizes
        .clone()
        .unwrap_or_else(|| super::cache_sizes(topo, first));
    let threads = cfg
        .threads
        .unwrap_or_else(|| crate::probes::seats::max_threads(topo))
        .max(1);
    let counts = if cfg.auto_threads {
        (usize::BITS - threads.leading_zeros()) as usize
    } else {
        1
    };
    let bandwidth_ops = cfg
        .ops
        .iter()
        .filter(|op| **op != super::SweepOp::Latency)
        .count();
    let latency = bandwidth_ops < cfg.ops.len();
    let one = cost::bandwidth_s(cfg.tries, cfg.min_run);
    let cap = super::latency_cap(topo);
    let mut e = Estimate::default();
    for &size in &sizes {
        // The widest kernel's arrays (three) per thread.
        let team = (3 * size * threads) as u64;
        if bandwidth_ops > 0 {
            e.builds("bandwidth arrays", counts, team)
                .mapped(team)
                .add(counts as f64 * (cost::fault_s(team, threads) + bandwidth_ops as f64 * one));
        }
        if latency {
            let chase = super::latency_size(size, cap) as u64;
            e.builds("chase", 1, chase)
                .mapped(chase)
                .add(cost::chase_build_s(chase, cfg.pattern == crate::kernels::pattern::Pattern::FullRandom) + cost::CHASE_S);
        }
    }
    if let Some(t) = cfg.time_limit {
        e.cap(t.as_secs_f64(), one);
    }
    e.plan(format!(
        "{} size(s) x {} operation(s), {threads} thread(s)",
        sizes.len(),
        cfg.ops.len()
    ))
}

/// The default sweep, sized past this machine's L3; its notes and
/// conditions go on its first record.
fn in_run(topo: &Topology, scope: Scope, show: &dyn Fn(&str)) -> anyhow::Result<InRun> {
    let (cfg, note) = config(topo, scope);
    let super::Swept {
        rows,
        mut notes,
        mut conditions,
        failed,
    } = super::run(topo, &cfg, &mut |w| show(w))?;
    // The note of the sizes the room allowed names the room of the seats
    // the sweep config was made for: every thread spread over the nodes.
    let seats = crate::probes::seats::spread(topo, crate::probes::seats::max_threads(topo));
    conditions.extend(note.as_ref().and(super::room_condition(topo, &seats)));
    notes.extend(note);
    let mut records: Vec<Record> = rows.iter().map(super::records::record).collect();
    if let Some(r) = records.first_mut() {
        r.notes.extend(notes);
        r.conditions.extend(conditions);
    }
    Ok(InRun { records, failed })
}

impl Probe for SweepView {
    fn findings(
        &self,
        _doc: &crate::results::Document,
        records: &[&Record],
    ) -> Vec<crate::view::Finding> {
        super::findings::findings(records)
    }

    fn part(&self) -> Option<Part> {
        Some(PART)
    }

    /// sweep.csv: sc-membench's columns, as `sweep --csv` prints them.
    fn folder_files(&self, doc: &Document, records: &[&Record]) -> Vec<(String, FolderFile)> {
        let table = self.csv(doc, records).unwrap_or_default();
        vec![("sweep.csv".into(), FolderFile::Table(table))]
    }

    fn summary_line(&self, topo: &Topology, records: &[&Record]) -> Option<String> {
        let lines = sweep_lines(
            &super::summarize(records),
            &sweep_points(records),
            &Levels::of(topo, None),
        );
        (!lines.is_empty()).then_some(lines)
    }
}

/// One sweep measurement as the summary shows it.
struct SweepPoint {
    operation: String,
    /// Per-thread bytes.
    size: usize,
    /// MB/s (each buffer counted once) or ns per load.
    value: f64,
    /// The chase that measured a latency, as `full-random chase on base
    /// pages`; `None` for bandwidth.
    chase: Option<String>,
}

/// Every sweep measurement.
fn sweep_points(records: &[&Record]) -> Vec<SweepPoint> {
    records
        .iter()
        .filter(|r| r.probe == probe::SWEEP)
        .filter_map(|r| {
            let row = crate::probes::sweep::records::row(r)?;
            let chase = row.is_latency().then(|| {
                let chase = crate::analysis::atlas::chase_label(r);
                match r.str_param(param::PAGE_SIZE) {
                    Some("thp") => format!("{chase}, {:.0}% huge", row.huge_pct),
                    _ => chase,
                }
            });
            Some(SweepPoint {
                value: if row.is_latency() {
                    row.latency_ns
                } else {
                    row.bandwidth_mb_s
                },
                size: row.size_kb as usize * 1024,
                operation: row.operation,
                chase,
            })
        })
        .collect()
}

/// Per operation its peak with the level it was measured in, and its
/// figure at the largest size where that is memory; then the latency at
/// the largest size, named the same way, with its chase and pages. The
/// sweep counts the buffer once per pass (sc-membench) where the lines
/// around it count every byte moved (STREAM), so its lines open by saying
/// so.
fn sweep_lines(s: &Summary, points: &[SweepPoint], levels: &Levels) -> String {
    let mut out = String::new();
    let size = |b: usize| crate::units::bytes(b as u64);
    let largest = |op: &str| {
        points
            .iter()
            .filter(|p| p.operation == op)
            .max_by_key(|p| p.size)
    };
    if !s.ops.is_empty() {
        out.push_str(
            "  sweep MB/s count the buffer once per pass, as sc-membench does; STREAM's count, as in the lines above, is 2x that for copy and 3x for triad\n",
        );
    }
    for o in &s.ops {
        let at_peak = points
            .iter()
            .find(|p| p.operation == o.operation && p.value == o.peak_mb_s)
            .map(|p| p.size);
        let peak = match at_peak {
            Some(b) => format!(
                "peak ({}) {:.0} MB/s at {}",
                levels.name(b),
                o.peak_mb_s,
                size(b)
            ),
            None => format!("peak {:.0} MB/s", o.peak_mb_s),
        };
        let memory = match largest(&o.operation) {
            Some(p) if p.size >= levels.memory_from() => format!(
                "memory ({}) {:.0} MB/s at {}",
                levels.name(p.size),
                p.value,
                size(p.size)
            ),
            Some(p) => format!(
                "no memory figure (largest size {}, {})",
                size(p.size),
                levels.name(p.size)
            ),
            None => String::new(),
        };
        out.push_str(&format!(
            "  sweep {:<6}        {peak}; {memory}; log2-weighted average {:.0} MB/s\n",
            o.operation, o.weighted_avg_mb_s
        ));
    }
    if let Some(p) = largest(crate::results::names::sweep::LATENCY) {
        // Base pages and a buffer as large as sc-membench's: its figure
        // differs from run's headline by the page walks, and short of
        // memory's size by the lines the L3 still holds.
        let not_ram = if p.size >= levels.memory_from() {
            ""
        } else {
            ", not RAM alone"
        };
        let chase = p
            .chase
            .as_deref()
            .map(|c| format!("; {c}, sc-membench's chase"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  sweep latency:      {:.1} ns at {}{not_ram} ({}{chase})\n",
            p.value,
            size(p.size),
            levels.name(p.size)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sweep_summary::summarize;
    use crate::probes::sweep::{self, SweepRow};

    fn row(size_kb: u64, operation: &str, bandwidth_mb_s: f64, latency_ns: f64) -> SweepRow {
        SweepRow {
            size_kb,
            operation: operation.into(),
            bandwidth_mb_s,
            latency_ns,
            latency_stddev_ns: 1.0,
            latency_samples: 3,
            threads: 2,
            iterations: 10,
            elapsed_s: 0.5,
            variant: "read_portable".into(),
            bytes_per_element: 8,
            stream_bandwidth_mb_s: bandwidth_mb_s,
            placement_verified_pct: 100.0,
            huge_pct: 0.0,
            samples: vec![bandwidth_mb_s.max(latency_ns)],
            cv_pct: 1.0,
            cpus_seen: vec![0],
            pages_by_node: Default::default(),
            page_kind: "base".into(),
            pattern: None,
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_sweep_lines_name_the_level_of_each_figure() {
        let rows = vec![
            row(16, "read", 12345.678, 0.0),
            row(1 << 20, "read", 4321.5, 0.0),
            row(16, "copy", 9000.25, 0.0),
            row(4096, "copy", 3000.75, 0.0),
            row(16, "latency", 0.0, 1.25),
            row(1 << 20, "latency", 0.0, 97.5),
        ];
        let records: Vec<Record> = rows.iter().map(sweep::records::record).collect();
        let refs: Vec<&Record> = records.iter().collect();
        let levels = Levels {
            l1: 32 << 10,
            l2: 1 << 20,
            l3: 32 << 20,
        };
        let lines = sweep_lines(&sweep::summarize(&refs), &sweep_points(&refs), &levels);
        assert!(
            lines.starts_with("  sweep MB/s count the buffer once per pass, as sc-membench"),
            "{lines}"
        );
        // The same summary as the rows give.
        assert_eq!(sweep::summarize(&refs).ops, summarize(&rows).ops);
        assert!(
            lines.contains("sweep read          peak (L1) 12346 MB/s at 16 KiB; memory (memory, 32x L3) 4322 MB/s at 1 GiB;"),
            "{lines}"
        );
        // 4 MiB is an eighth of this L3: no memory figure for copy.
        assert!(
            lines.contains("no memory figure (largest size 4 MiB, L3)"),
            "{lines}"
        );
        assert!(
            lines.contains(
                "  sweep latency:      97.5 ns at 1 GiB (memory, 32x L3; full-random chase on base pages, sc-membench's chase)\n"
            ),
            "{lines}"
        );
    }
}
