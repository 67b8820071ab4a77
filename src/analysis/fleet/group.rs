//! The fleet report: machines grouped by kind, each key figure's spread
//! within a kind with the machines outside it, the kinds rare for their
//! CPU model, and the settings that differ within a kind.

use super::robust::{self, Cut, Spread};
use super::{Kind, Machine, Spec};
use crate::results::Better;
use crate::results::names::fleet::config as cfg;
use serde::Serialize;
use std::collections::BTreeMap;

/// How machines are judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Rule {
    pub cut: Cut,
    /// A kind holding less than this % of the machines of its CPU model is
    /// rare: its node count or memory size is itself the finding.
    pub rare_pct: f64,
    /// Memory sizes within this % of their neighbour are one size.
    pub memory_tolerance_pct: f64,
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            cut: Cut::default(),
            rare_pct: 5.0,
            memory_tolerance_pct: 2.0,
        }
    }
}

/// A machine outside its kind's spread in one figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Outlier {
    pub machine: String,
    pub value: f64,
    pub deviation_pct: f64,
    /// The modified z-score (infinite where the kind's MAD is 0).
    #[serde(serialize_with = "finite_or_null")]
    pub z: f64,
    /// True when it is off in the worse direction.
    pub worse: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<String>,
}

fn finite_or_null<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(*v)
    } else {
        s.serialize_none()
    }
}

/// One key figure within one kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct FigureReport {
    pub id: &'static str,
    pub title: &'static str,
    pub unit: &'static str,
    pub better: Better,
    pub spread: Option<Spread>,
    pub outliers: Vec<Outlier>,
}

