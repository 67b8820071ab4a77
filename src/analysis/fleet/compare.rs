//! Two fleets, before and after (a kernel update, a BIOS change), paired
//! by machine name: per machine and figure the change, marked as noise
//! where the machine's own repetitions cannot tell it from none (the rule
//! of `numabench compare`); fleet-wide per figure the median of the
//! machines' changes, marked as noise where a sign test cannot tell the
//! machines that got better from those that got worse.

use super::{Machine, Spec};
use crate::analysis::compare::{change_pct, within_noise};
use crate::results::Better;
use serde::Serialize;
use std::collections::BTreeMap;

/// One figure of one machine, before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct MachineChange {
    pub machine: String,
    pub figure: &'static str,
    pub before: f64,
    pub after: f64,
    /// + is better; `None` from a before of 0.
    pub change_pct: Option<f64>,
    /// `None` where neither run kept repetitions.
    pub within_noise: Option<bool>,
}

/// One figure over every machine in both fleets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct FleetChange {
    pub figure: &'static str,
    pub title: &'static str,
    pub unit: &'static str,
    pub better: Better,
    /// Machines with the figure in both fleets.
    pub machines: usize,
    pub median_before: f64,
    pub median_after: f64,
    /// The median of the machines' changes, + = better.
    pub median_change_pct: f64,
    /// Whether as many machines got better as worse, as far as a sign test
    /// can tell (p > 0.05); `None` for fewer than three machines.
    pub within_noise: Option<bool>,
    /// Machines better / worse beyond their own noise.
    pub better_count: usize,
    pub worse_count: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct FleetComparison {
    pub fleet: Vec<FleetChange>,
    pub machines: Vec<MachineChange>,
    /// Machines only in the before (after) fleet.
    pub only_before: Vec<String>,
    pub only_after: Vec<String>,
}

/// The median of paired changes `c` and whether it is indistinguishable
/// from no change by a two-sided sign test at 5%: the machines that got
/// better against those that got worse (unchanged ones left out), which
/// holds whatever the changes' distribution and whatever a few broken
/// machines do; `None` for fewer than three machines.
fn median_within_noise(c: &[f64]) -> (f64, Option<bool>) {
    let Some(s) = super::robust::spread(c) else {
        return (0.0, None);
    };
    if c.len() < 3 {
        return (s.median, None);
    }
    let up = c.iter().filter(|x| **x > 0.0).count();
    let down = c.iter().filter(|x| **x < 0.0).count();
    (s.median, Some(sign_test_p(up, down) > 0.05))
}

/// Two-sided p of the sign test with `a` and `b` signs: exact to 60
/// changes, the normal approximation with continuity correction above.
pub(crate) fn sign_test_p(a: usize, b: usize) -> f64 {
    let n = a + b;
    if n == 0 {
        return 1.0;
    }
    let k = a.max(b);
    let p = if n <= 60 {
        let mut c = 1.0f64; // C(n, 0)
        let mut tail = 0.0;
        for i in 0..=n {
            if i >= k {
                tail += c;
            }
            c = c * (n - i) as f64 / (i + 1) as f64;
        }
        2.0 * tail / 2f64.powi(n as i32)
    } else {
        let z = (k as f64 - 0.5 - n as f64 / 2.0) / (n as f64 / 4.0).sqrt();
        2.0 * normal_tail(z)
    };
    p.min(1.0)
}

