//! How long measuring takes, for plans made before anything is measured
//! (`--plan`, the first line of `run`, `--budget`).
//!
//! The model counts operations and prices each with a constant: mapping
//! and faulting in memory per GiB, linking a chase per GiB, sampling one
//! chase, timing one bandwidth figure. The constants were taken from runs
//! on a 2-CPU guest and a 4-node QEMU guest, and each run's results keep
//! planned beside actual seconds per part, so a host where the model is
//! wrong shows it (docs/run.md, "How long a run takes").

use crate::view::{Builds, PartPlan};

/// Seconds to map, fault in and write one GiB from one thread (a fresh
/// guest's first touch is slower; a reused node is faster).
pub(crate) const FAULT_S_PER_GIB: f64 = 0.6;
/// Seconds to link a full-random chase through one GiB: one cache miss
/// per line. Page-local and strided chases link in [`LOCAL_LINK_SHARE`]
/// of that.
pub(crate) const LINK_S_PER_GIB: f64 = 1.6;
/// Share of [`LINK_S_PER_GIB`] a chase that stays within pages takes.
pub(crate) const LOCAL_LINK_SHARE: f64 = 0.3;
/// Seconds to sample one chase: a warm-up until two runs agree, then 7 to
/// 21 samples of about 10 ms (`measure::sample_chase`), and the first
/// lap.
pub(crate) const CHASE_S: f64 = 0.25;
/// Seconds to start a team and check where its memory went, per
/// measurement.
pub(crate) const TEAM_S: f64 = 0.01;

/// A bandwidth figure's timing in a run trimmed to its budget: the best
/// of two runs of 20 ms.
pub(crate) const TRIMMED_TIMING: crate::probes::measure::Timing = crate::probes::measure::Timing {
    tries: 2,
    min_run: std::time::Duration::from_millis(20),
};

/// A bandwidth figure's timing in a run trimmed the most: one run of
/// 10 ms after the warm-up.
pub(crate) const BRIEF_TIMING: crate::probes::measure::Timing = crate::probes::measure::Timing {
    tries: 1,
    min_run: std::time::Duration::from_millis(10),
};

/// The timing of a bandwidth figure in a run trimmed to `trim`.
pub(crate) fn timing(trim: crate::view::Trim) -> crate::probes::measure::Timing {
    use crate::view::Trim;
    if trim >= Trim::Brief {
        BRIEF_TIMING
    } else if trim >= Trim::Repeats {
        TRIMMED_TIMING
    } else {
        crate::probes::measure::Timing::default()
    }
}

/// GiB in `bytes`.
pub(crate) fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// Seconds to map and fault in `bytes` with `threads` writing their share.
pub(crate) fn fault_s(bytes: u64, threads: usize) -> f64 {
    gib(bytes) * FAULT_S_PER_GIB / threads.max(1) as f64
}

/// Seconds to map, fault in and link a chase buffer of `bytes`.
pub(crate) fn chase_build_s(bytes: u64, full_random: bool) -> f64 {
    let share = if full_random { 1.0 } else { LOCAL_LINK_SHARE };
    fault_s(bytes, 1) + gib(bytes) * LINK_S_PER_GIB * share
}

/// Seconds of one bandwidth figure timed `tries` times for at least
/// `min_run` each, after a warm-up that grows the repetitions to a
/// quarter of `min_run` (about half a run more in all).
pub(crate) fn bandwidth_s(tries: usize, min_run: std::time::Duration) -> f64 {
    (tries.max(1) as f64 + 0.5) * min_run.as_secs_f64() + TEAM_S
}

/// A plan put together operation by operation.
#[derive(Debug, Default)]
pub(crate) struct Estimate {
    seconds: f64,
    buffers: Vec<Builds>,
    mapped_at_once: u64,
    capped_by: Option<String>,
}

impl Estimate {
    /// `s` more seconds.
    pub(crate) fn add(&mut self, s: f64) -> &mut Self {
        self.seconds += s;
        self
    }

    /// `count` builds of `bytes` each holding `what` (builds of one kind
    /// are counted together, their sizes as a range); their seconds are
    /// added by the caller, which knows how they are built.
    pub(crate) fn builds(&mut self, what: &str, count: usize, bytes: u64) -> &mut Self {
        if count > 0 {
            match self.buffers.iter_mut().find(|b| b.what == what) {
                Some(b) => {
                    b.count += count;
                    b.bytes = b.bytes.max(bytes);
                    b.smallest = b.smallest.min(bytes);
                }
                None => self.buffers.push(Builds {
                    what: what.to_string(),
                    count,
                    bytes,
                    smallest: bytes,
                }),
            }
        }
        self
    }

    /// At least `bytes` mapped at one time.
    pub(crate) fn mapped(&mut self, bytes: u64) -> &mut Self {
        self.mapped_at_once = self.mapped_at_once.max(bytes);
        self
    }

    /// No more than `limit_s` plus `overrun_s` (what runs on after the
    /// limit: the measurement under way when it is reached).
    pub(crate) fn cap(&mut self, limit_s: f64, overrun_s: f64) -> &mut Self {
        if self.seconds > limit_s + overrun_s {
            self.seconds = limit_s + overrun_s;
            self.capped_by = Some(format!("its time limit of {limit_s:.0} s"));
        }
        self
    }

    /// The plan, saying what it measures.
    pub(crate) fn plan(self, measures: String) -> PartPlan {
        PartPlan {
            measures,
            buffers: self.buffers,
            mapped_at_once: self.mapped_at_once,
            seconds: self.seconds,
            capped_by: self.capped_by,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_of_one_kind_and_size_add_up_and_the_cap_is_named() {
        let mut e = Estimate::default();
        e.builds("chase", 2, 1 << 30)
            .builds("chase", 3, 1 << 30)
            .builds("chase", 1, 1 << 20)
            .builds("arrays", 0, 1)
            .mapped(5)
            .mapped(3)
            .add(100.0)
            .cap(60.0, 5.0);
        let p = e.plan("x".into());
        assert_eq!(p.buffers.len(), 1);
        assert_eq!(p.buffers[0].count, 6);
        assert_eq!(
            (p.buffers[0].smallest, p.buffers[0].bytes),
            (1 << 20, 1 << 30)
        );
        assert_eq!(p.mapped_at_once, 5);
        assert_eq!(p.seconds, 65.0);
        assert_eq!(p.capped_by.as_deref(), Some("its time limit of 60 s"));
    }

    #[test]
    fn a_bigger_chase_costs_more_and_full_random_more_than_page_local() {
        assert!(chase_build_s(2 << 30, true) > chase_build_s(1 << 30, true));
        assert!(chase_build_s(1 << 30, true) > chase_build_s(1 << 30, false));
        assert!(fault_s(1 << 30, 4) < fault_s(1 << 30, 1));
    }
}
