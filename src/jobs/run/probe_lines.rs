//! The summary lines of the default profile's short probes: one line each
//! with the figure a person quotes (idle latency by pattern, misses in
//! flight, latency under full load, peak injection, core-to-core latency),
//! local beside the farthest remote where the machine has several nodes.

use crate::results::Record;
use crate::results::names::{loaded, metric, mlp, param, peak, probe, run};

fn text<'a>(r: &'a Record, key: &str) -> Option<&'a str> {
    r.params.get(key).and_then(|v| v.as_str())
}

fn num(r: &Record, key: &str) -> Option<u64> {
    r.params.get(key).and_then(|v| v.as_u64())
}

fn value(r: &Record, key: &str) -> Option<f64> {
    r.metrics
        .get(key)
        .map(|m| m.value)
        .filter(|v| v.is_finite())
}

fn local(r: &Record) -> bool {
    num(r, param::CPU_NODE).is_some() && num(r, param::CPU_NODE) == num(r, param::MEM_NODE)
}

/// "local X, remote Y-Z" over `recs`' `key` (remote left out on one node).
fn local_remote(recs: &[&Record], key: &str, unit: &str, digits: usize) -> String {
    let pick = |want_local: bool| -> Vec<f64> {
        recs.iter()
            .filter(|r| local(r) == want_local && num(r, param::MEM_NODE).is_some())
            .filter_map(|r| value(r, key))
            .collect()
    };
    let span = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let s = if (hi - lo).abs() < 10f64.powi(-(digits as i32)) {
            format!("{lo:.digits$} {unit}")
        } else {
            format!("{lo:.digits$}-{hi:.digits$} {unit}")
        };
        s.trim_end().to_string()
    };
    let (l, r) = (pick(true), pick(false));
    let mut out = if l.is_empty() {
        "local -".to_string()
    } else {
        format!("local {}", span(&l))
    };
    if !r.is_empty() {
        out.push_str(&format!(", remote {}", span(&r)));
    }
    out
}

fn of<'a>(records: &'a [Record], name: &str) -> Vec<&'a Record> {
    records.iter().filter(|r| r.probe == name).collect()
}

/// Idle latency per pattern: "full-random local 152.1 ns; page-local ...".
fn latency_line(records: &[Record]) -> Option<String> {
    let recs = of(records, probe::LATENCY);
    // Records come pair by pair, each pair with every pattern: keep each
    // pattern once, in the order first met.
    let mut patterns: Vec<&str> = Vec::new();
    for p in recs.iter().filter_map(|r| text(r, param::PATTERN)) {
        if !patterns.contains(&p) {
            patterns.push(p);
        }
    }
    let parts: Vec<String> = patterns
        .iter()
        .map(|p| {
            let these: Vec<&Record> = recs
                .iter()
                .copied()
                .filter(|r| text(r, param::PATTERN) == Some(p))
                .collect();
            let first = these.first();
            let pages = first.and_then(|r| text(r, param::PAGE_SIZE)).unwrap_or("?");
            let buffer = crate::analysis::atlas::buffer_suffix(
                first.and_then(|r| num(r, param::SIZE_BYTES)),
            );
            format!(
                "{p} ({pages}{buffer}) {}",
                local_remote(&these, metric::LATENCY_NS, "ns", 1)
            )
        })
        .collect();
    (!parts.is_empty()).then(|| format!("  latency by pattern: {}\n", parts.join("; ")))
}

/// Misses in flight at the most chases measured, local and remote.
fn mlp_line(records: &[Record]) -> Option<String> {
    let recs = of(records, probe::MLP);
    let most = recs
        .iter()
        .filter_map(|r| num(r, mlp::param::CHASES))
        .max()?;
    let top: Vec<&Record> = recs
        .iter()
        .copied()
        .filter(|r| num(r, mlp::param::CHASES) == Some(most))
        .collect();
    Some(format!(
        "  parallel chases:    {most} in one thread: {} per access; in flight {}\n",
        local_remote(&top, mlp::metric::NS_PER_ACCESS, "ns", 1),
        local_remote(&top, mlp::metric::CONCURRENCY, "", 1)
    ))
}

