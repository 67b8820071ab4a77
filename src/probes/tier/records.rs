//! A tier run as a record of the results document: what ran and where, the
//! kernel's settings, the figures (time to 90% of the hot set on the fast
//! tier, where each region ended, promotions and demotions, throughput)
//! and three series over time (memory per region and tier, migrations per
//! second, throughput).

use super::kernel::{self, Tiers};
use super::plan::{Bind, Heat, Plan};
use super::run::{Look, Outcome, Settings};
use crate::results::names::tier::{metric as tm, param as tp, series as ts};
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Line, Placement, Record, Series};
use serde_json::json;

const MIB: f64 = 1048576.0;
/// Share of the hottest region on the fast tier that marks the move done.
pub(crate) const MARK_PCT: f64 = 90.0;

/// The record's name: the test, and the baseline's placement.
pub(crate) fn name(plan: &Plan) -> String {
    match plan.bind {
        Bind::Free => plan.test.name().to_string(),
        Bind::Fast => format!("{} {}", plan.test.name(), tp::BIND_FAST),
        Bind::Slow => format!("{} {}", plan.test.name(), tp::BIND_SLOW),
    }
}

fn on_fast_pct(l: &Look, region: usize, fast: usize) -> f64 {
    let Some(m) = l.mem.get(region) else {
        return 0.0;
    };
    let total: u64 = m.values().sum();
    if total == 0 {
        return 0.0;
    }
    m.get(&fast).copied().unwrap_or(0) as f64 * 100.0 / total as f64
}

/// The first look at which [`MARK_PCT`] of the hottest region was on the
/// fast node.
pub(crate) fn mark_time(plan: &Plan, o: &Outcome, fast: usize) -> Option<f64> {
    let hot = plan.hottest()?;
    o.looks
        .iter()
        .find(|l| on_fast_pct(l, hot, fast) >= MARK_PCT)
        .map(|l| l.t)
}

fn series(name: &str, y_label: &str, y_unit: &str, o: &Outcome, lines: Vec<Line>) -> Series {
    Series {
        name: name.into(),
        x_label: "time".into(),
        x_unit: "s".into(),
        y_label: y_label.into(),
        y_unit: y_unit.into(),
        x: o.looks.iter().map(|l| l.t).collect(),
        lines,
    }
}

/// MiB of each region on the fast and on the slow node at each look.
fn memory_series(plan: &Plan, o: &Outcome, t: &Tiers) -> Series {
    let mut lines = Vec::new();
    for (i, r) in plan.regions.iter().enumerate() {
        for (tier, node) in [("fast", t.fast), ("slow", t.slow)] {
            lines.push(Line {
                label: format!("{} on {tier}", r.heat.name()),
                y: o.looks
                    .iter()
                    .map(|l| {
                        l.mem
                            .get(i)
                            .and_then(|m| m.get(&node))
                            .copied()
                            .unwrap_or(0) as f64
                            / MIB
                    })
                    .collect(),
            });
        }
    }
    series(ts::MEMORY_PER_TIER, "memory", "MiB", o, lines)
}

/// Pages promoted and demoted per second between looks (system-wide
/// counters).
fn migration_series(o: &Outcome) -> Series {
    let rate = |f: fn(&kernel::Counters) -> u64| -> Vec<f64> {
        let mut prev = (0.0, 0u64);
        o.looks
            .iter()
            .map(|l| {
                let v = f(&l.counters);
                let dt = l.t - prev.0;
                let r = if dt >= MIN_DT {
                    v.saturating_sub(prev.1) as f64 / dt
                } else {
                    0.0
                };
                prev = (l.t, v);
                r
            })
            .collect()
    };
    let lines = vec![
        Line {
            label: "promoted".into(),
            y: rate(kernel::promoted),
        },
        Line {
            label: "demoted".into(),
            y: rate(kernel::demoted),
        },
    ];
    series(ts::MIGRATIONS, "pages", "per s", o, lines)
}

