//! Bandwidth classes: groups of node-to-node bandwidths that a program can
//! treat as "the same speed".
//!
//! Braithwaite's thesis (NUMA data-access bandwidth characterization) sorts
//! the best observed bandwidth of every (cpu node, memory node) pair into a
//! few classes, reports each class by its best value, and asks that a class's
//! values lie within ten percent of that value. It found the classes with
//! K-means from random starts, which can miss them. Here the clustering is
//! deterministic instead:
//!
//! * `ckmeans` is the optimal 1-D k-means (least within-cluster sum of
//!   squared deviations) by dynamic programming over the sorted values, as in
//!   Ckmeans.1d.dp. Inputs are a handful to a few hundred values, so the
//!   O(k n²) table is cheap.
//! * [`classify`] picks the number of classes itself, by the thesis' rule
//!   (section 3.4: "bandwidth classes with values within ten percent of
//!   the maximum value"): the smallest k for which every cluster of the
//!   optimal k-clustering has min >= (1 - tolerance) x max and no gap
//!   between neighbouring values inside it wider than half the tolerance
//!   (a class is one speed: values spread evenly over 10% are one class,
//!   two tight groups 9% apart are two, as the thesis keeps 5.8 and 5.3
//!   GB/s apart in Table 3.4 and 8778 and 8109 MB/s in Table A.3). The
//!   tolerance is [`ClassOptions::tolerance`], 10% by default.
//! * [`ClassOptions::merge_close`] adds a step the thesis does not have:
//!   adjacent classes are merged, fastest first, while the slower one's
//!   maximum is >= (1 - tolerance) x the maximum of the class it joins.
//!   It gives fewer, coarser classes (one may then span down to
//!   (1 - tolerance)² of its maximum), for machines whose near-equal
//!   classes are noise.
//!
//! Class 0 is the fastest. A class is represented by its maximum, as the
//! thesis does, so its alpha is max / Gamma (the theoretical bandwidth).
//! Values that are not finite or not positive are not bandwidths: they get
//! no class (`None`).

/// How close values must be to share a class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassOptions {
    /// Fraction (0.10 = 10%). NaN or negative counts as 0, above 1 as 1.
    pub tolerance: f64,
    /// Merge adjacent classes whose maxima are within the tolerance (not
    /// the thesis' rule; see the module documentation).
    pub merge_close: bool,
}

impl Default for ClassOptions {
    fn default() -> Self {
        ClassOptions::tolerance(0.10)
    }
}

