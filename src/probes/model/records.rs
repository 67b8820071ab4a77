//! The model's results as records: Gamma, every class with its alpha (per
//! CPU node and system-wide), D for an access mix, predictions for a
//! process, and a validation (or what a stop left of it).

use super::validate::{Checked, Validation};
use super::{Mix, Modelled, Process};
use crate::analysis::atlas::Atlas;
use crate::analysis::classes::rule;
use crate::analysis::model as m;
use crate::analysis::placement;
use crate::probes::measure::Bandwidth;
use crate::results::names::model::{self as md, metric as mm, param as mp};
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Record};

/// Every record of a modelled matrix, in the order shown.
pub(crate) fn of_model(x: &Modelled) -> Vec<Record> {
    let mut out = class_records(&x.atlas, &x.gamma);
    out.extend(x.mix.as_ref().map(|mix| mix_record(mix, &x.gamma)));
    if let Some(p) = &x.process {
        out.extend(process_records(p));
    }
    out
}

/// Gamma and every class with its alpha, per CPU node and system-wide.
fn class_records(atlas: &Atlas, gamma: &m::Peak) -> Vec<Record> {
    let mut out = vec![
        Record::new(probe::MODEL, md::GAMMA)
            .param(mp::SOURCE, gamma.describe())
            .param(mp::CLASS_RULE, rule(&atlas.class_options))
            .metric(metric::PEAK_MB_S, gamma.mb_s, "MB/s", Better::Higher),
    ];
    let class = |name: String, k: usize, max: f64, nodes: Vec<String>| {
        Record::new(probe::MODEL, &name)
            .param(mp::CLASS, k)
            .param(mp::MEMBERS, nodes)
            .metric(metric::BANDWIDTH_MB_S, max, "MB/s", Better::Higher)
            .metric(mm::ALPHA, m::alpha(max, gamma.mb_s), "", Better::Higher)
    };
    let rows: Vec<_> = atlas
        .cpu_nodes
        .iter()
        .map(|&c| placement::row_classes(atlas, c))
        .collect();
    let saturated = super::view::saturated_by_class(atlas, &rows);
    for rc in &rows {
        let c = rc.cpu_node;
        for k in &rc.classes.classes {
            let members = rc.members(k.index).iter().map(|m| m.to_string()).collect();
            let mut rec = class(
                format!("class {} from node {c}", k.index),
                k.index,
                k.max,
                members,
            )
            .param(param::CPU_NODE, c);
            if let Some(&v) = saturated.get(&(c, k.index)) {
                rec = rec.metric(mm::SATURATED_MB_S, v, "MB/s", Better::Higher);
            }
            out.push(rec);
        }
    }
    let (cells, classes) = placement::system_classes(atlas);
    for k in &classes.classes {
        let members = k
            .members
            .iter()
            .map(|&i| format!("{}->{}", cells[i].0, cells[i].1))
            .collect();
        out.push(class(
            format!("class {} system-wide", k.index),
            k.index,
            k.max,
            members,
        ));
    }
    out
}

fn mix_record(mix: &Mix, gamma: &m::Peak) -> Record {
    let loss = m::loss(mix.d, mix.alphas[0]);
    let mut rec = Record::new(probe::MODEL, &format!("D {}", mix.from))
        .param(mp::THETA, mix.thetas.clone())
        .metric(mm::D, mix.d, "", Better::Higher)
        .metric(mm::LOSS, loss, "", Better::Higher)
        .metric(
            metric::BANDWIDTH_MB_S,
            mix.d * gamma.mb_s,
            "MB/s",
            Better::Higher,
        );
    if let Some(c) = mix.cpu_node {
        rec = rec.param(param::CPU_NODE, c);
    }
    rec
}

fn process_records(p: &Process) -> Vec<Record> {
    p.predictions
        .iter()
        .map(|x| {
            Record::new(
                probe::MODEL,
                &format!("pid {} on node {}", p.pid, x.cpu_node),
            )
            .param(mp::PID, p.pid)
            .param(param::CPU_NODE, x.cpu_node)
            .metric(mm::D, x.d, "", Better::Higher)
            .metric(metric::BANDWIDTH_MB_S, x.mb_s, "MB/s", Better::Higher)
        })
        .collect()
}

/// `node:weight,...` as the user gave them.
fn weights_text(v: &Validation) -> String {
    v.pure
        .iter()
        .map(|(n, w, _)| format!("{n}:{w}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The mixed placement measured, with both predictions and their errors.
pub(crate) fn of_validation(c: &Checked) -> Record {
    let v = &c.validation;
    let mut rec = Record::new(probe::MODEL, &format!("validate {}", v.cpu_node))
        .param(param::CPU_NODE, v.cpu_node)
        .param(param::KERNEL, v.mixed.kernel.op.to_string())
        .param(param::VARIANT, v.mixed.kernel.name)
        .param(param::SIZE_BYTES, v.mixed.array_bytes)
        .param(mp::WEIGHTS, weights_text(v))
        .metric(metric::BANDWIDTH_MB_S, c.measured, "MB/s", Better::Higher)
        .metric(mm::PREDICTED_LINEAR_MB_S, c.linear, "MB/s", Better::Higher)
        .metric(
            mm::PREDICTED_HARMONIC_MB_S,
            c.harmonic,
            "MB/s",
            Better::Higher,
        )
        .metric(
            mm::ERROR_LINEAR_PCT,
            c.error_pct(c.linear),
            "%",
            Better::Lower,
        )
        .metric(
            mm::ERROR_HARMONIC_PCT,
            c.error_pct(c.harmonic),
            "%",
            Better::Lower,
        );
    rec.samples
        .insert(metric::BANDWIDTH_MB_S.into(), v.mixed.stream_samples());
    rec.notes.extend(v.notes.iter().cloned());
    rec
}

/// What a stop left of a validation: the nodes measured alone.
pub(crate) fn of_stopped(cpu_node: usize, pure: &[(usize, u32, Bandwidth)]) -> Vec<Record> {
    pure.iter()
        .map(|(n, w, b)| {
            Record::new(probe::MODEL, &format!("validate {cpu_node} pure {n}"))
                .param(param::CPU_NODE, cpu_node)
                .param(param::MEM_NODE, *n)
                .param(mp::WEIGHT, *w)
                .param(param::SIZE_BYTES, b.array_bytes)
                .metric(
                    metric::BANDWIDTH_MB_S,
                    b.stream_mb_s(),
                    "MB/s",
                    Better::Higher,
                )
        })
        .collect()
}