/// Seconds below which two looks are too close for a rate (the first look
/// is taken as the workers start).
const MIN_DT: f64 = 0.01;

/// GB/s the workers touched between looks.
fn throughput(o: &Outcome) -> Vec<f64> {
    let mut prev = (0.0, 0u64);
    o.looks
        .iter()
        .map(|l| {
            let dt = l.t - prev.0;
            let r = if dt >= MIN_DT {
                l.bytes_done.saturating_sub(prev.1) as f64 / 1e9 / dt
            } else {
                0.0
            };
            prev = (l.t, l.bytes_done);
            r
        })
        .collect()
}

/// Where the run's result lies between its baselines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Position {
    pub fast_gb_s: f64,
    pub slow_gb_s: f64,
    /// 0% at all-slow, 100% at all-fast; `None` where the two are within
    /// 1% of each other (nothing to place between).
    pub pct: Option<f64>,
}

pub(crate) fn position(value: f64, fast: f64, slow: f64) -> Position {
    let span = fast - slow;
    let apart = span > 0.01 * fast.abs().max(slow.abs());
    Position {
        fast_gb_s: fast,
        slow_gb_s: slow,
        pct: apart.then(|| (value - slow) / span * 100.0),
    }
}

pub(crate) fn gb_s(o: &Outcome) -> f64 {
    if o.runtime_s > 0.0 {
        o.bytes_done as f64 / 1e9 / o.runtime_s
    } else {
        0.0
    }
}

/// The record of one run.
pub(crate) fn record(
    plan: &Plan,
    o: &Outcome,
    t: &Tiers,
    s: &Settings,
    pos: Option<&Position>,
) -> Record {
    let regions: serde_json::Map<String, serde_json::Value> = plan
        .regions
        .iter()
        .map(|r| {
            (
                r.heat.name().to_string(),
                serde_json::Value::Object(
                    [
                        (param::SIZE_BYTES.to_string(), json!(r.bytes)),
                        (tp::WRITTEN_ON_NODE.to_string(), json!(r.node)),
                    ]
                    .into_iter()
                    .collect(),
                ),
            )
        })
        .collect();
    let mut r = Record::new(probe::TIER, &name(plan))
        .param(param::TEST, plan.test.name())
        .param(param::THREADS, plan.threads)
        .param(tp::FAST_NODE, t.fast)
        .param(tp::SLOW_NODE, t.slow)
        .param(tp::FAST_TIER, t.fast_tier)
        .param(tp::SLOW_TIER, t.slow_tier)
        .param(param::CPU_NODE, t.cpu_node)
        .param(tp::SECS, plan.secs)
        .param(tp::INTERVAL_S, s.interval.as_secs_f64())
        .param(tp::SAMPLE_PAGES, s.sample_pages)
        .param(tp::LOOKS, o.looks.len())
        .param(tp::REGIONS, regions)
        .param(
            tp::KERNEL_SETTINGS,
            serde_json::to_value(&o.settings).unwrap_or_default(),
        );
    if let Some(m) = kernel::mode(&o.settings) {
        r = r.param(tp::NUMA_BALANCING, m);
    }
    if let Some(d) = kernel::demotion_enabled(&o.settings) {
        r = r.param(tp::DEMOTION_ENABLED, d);
    }
    if let Some(v) = o
        .settings
        .get("numa_balancing_promote_rate_limit_MBps")
        .and_then(|v| v.parse::<u64>().ok())
    {
        r = r.param(tp::PROMOTE_RATE_LIMIT_MB_S, v);
    }
    match plan.bind {
        Bind::Free => {}
        Bind::Fast => r = r.param(tp::BIND, tp::BIND_FAST),
        Bind::Slow => r = r.param(tp::BIND, tp::BIND_SLOW),
    }
    r = metrics(r, plan, o, t);
    if let Some(p) = pos {
        r = r
            .param(tp::FAST_GB_S, p.fast_gb_s)
            .param(tp::SLOW_GB_S, p.slow_gb_s);
        if let Some(pct) = p.pct {
            r = r.metric(tm::POSITION_PCT, pct, "%", Better::Higher);
        }
    }
    r.series.push(memory_series(plan, o, t));
    r.series.push(migration_series(o));
    r.series.push(series(
        ts::THROUGHPUT,
        "throughput",
        "GB/s",
        o,
        vec![Line {
            label: "touched".into(),
            y: throughput(o),
        }],
    ));
    if let Some(last) = o.looks.last() {
        let mut pages = std::collections::BTreeMap::new();
        for m in &last.mem {
            for (n, b) in m {
                *pages.entry(n.to_string()).or_insert(0) += b / 4096;
            }
        }
        r.placement = Some(Placement {
            pages_by_node: pages,
            on_target_pct: o.bound_pct,
            huge_pct: 0.0,
            cpus_seen: o.cpus_seen.clone(),
        });
    }
    r.notes.extend(plan.notes.iter().cloned());
    r.notes.extend(checks(plan, o, t));
    r
}