/// P(Z > z) of a standard normal (Abramowitz and Stegun 26.2.17, error
/// below 7.5e-8).
fn normal_tail(z: f64) -> f64 {
    if z < 0.0 {
        return 1.0 - normal_tail(-z);
    }
    let t = 1.0 / (1.0 + 0.231_641_9 * z);
    let poly = t
        * (0.319_381_530
            + t * (-0.356_563_782
                + t * (1.781_477_937 + t * (-1.821_255_978 + t * 1.330_274_429))));
    (-z * z / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt() * poly
}

/// The change of each figure of `specs` (the figures of both fleets'
/// machines) from `before` to `after`.
pub(crate) fn compare(before: &[Machine], after: &[Machine], specs: &[Spec]) -> FleetComparison {
    let b: BTreeMap<&str, &Machine> = before.iter().map(|m| (m.name.as_str(), m)).collect();
    let a: BTreeMap<&str, &Machine> = after.iter().map(|m| (m.name.as_str(), m)).collect();
    let mut machines = Vec::new();
    let mut fleet = Vec::new();
    for (fi, spec) in specs.iter().enumerate() {
        let mut changes = Vec::new();
        let (mut vb, mut va) = (Vec::new(), Vec::new());
        let (mut better_count, mut worse_count) = (0, 0);
        for (name, mb) in &b {
            let Some(ma) = a.get(name) else { continue };
            let (Some(fb), Some(fa)) = (mb.figure(fi), ma.figure(fi)) else {
                continue;
            };
            let change = change_pct(fb.value, fa.value, spec.better);
            let noise = within_noise(fb.value, fa.value, &fb.samples, &fa.samples);
            if let Some(c) = change {
                changes.push(c);
                if noise != Some(true) && c != 0.0 {
                    if c > 0.0 {
                        better_count += 1;
                    } else {
                        worse_count += 1;
                    }
                }
            }
            vb.push(fb.value);
            va.push(fa.value);
            machines.push(MachineChange {
                machine: name.to_string(),
                figure: spec.id,
                before: fb.value,
                after: fa.value,
                change_pct: change,
                within_noise: noise,
            });
        }
        if vb.is_empty() {
            continue;
        }
        let (median_change_pct, within) = median_within_noise(&changes);
        let med = |v: &mut Vec<f64>| super::robust::median_in_place(v);
        fleet.push(FleetChange {
            figure: spec.id,
            title: spec.title,
            unit: spec.unit,
            better: spec.better,
            machines: vb.len(),
            median_before: med(&mut vb),
            median_after: med(&mut va),
            median_change_pct,
            within_noise: within,
            better_count,
            worse_count,
        });
    }
    let only = |x: &BTreeMap<&str, &Machine>, y: &BTreeMap<&str, &Machine>| {
        x.keys()
            .filter(|k| !y.contains_key(*k))
            .map(|k| k.to_string())
            .collect()
    };
    FleetComparison {
        fleet,
        machines,
        only_before: only(&b, &a),
        only_after: only(&a, &b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fleet::Figure;
    use crate::results::names::fleet::figure as id;

    fn m(name: &str, bw: f64, samples: &[f64]) -> Machine {
        Machine {
            name: name.into(),
            hostname: name.into(),
            source: String::new(),
            started: String::new(),
            complete: true,
            cpu_model: "x".into(),
            nodes: 1,
            memory_bytes: 1 << 30,
            figures: crate::analysis::fleet::specs(&[])
                .iter()
                .map(|s| {
                    (s.id == id::LOCAL_BW_1T).then(|| Figure {
                        value: bw,
                        cell: None,
                        samples: samples.to_vec(),
                    })
                })
                .collect(),
            config: vec![],
        }
    }

    #[test]
    fn per_machine_and_fleet_wide_changes_with_noise_marks() {
        let before: Vec<Machine> = (0..10)
            .map(|i| m(&format!("n{i}"), 1000.0, &[990.0, 1000.0, 1010.0]))
            .chain([m("gone", 1.0, &[])])
            .collect();
        let mut after: Vec<Machine> = (0..10)
            .map(|i| m(&format!("n{i}"), 900.0 + i as f64, &[899.0, 900.0, 901.0]))
            .collect();
        after[3] = m("n3", 1005.0, &[1000.0, 1005.0, 1010.0]);
        let c = compare(&before, &after, &crate::analysis::fleet::specs(&[]));
        assert_eq!(c.only_before, ["gone"]);
        assert!(c.only_after.is_empty());
        let f = &c.fleet[0];
        assert_eq!((f.figure, f.machines), (id::LOCAL_BW_1T, 10));
        assert!(f.median_change_pct < -9.0, "{f:?}");
        assert_eq!(f.within_noise, Some(false));
        assert_eq!((f.better_count, f.worse_count), (0, 9));
        let n3 = c.machines.iter().find(|x| x.machine == "n3").unwrap();
        assert_eq!(n3.within_noise, Some(true));
        let n0 = c.machines.iter().find(|x| x.machine == "n0").unwrap();
        assert_eq!(n0.change_pct, Some(-10.0));
        assert_eq!(n0.within_noise, Some(false));
    }

    #[test]
    fn the_sign_test_against_known_values() {
        // 10 of 10 one way: p = 2 / 1024.
        assert!((sign_test_p(10, 0) - 2.0 / 1024.0).abs() < 1e-12);
        assert_eq!(sign_test_p(5, 4), 1.0);
        // 8 of 10: 2 x 56 / 1024 = 0.109.
        assert!((sign_test_p(8, 2) - 0.109_375).abs() < 1e-9);
        // The normal approximation agrees with the exact sum near 60.
        let exact = sign_test_p(40, 20);
        let approx = {
            let z = (40.0 - 0.5 - 30.0) / (15.0f64).sqrt();
            2.0 * normal_tail(z)
        };
        assert!((exact - approx).abs() < 0.002, "{exact} {approx}");
        assert!(sign_test_p(600, 400) < 1e-9);
    }

    #[test]
    fn an_unchanged_fleet_is_within_noise() {
        let before: Vec<Machine> = (0..9)
            .map(|i| m(&format!("n{i}"), 1000.0 + i as f64, &[]))
            .collect();
        let after: Vec<Machine> = (0..9)
            .map(|i| {
                let d = if i % 2 == 0 { 3.0 } else { -3.0 };
                m(&format!("n{i}"), 1000.0 + i as f64 + d, &[])
            })
            .collect();
        let c = compare(&before, &after, &crate::analysis::fleet::specs(&[]));
        assert_eq!(c.fleet[0].within_noise, Some(true), "{:?}", c.fleet[0]);
    }
}