impl ClassOptions {
    /// The thesis' rule at `tolerance` (a fraction), no merging.
    pub fn tolerance(tolerance: f64) -> Self {
        ClassOptions {
            tolerance,
            merge_close: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Class {
    /// 0 = fastest.
    pub index: usize,
    /// The class's representative bandwidth.
    pub max: f64,
    pub min: f64,
    pub mean: f64,
    /// Indices into the slice given to [`classify`], ascending.
    pub members: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Classes {
    /// Fastest first; `classes[i].index == i`.
    pub classes: Vec<Class>,
    /// Class per input value; `None` for values that were ignored.
    pub assignment: Vec<Option<usize>>,
    /// How the number of classes was chosen, in words.
    pub criterion: String,
}

impl Classes {
    /// Class of input value `value_index`; `None` when it was ignored or the
    /// index is out of range.
    pub(crate) fn class_of(&self, value_index: usize) -> Option<usize> {
        self.assignment.get(value_index).copied().flatten()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.classes.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// One line per class, in the thesis' report form, e.g.
    /// `Class 0: <= 9300 MB/s (alpha 0.5449)`. Values are taken as MB/s;
    /// alpha (max / gamma) is left out without a usable gamma.
    pub(crate) fn describe(&self, gamma_mb_s: Option<f64>) -> Vec<String> {
        let gamma = gamma_mb_s.filter(|g| g.is_finite() && *g > 0.0);
        self.classes
            .iter()
            .map(|c| match gamma {
                Some(g) => format!(
                    "Class {}: <= {:.0} MB/s (alpha {:.4})",
                    c.index,
                    c.max,
                    c.max / g
                ),
                None => format!("Class {}: <= {:.0} MB/s", c.index, c.max),
            })
            .collect()
    }
}

/// Distinct values ascending, with how often each occurs. Working on distinct
/// values keeps equal bandwidths in one cluster by construction.
fn distinct(mut v: Vec<f64>) -> (Vec<f64>, Vec<f64>) {
    v.sort_by(f64::total_cmp);
    let (mut xs, mut ws): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for x in v {
        match ws.last_mut() {
            Some(w) if xs.last() == Some(&x) => *w += 1.0,
            _ => {
                xs.push(x);
                ws.push(1.0);
            }
        }
    }
    (xs, ws)
}

/// Position of `x` in the distinct list (`<` rather than `total_cmp` so that
/// -0.0 finds 0.0).
fn position(xs: &[f64], x: f64) -> usize {
    xs.partition_point(|d| *d < x)
}

/// Back-pointer rows of the optimal clustering of the weighted, sorted,
/// non-empty `xs`: `back[c - 1][i]` is where the last of c clusters over the
/// first i values starts. Rows are added for c = 1, 2, ... until `enough`
/// accepts the rows so far or there are `kmax`; stopping early keeps
/// [`classify`] at O(k n²) for the k it picks.
fn solve(
    xs: &[f64],
    ws: &[f64],
    kmax: usize,
    mut enough: impl FnMut(&[Vec<usize>]) -> bool,
) -> Vec<Vec<usize>> {
    let m = xs.len();
    // Centring keeps the prefix sums of squares small, so segment costs do
    // not lose digits to cancellation.
    let shift = xs[m / 2];
    let (mut w, mut s, mut q) = (vec![0.0; m + 1], vec![0.0; m + 1], vec![0.0; m + 1]);
    for i in 0..m {
        let c = xs[i] - shift;
        w[i + 1] = w[i] + ws[i];
        s[i + 1] = s[i] + ws[i] * c;
        q[i + 1] = q[i] + ws[i] * c * c;
    }
    let cost = |a: usize, b: usize| {
        let (ww, ss) = (w[b] - w[a], s[b] - s[a]);
        (q[b] - q[a] - ss * ss / ww).max(0.0)
    };
    let mut best: Vec<f64> = (0..=m)
        .map(|i| if i == 0 { 0.0 } else { cost(0, i) })
        .collect();
    let mut back = vec![vec![0; m + 1]];
    while back.len() < kmax && !enough(&back) {
        let c = back.len() + 1;
        let mut next = vec![f64::INFINITY; m + 1];
        let mut from = vec![0; m + 1];
        for i in c..=m {
            // Strict `<` keeps the earliest split on ties: deterministic.
            (next[i], from[i]) = (c - 1..i)
                .map(|j| (best[j] + cost(j, i), j))
                .fold((f64::INFINITY, 0), |a, b| if b.0 < a.0 { b } else { a });
        }
        best = next;
        back.push(from);
    }
    back
}

/// Start index of each of the k clusters over all m values, ascending.
fn starts(back: &[Vec<usize>], k: usize, m: usize) -> Vec<usize> {
    let mut out = vec![0; k];
    let mut end = m;
    for c in (1..k).rev() {
        end = back[c][end];
        out[c] = end;
    }
    out
}

/// Optimal 1-D k-means: minimises the within-cluster sum of squared
/// deviations. Returns a cluster id per input value, clusters numbered in
/// ascending value order (0 = smallest values). Equal values share a
/// cluster; k is capped at the number of distinct values, so ids run over
/// `0..min(k, distinct)` with none empty. Non-finite values, and every
/// value when k is 0, get `None`.
#[cfg(test)]
pub(crate) fn ckmeans(values: &[f64], k: usize) -> Vec<Option<usize>> {
    let (xs, ws) = distinct(values.iter().copied().filter(|v| v.is_finite()).collect());
    let k = k.min(xs.len());
    if k == 0 {
        return vec![None; values.len()];
    }
    let st = starts(&solve(&xs, &ws, k, |_| false), k, xs.len());
    values
        .iter()
        .map(|&v| {
            v.is_finite()
                .then(|| st.partition_point(|&s| s <= position(&xs, v)) - 1)
        })
        .collect()
}

fn tolerance(opts: &ClassOptions) -> f64 {
    if opts.tolerance.is_nan() {
        0.0
    } else {
        opts.tolerance.clamp(0.0, 1.0)
    }
}

/// How [`classify`] chooses the classes, in words: the start of every
/// [`Classes::criterion`].
pub(crate) fn rule(opts: &ClassOptions) -> String {
    let tol = tolerance(opts);
    let pct = tol * 100.0;
    let base = format!(
        "optimal 1-D k-means with the smallest k for which every class has \
         min >= {:.3} x max ({pct:.1}% tolerance) and no gap inside wider than {:.1}%",
        1.0 - tol,
        pct / 2.0
    );
    if opts.merge_close {
        format!(
            "{base}, then adjacent classes merged while the slower maximum is within \
             {pct:.1}% of the class it joins"
        )
    } else {
        base
    }
}

/// Groups the positive finite values into bandwidth classes; see the module
/// documentation for the criterion.
pub(crate) fn classify(values: &[f64], opts: &ClassOptions) -> Classes {
    let tol = tolerance(opts);
    let keep = |v: f64| v.is_finite() && v > 0.0;
    let (xs, ws) = distinct(values.iter().copied().filter(|&v| keep(v)).collect());
    let m = xs.len();
    let ignored = values.iter().filter(|&&v| !keep(v)).count();
    let rule = rule(opts);
    if m == 0 {
        return Classes {
            classes: Vec::new(),
            assignment: vec![None; values.len()],
            criterion: format!("{rule}; no positive finite values, no classes"),
        };
    }

    // Clusters as half-open ranges of distinct positions, for as many
    // clusters as there are rows in `back`. Growing k stops at the first
    // fit; k = m always fits, each cluster holding one value.
    let ranges = |back: &[Vec<usize>]| {
        let st = starts(back, back.len(), m);
        (0..st.len())
            .map(|c| (st[c], st.get(c + 1).copied().unwrap_or(m)))
            .collect::<Vec<_>>()
    };
    let within = |&(lo, hi): &(usize, usize)| {
        xs[lo] >= (1.0 - tol) * xs[hi - 1]
            && xs[lo..hi]
                .windows(2)
                .all(|w| w[0] >= (1.0 - tol / 2.0) * w[1])
    };
    let clusters = ranges(&solve(&xs, &ws, m, |back| ranges(back).iter().all(within)));
    let k = clusters.len();

    // Compare with the merged class's maximum, not the neighbour's, so that
    // a chain of near-equal clusters cannot drift arbitrarily far down.
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for &(lo, hi) in clusters.iter().rev() {
        match merged.last_mut() {
            Some(g) if opts.merge_close && xs[hi - 1] >= (1.0 - tol) * xs[g.1 - 1] => g.0 = lo,
            _ => merged.push((lo, hi)),
        }
    }

    let assignment: Vec<Option<usize>> = values
        .iter()
        .map(|&v| {
            let p = position(&xs, v);
            keep(v)
                .then(|| merged.iter().position(|&(lo, hi)| lo <= p && p < hi))
                .flatten()
        })
        .collect();
    let classes = merged
        .iter()
        .enumerate()
        .map(|(index, &(lo, hi))| {
            let members: Vec<usize> = (0..values.len())
                .filter(|&i| assignment[i] == Some(index))
                .collect();
            let mean = members.iter().map(|&i| values[i]).sum::<f64>() / members.len() as f64;
            Class {
                index,
                max: xs[hi - 1],
                min: xs[lo],
                mean,
                members,
            }
        })
        .collect::<Vec<_>>();
    let criterion = if opts.merge_close {
        format!(
            "{rule}; k = {k}, {} merged, {} classes, {ignored} values ignored",
            k - classes.len(),
            classes.len()
        )
    } else {
        format!("{rule}; k = {k}, {ignored} values ignored")
    };
    Classes {
        classes,
        assignment,
        criterion,
    }
}

#[cfg(test)]
#[path = "classes_tests.rs"]
mod tests;