fn metrics(mut r: Record, plan: &Plan, o: &Outcome, t: &Tiers) -> Record {
    let secs = o.runtime_s.max(1e-9);
    r = r
        .metric(metric::RUNTIME_S, o.runtime_s, "s", Better::Lower)
        .metric(
            metric::BANDWIDTH_MB_S,
            gb_s(o) * 1000.0,
            "MB/s",
            Better::Higher,
        )
        .metric(metric::USER_TIME_S, o.cpu.user_s, "s", Better::Lower)
        .metric(metric::SYSTEM_TIME_S, o.cpu.system_s, "s", Better::Lower)
        .metric(
            tm::SAMPLING_OVERHEAD_PCT,
            o.sampling_overhead_pct(),
            "%",
            Better::Lower,
        );
    if let Some(m) = mark_time(plan, o, t.fast) {
        r = r.metric(tm::HOT_90_S, m, "s", Better::Lower);
    }
    if let Some(last) = o.looks.last() {
        for (i, reg) in plan.regions.iter().enumerate() {
            let key = match reg.heat {
                Heat::Hot => tm::HOT_FAST_END_PCT,
                Heat::Warm => tm::WARM_FAST_END_PCT,
                Heat::Cold => tm::COLD_FAST_END_PCT,
            };
            let better = if reg.heat == Heat::Cold {
                Better::Lower
            } else {
                Better::Higher
            };
            r = r.metric(key, on_fast_pct(last, i, t.fast), "%", better);
        }
    }
    for (k, v) in &o.counters {
        r = r.metric(k, *v as f64, "count", Better::Lower);
    }
    let promoted = kernel::promoted(&o.counters);
    r = r
        .metric(
            tm::PROMOTE_MB_S,
            promoted as f64 * 4096.0 / 1e6 / secs,
            "MB/s",
            Better::Lower,
        )
        .metric(
            tm::THRASH_PAGES_S,
            (promoted + kernel::demoted(&o.counters)) as f64 / secs,
            "pages/s",
            Better::Lower,
        );
    // Intervals after the first look (taken as the workers start).
    let tp: Vec<f64> = throughput(o).into_iter().skip(1).collect();
    if tp.len() >= 3 {
        let mut sorted = tp.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        if median > 0.0 {
            r = r.metric(
                tm::SLOWEST_INTERVAL_PCT,
                sorted[0] / median * 100.0,
                "%",
                Better::Higher,
            );
        }
    }
    r
}