/// A setting that differs within a kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Drift {
    pub setting: &'static str,
    /// The value most machines of the kind have, and how many.
    pub usual: String,
    pub usual_count: usize,
    /// Every other machine with its value.
    pub differing: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct KindReport {
    pub kind: Kind,
    pub label: String,
    /// Indices into [`FleetReport::machines`].
    pub machines: Vec<usize>,
    /// Set where the kind is rare for its CPU model: the kind most of that
    /// model's machines are, and how many they are.
    pub rare_beside: Option<(String, usize)>,
    pub figures: Vec<FigureReport>,
    pub drift: Vec<Drift>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct FleetReport {
    pub rule: Rule,
    pub machines: Vec<Machine>,
    pub kinds: Vec<KindReport>,
    /// The key figures, in the order of each machine's figures.
    #[serde(skip)]
    pub specs: Vec<Spec>,
}

impl FleetReport {
    /// Names of the machines with any finding: an outlying figure, a rare
    /// kind, a setting unlike their kind's usual one.
    pub(crate) fn flagged(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for k in &self.kinds {
            if k.rare_beside.is_some() {
                out.extend(k.machines.iter().map(|&i| self.machines[i].name.as_str()));
            }
            for f in &k.figures {
                out.extend(f.outliers.iter().map(|o| o.machine.as_str()));
            }
            for d in &k.drift {
                out.extend(d.differing.iter().map(|(m, _)| m.as_str()));
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Machines split into kinds: CPU model and node count exactly, memory
/// sizes within `tol_pct` of their sorted neighbour as one size (identical
/// machines differ by a few MiB of firmware reservations; a fixed rounding
/// grid would split them where a size sits on a boundary).
fn kinds(machines: &[Machine], tol_pct: f64) -> Vec<(Kind, Vec<usize>)> {
    let mut by_model: BTreeMap<(&str, usize), Vec<usize>> = BTreeMap::new();
    for (i, m) in machines.iter().enumerate() {
        by_model.entry((&m.cpu_model, m.nodes)).or_default().push(i);
    }
    let mut out = Vec::new();
    for ((model, nodes), mut idx) in by_model {
        idx.sort_by_key(|&i| machines[i].memory_bytes);
        let mut group: Vec<usize> = Vec::new();
        let mut flush = |group: &mut Vec<usize>| {
            if group.is_empty() {
                return;
            }
            let mid = machines[group[group.len() / 2]].memory_bytes;
            let kind = Kind {
                cpu_model: model.to_string(),
                nodes,
                memory_gib: (mid as f64 / (1u64 << 30) as f64).round() as u64,
            };
            let mut members = std::mem::take(group);
            members.sort_by(|&a, &b| machines[a].name.cmp(&machines[b].name));
            out.push((kind, members));
        };
        for i in idx {
            if let Some(&last) = group.last() {
                let (a, b) = (machines[last].memory_bytes, machines[i].memory_bytes);
                if b as f64 > a as f64 * (1.0 + tol_pct / 100.0) {
                    flush(&mut group);
                }
            }
            group.push(i);
        }
        flush(&mut group);
    }
    out
}

fn figure_report(
    machines: &[Machine],
    members: &[usize],
    (fi, spec): (usize, &Spec),
    cut: &Cut,
) -> FigureReport {
    let values: Vec<(usize, f64)> = members
        .iter()
        .filter_map(|&i| Some((i, machines[i].figure(fi)?.value)))
        .collect();
    let spread = robust::spread(&values.iter().map(|v| v.1).collect::<Vec<_>>());
    let mut outliers = Vec::new();
    if let Some(s) = &spread {
        for &(i, v) in &values {
            if s.is_outlier(v, cut) {
                let dev = s.deviation_pct(v);
                outliers.push(Outlier {
                    machine: machines[i].name.clone(),
                    value: v,
                    deviation_pct: dev,
                    z: s.z(v),
                    worse: (dev < 0.0) == (spec.better == Better::Higher),
                    cell: machines[i].figure(fi).and_then(|f| f.cell.clone()),
                });
            }
        }
        outliers.sort_by(|a, b| b.deviation_pct.abs().total_cmp(&a.deviation_pct.abs()));
    }
    FigureReport {
        id: spec.id,
        title: spec.title,
        unit: spec.unit,
        better: spec.better,
        spread,
        outliers,
    }
}

/// Settings compared within a kind: every one a machine reports but the
/// tool's own version, which says nothing about the machine.
fn drift(machines: &[Machine], members: &[usize]) -> Vec<Drift> {
    let mut keys: Vec<&'static str> = Vec::new();
    for &i in members {
        for (k, _) in &machines[i].config {
            if *k != cfg::VERSION && !keys.contains(k) {
                keys.push(k);
            }
        }
    }
    let mut out = Vec::new();
    for key in keys {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for &i in members {
            *count
                .entry(machines[i].setting(key).unwrap_or("unknown"))
                .or_default() += 1;
        }
        if count.len() < 2 {
            continue;
        }
        // The most common value; among equals, the first in order.
        let (usual, usual_count) =
            count.iter().fold(
                ("", 0),
                |best, (v, n)| if *n > best.1 { (*v, *n) } else { best },
            );
        let differing = members
            .iter()
            .filter_map(|&i| {
                let v = machines[i].setting(key).unwrap_or("unknown");
                (v != usual).then(|| (machines[i].name.clone(), v.to_string()))
            })
            .collect();
        out.push(Drift {
            setting: key,
            usual: usual.to_string(),
            usual_count,
            differing,
        });
    }
    out
}

/// The report over `machines` (one per machine name, their figures those
/// of `specs`) under `rule`.
pub(crate) fn report(machines: Vec<Machine>, rule: Rule, specs: Vec<Spec>) -> FleetReport {
    let grouped = kinds(&machines, rule.memory_tolerance_pct);
    let mut per_model: BTreeMap<&str, (usize, usize, String)> = BTreeMap::new();
    for (k, members) in &grouped {
        let e = per_model
            .entry(&k.cpu_model)
            .or_insert((0, 0, String::new()));
        e.0 += members.len();
        if members.len() > e.1 {
            e.1 = members.len();
            e.2 = k.label();
        }
    }
    let mut kinds: Vec<KindReport> = grouped
        .iter()
        .map(|(k, members)| {
            let (total, most, main) = &per_model[k.cpu_model.as_str()];
            let rare = (members.len() as f64) < rule.rare_pct / 100.0 * *total as f64
                && members.len() < *most;
            KindReport {
                kind: k.clone(),
                label: k.label(),
                machines: members.clone(),
                rare_beside: rare.then(|| (main.clone(), *most)),
                figures: specs
                    .iter()
                    .enumerate()
                    .map(|f| figure_report(&machines, members, f, &rule.cut))
                    .collect(),
                drift: drift(&machines, members),
            }
        })
        .collect();
    kinds.sort_by(|a, b| {
        b.machines
            .len()
            .cmp(&a.machines.len())
            .then(a.kind.cmp(&b.kind))
    });
    FleetReport {
        rule,
        machines,
        kinds,
        specs,
    }
}

#[cfg(test)]
#[path = "group_tests.rs"]
mod tests;