/// Idle and full-load latency with the load the injectors moved.
fn loaded_line(records: &[Record]) -> Option<String> {
    let knees: Vec<&Record> = of(records, probe::LOADED)
        .into_iter()
        .filter(|r| text(r, loaded::param::KIND) == Some(loaded::kind::KNEE))
        .collect();
    let parts: Vec<String> = knees
        .iter()
        .map(|r| {
            let pair = format!(
                "{}->{}",
                num(r, param::CPU_NODE).unwrap_or(0),
                num(r, param::MEM_NODE).unwrap_or(0)
            );
            let idle = value(r, loaded::metric::IDLE_LATENCY_NS).unwrap_or(f64::NAN);
            let full = value(r, loaded::metric::MAX_LOAD_LATENCY_NS).unwrap_or(f64::NAN);
            let bw = value(r, loaded::metric::MAX_BANDWIDTH_MB_S).unwrap_or(f64::NAN);
            let knee = match value(r, loaded::metric::KNEE_BANDWIDTH_MB_S) {
                Some(k) => format!(", knee at {:.1} GB/s", k / 1000.0),
                None => ", no knee".into(),
            };
            format!(
                "{pair} idle {idle:.0} ns, {full:.0} ns at {:.1} GB/s{knee}",
                bw / 1000.0
            )
        })
        .collect();
    (!parts.is_empty()).then(|| format!("  loaded latency:     {}\n", parts.join("; ")))
}

/// The best mix of all cores per target: local, remote, interleaved.
fn peak_line(records: &[Record]) -> Option<String> {
    let best: Vec<&Record> = of(records, probe::PEAK)
        .into_iter()
        .filter(|r| text(r, peak::param::KIND) == Some(peak::kind::BEST))
        .collect();
    let most = best.iter().filter_map(|r| num(r, param::THREADS)).max()?;
    let top: Vec<&Record> = best
        .iter()
        .copied()
        .filter(|r| num(r, param::THREADS) == Some(most))
        .collect();
    let named = |r: &Record| {
        format!(
            "{} {}",
            text(r, peak::param::MIX).unwrap_or("?"),
            text(r, peak::param::STORE).unwrap_or("?")
        )
    };
    let mut out = format!(
        "  peak injection:     {most} thread(s): {}",
        local_remote(&top, metric::BANDWIDTH_MB_S, "MB/s", 0)
    );
    if let Some(r) = top.iter().find(|r| local(r)) {
        out.push_str(&format!(" (local best: {})", named(r)));
    }
    if let Some(r) = top
        .iter()
        .find(|r| text(r, peak::param::TARGET) == Some(peak::INTERLEAVE))
    {
        let v = value(r, metric::BANDWIDTH_MB_S).unwrap_or(f64::NAN);
        out.push_str(&format!(", interleaved {v:.0} MB/s"));
    }
    out.push('\n');
    Some(out)
}

/// Median one-way latency of each class, per variant, as the c2c view's
/// class table has it.
fn c2c_line(records: &[Record]) -> Option<String> {
    let recs: Vec<&Record> = of(records, probe::C2C);
    let parts: Vec<String> = crate::probes::c2c::view::class_medians(&recs)
        .into_iter()
        .map(|(v, classes)| {
            let per_class: Vec<String> = classes
                .iter()
                .map(|(c, m)| format!("{} {m:.1} ns", c.name()))
                .collect();
            format!("{v} {}", per_class.join(", "))
        })
        .collect();
    (!parts.is_empty()).then(|| format!("  core to core:       {}\n", parts.join("; ")))
}

/// One probe's summary line from a document's records.
type LineOf = fn(&[Record]) -> Option<String>;