/// What the reader must know about how the run went.
fn checks(plan: &Plan, o: &Outcome, t: &Tiers) -> Vec<String> {
    let mut notes = Vec::new();
    for (r, pct) in plan.regions.iter().zip(&o.written_on_pct) {
        if *pct < 99.0 {
            notes.push(format!(
                "only {pct:.1}% of the {} region was on node {} after it was written there",
                r.heat.name(),
                r.node
            ));
        }
    }
    if let Some(p) = o.bound_pct.filter(|p| *p < 99.0) {
        notes.push(format!(
            "only {p:.1}% of the bound memory was on its node at the end"
        ));
    }
    if plan.bind == Bind::Free {
        let mode = kernel::mode(&o.settings);
        if !kernel::promotes(mode) {
            notes.push(format!(
                "kernel.numa_balancing = {}: this mode promotes nothing; to let the kernel promote, as root: sysctl -w kernel.numa_balancing=2",
                mode.map_or("(not available)".into(), |m| m.to_string())
            ));
        }
        if kernel::demotion_enabled(&o.settings) == Some(false)
            && plan.test != super::plan::Test::Promotion
        {
            notes.push("demotion_enabled is false: reclaim demotes nothing; to let it, as root: echo true > /sys/kernel/mm/numa/demotion_enabled".into());
        }
        if !o.settings.contains_key("scan_delay_ms") {
            notes.push("NUMA balancing's scan settings not read (debugfs is root's, mounted at /sys/kernel/debug)".into());
        }
    }
    if o.cpus_seen.iter().any(|c| !t.cpus.contains(*c)) {
        notes.push(format!("a worker ran outside node {}'s CPUs", t.cpu_node));
    }
    notes.push("promotion and demotion counters are /proc/vmstat's, for the whole system".into());
    if let Some(sig) = o.interrupted {
        notes.push(format!("interrupted by signal {sig}: the run is partial"));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn the_position_runs_from_all_slow_to_all_fast() {
        assert_eq!(position(15.0, 20.0, 10.0).pct, Some(50.0));
        assert_eq!(position(20.0, 20.0, 10.0).pct, Some(100.0));
        // Baselines within 1%: no position.
        assert_eq!(position(10.0, 10.05, 10.0).pct, None);
        // The worst came out better: no position either.
        assert_eq!(position(10.0, 9.0, 10.0).pct, None);
    }

    #[test]
    fn the_mark_is_the_first_look_with_90_pct_of_the_hot_set_fast() {
        let t = Tiers {
            fast: 0,
            slow: 1,
            fast_tier: 4,
            slow_tier: 70,
            cpu_node: 0,
            cpus: Default::default(),
        };
        let plan = Plan {
            test: super::super::plan::Test::Promotion,
            bind: Bind::Free,
            regions: vec![
                super::super::plan::Region {
                    heat: Heat::Cold,
                    bytes: 100,
                    node: 1,
                },
                super::super::plan::Region {
                    heat: Heat::Hot,
                    bytes: 100,
                    node: 1,
                },
            ],
            secs: 3.0,
            threads: 1,
            notes: vec![],
        };
        let look = |t: f64, hot_fast: u64| Look {
            t,
            mem: vec![
                BTreeMap::from([(1, 100)]),
                BTreeMap::from([(0, hot_fast), (1, 100 - hot_fast)]),
            ],
            ..Default::default()
        };
        let o = Outcome {
            looks: vec![
                look(0.5, 0),
                look(1.0, 50),
                look(1.5, 89),
                look(2.0, 90),
                look(2.5, 100),
            ],
            runtime_s: 3.0,
            ..Default::default()
        };
        assert_eq!(mark_time(&plan, &o, 0), Some(2.0));
        let o = Outcome {
            looks: vec![look(0.5, 0), look(1.0, 10)],
            ..o
        };
        assert_eq!(mark_time(&plan, &o, 0), None);
        let r = record(
            &plan,
            &o,
            &t,
            &Settings {
                interval: std::time::Duration::from_millis(500),
                sample_pages: 64,
            },
            None,
        );
        assert!(!r.metrics.contains_key(tm::HOT_90_S));
        assert_eq!(r.metrics[tm::HOT_FAST_END_PCT].value, 10.0);
        assert_eq!(r.metrics[tm::COLD_FAST_END_PCT].value, 0.0);
        assert_eq!(r.series.len(), 3);
        assert_eq!(r.series[0].lines.len(), 4);
    }
}
