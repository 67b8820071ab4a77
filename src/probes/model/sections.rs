//! The tables `numabench model` prints from what it just worked out. They
//! say more than the records keep (how each row's classes were found, where
//! a process's pages are, each node alone in a validation), so they are made
//! from the analysis and the measurement, not from the records.

use super::validate::Checked;
use super::{Mix, Modelled, Process, best_prediction};
use crate::analysis::model as m;
use crate::view::Section;
use std::collections::BTreeMap;

/// Classes, Gamma, D for the mix and the process's predictions.
pub(crate) fn of_model(x: &Modelled, topo: &crate::topology::Topology) -> Vec<Section> {
    let mut out = super::view::class_sections(&x.atlas, topo, &x.gamma);
    out.extend(x.mix.as_ref().map(|mix| mix_section(mix, &x.gamma)));
    out.extend(x.process.as_ref().map(process_section));
    out
}

fn mix_section(mix: &Mix, gamma: &m::Peak) -> Section {
    let (d, alphas) = (mix.d, &mix.alphas);
    let mut s = Section::new(format!("data-access performance D ({} classes)", mix.from));
    let terms: Vec<String> = mix
        .thetas
        .iter()
        .zip(alphas)
        .map(|(t, a)| format!("{t:.4} x {a:.4}"))
        .collect();
    s.lines.push(format!("D = {} = {d:.4}", terms.join(" + ")));
    s.lines.push(format!(
        "predicted bandwidth D x Gamma = {:.0} MB/s",
        d * gamma.mb_s
    ));
    s.lines.push(format!(
        "loss against alpha_0: D - alpha_0 = {:+.4} ({:+.1}% of alpha_0)",
        m::loss(d, alphas[0]),
        100.0 * m::loss(d, alphas[0]) / alphas[0]
    ));
    s
}

fn process_section(p: &Process) -> Section {
    let pid = p.pid;
    let total: u64 = p.bytes.values().sum();
    let mut s = Section::new(format!("process {pid}: predicted D on each CPU node"));
    let shares: Vec<String> = p
        .bytes
        .iter()
        .map(|(n, b)| format!("node {n} {:.1}%", 100.0 * *b as f64 / total.max(1) as f64))
        .collect();
    s.lines.push(format!(
        "its {} are on {}",
        crate::units::bytes(total),
        if shares.is_empty() {
            "no node (nothing resident)".into()
        } else {
            shares.join(", ")
        }
    ));
    if !p.unknown.is_empty() {
        s.lines.push(format!(
            "memory on nodes {:?} is not in the matrix and counts as nothing",
            p.unknown
        ));
    }
    s.header = vec!["cpu node".into(), "D".into(), "predicted MB/s".into()];
    for x in &p.predictions {
        s.rows.push(vec![
            x.cpu_node.to_string(),
            format!("{:.4}", x.d),
            format!("{:.0}", x.mb_s),
        ]);
    }
    if let Some(best) = best_prediction(&p.predictions) {
        if let Some(n) = p.now {
            s.lines.push(format!("it last ran on node {n}"));
        }
        s.lines.push(if p.now == Some(best.cpu_node) {
            format!(
                "advice: it already runs on the best node ({}); keep it there",
                best.cpu_node
            )
        } else {
            format!(
                "advice: run it on node {} (D {:.4}): numactl --cpunodebind={} <command>, or migratepages/taskset for the running process",
                best.cpu_node, best.d, best.cpu_node
            )
        });
    }
    s
}

/// The validation: each node alone, the mixed run, both predictions.
pub(crate) fn of_validation(c: &Checked) -> Section {
    let v = &c.validation;
    let mut s = Section::new(format!(
        "model check: one thread on CPU node {}, {} ({}), memory split by weight",
        v.cpu_node, v.mixed.kernel.op, v.mixed.kernel.name
    ));
    s.header = [
        "memory node",
        "weight",
        "theta asked",
        "theta found",
        "MB/s alone",
    ]
    .map(String::from)
    .to_vec();
    let (asked, found) = (v.thetas(), v.measured_thetas());
    for (i, (n, w, _)) in v.pure.iter().enumerate() {
        s.rows.push(vec![
            n.to_string(),
            w.to_string(),
            format!("{:.3}", asked[i]),
            format!("{:.3}", found[i]),
            format!("{:.0}", c.alone[i]),
        ]);
    }
    s.lines.extend(v.notes.iter().cloned());
    s.lines
        .push(format!("measured mixed placement: {:.0} MB/s", c.measured));
    s.lines.push(format!(
        "predicted, the thesis' linear model sum(theta_i x b_i): {:.0} MB/s, error {:+.1}%",
        c.linear,
        c.error_pct(c.linear)
    ));
    s.lines.push(format!(
        "predicted, time-weighted 1 / sum(theta_i / b_i): {:.0} MB/s, error {:+.1}%",
        c.harmonic,
        c.error_pct(c.harmonic)
    ));
    let mut by_node: BTreeMap<usize, u64> = BTreeMap::new();
    for (n, count) in &v.mixed.seen.pages_by_node {
        *by_node.entry(*n).or_default() += count;
    }
    s.lines.push(format!(
        "pages found per node in the mixed run: {}",
        by_node
            .iter()
            .map(|(n, c)| format!("node {n}: {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    s
}

/// What a stop left of a validation, from its records: each node measured
/// alone, one line each.
pub(crate) fn of_stopped(records: &[crate::results::Record]) -> String {
    use crate::results::names::{metric, param};
    records
        .iter()
        .map(|r| {
            format!(
                "memory node {} alone: {:.0} MB/s\n",
                r.param_shown(param::MEM_NODE).unwrap_or_default(),
                r.value(metric::BANDWIDTH_MB_S).unwrap_or(f64::NAN)
            )
        })
        .collect()
}