/// The lines of every short probe that left records, in run's order; a
/// part that failed says so in place of its figures.
pub fn probe_lines(records: &[Record]) -> String {
    let lines: [(&str, LineOf); 5] = [
        (probe::LATENCY, latency_line),
        (probe::MLP, mlp_line),
        (probe::LOADED, loaded_line),
        (probe::PEAK, peak_line),
        (probe::C2C, c2c_line),
    ];
    lines
        .iter()
        .filter_map(|(name, line)| {
            let failed = records
                .iter()
                .any(|r| r.probe == *name && r.name == run::NOT_COMPLETE);
            if failed {
                Some(format!("  {name:<19} NOT COMPLETE, see {name}.log\n"))
            } else {
                line(records)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Better;
    use crate::results::names::c2c;

    fn at(name: &str, c: u64, m: u64) -> Record {
        Record::new(name, "r")
            .param(param::CPU_NODE, c)
            .param(param::MEM_NODE, m)
    }

    /// A latency record of `pattern` from node 0 to `m`, on 2M pages.
    fn lat(pattern: &str, m: u64, ns: f64) -> Record {
        at(probe::LATENCY, 0, m)
            .param(param::PATTERN, pattern)
            .param(param::PAGE_SIZE, "2M")
            .metric(metric::LATENCY_NS, ns, "ns", Better::Lower)
    }

    #[test]
    fn each_probe_gives_its_line_with_local_beside_remote() {
        let records = vec![
            lat("full-random", 0, 150.0),
            lat("full-random", 1, 240.0),
            lat("page-local", 0, 94.0).param(param::SIZE_BYTES, 2_516_582_400u64),
            at(probe::PEAK, 0, 0)
                .param(peak::param::KIND, peak::kind::BEST)
                .param(param::THREADS, 8)
                .param(peak::param::MIX, "1:1")
                .param(peak::param::STORE, "nt")
                .metric(metric::BANDWIDTH_MB_S, 46000.0, "MB/s", Better::Higher),
            at(probe::PEAK, 0, 0)
                .param(peak::param::KIND, peak::kind::BEST)
                .param(param::THREADS, 1)
                .metric(metric::BANDWIDTH_MB_S, 25000.0, "MB/s", Better::Higher),
            Record::new(probe::C2C, "cas 0-1")
                .param(param::VARIANT, "cas")
                .param(param::CPU, 0)
                .param(c2c::param::PEER_CPU, 1)
                .param(c2c::param::CLASS, c2c::class::SAME_L3)
                .metric(metric::LATENCY_NS, 26.2, "ns", Better::Lower),
            at(probe::LOADED, 0, 0)
                .param(loaded::param::KIND, loaded::kind::KNEE)
                .metric(loaded::metric::IDLE_LATENCY_NS, 170.0, "ns", Better::Lower)
                .metric(
                    loaded::metric::MAX_LOAD_LATENCY_NS,
                    335.0,
                    "ns",
                    Better::Lower,
                )
                .metric(
                    loaded::metric::MAX_BANDWIDTH_MB_S,
                    28700.0,
                    "MB/s",
                    Better::Higher,
                ),
        ];
        let text = probe_lines(&records);
        assert!(
            text.contains(
                "full-random (2M) local 150.0 ns, remote 240.0 ns; page-local (2M, 2.3 GiB) local 94.0 ns"
            ),
            "{text}"
        );
        assert!(
            text.contains("8 thread(s): local 46000 MB/s (local best: 1:1 nt)"),
            "{text}"
        );
        assert!(text.contains("cas same-l3 26.2 ns"), "{text}");
        assert!(
            text.contains("0->0 idle 170 ns, 335 ns at 28.7 GB/s, no knee"),
            "{text}"
        );
        assert!(!text.contains("parallel chases"), "{text}");
    }

    #[test]
    fn latency_names_each_pattern_once_when_records_come_pair_by_pair() {
        // The probe's order: every pattern for 0->0, then every one for 0->1.
        let records = vec![
            lat("full-random", 0, 150.0),
            lat("page-local", 0, 94.0),
            lat("full-random", 1, 240.0),
            lat("page-local", 1, 180.0),
        ];
        let text = probe_lines(&records);
        assert_eq!(
            text,
            "  latency by pattern: full-random (2M) local 150.0 ns, remote 240.0 ns; \
             page-local (2M) local 94.0 ns, remote 180.0 ns\n"
        );
    }

    #[test]
    fn a_failed_part_says_so_instead_of_its_figures() {
        let records = vec![
            at(probe::LOADED, 0, 0)
                .param(loaded::param::KIND, loaded::kind::KNEE)
                .metric(loaded::metric::IDLE_LATENCY_NS, 170.0, "ns", Better::Lower),
            Record::new(probe::LOADED, run::NOT_COMPLETE),
        ];
        let text = probe_lines(&records);
        assert_eq!(text, "  loaded              NOT COMPLETE, see loaded.log\n");
    }
}
