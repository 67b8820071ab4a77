//! What happened to a record's figures, as data: a time limit or a signal
//! that stopped the measurement, a part that failed, a buffer a memory
//! limit scaled down, a method that gave way to another. Each goes into
//! the record beside the note that says it in words; the notes are for
//! people, these for the code that acts on them (the run's summary, a
//! document's completeness, a view's row of a partial run), which never
//! reads the notes' wording.
//!
//! In the document: `conditions`, a list of objects tagged by `kind`, e.g.
//! `{"kind": "cut_by_time_limit", "limit_s": 20.0}`; left out when empty,
//! so a document of a run nothing happened to reads as before. A kind this
//! build does not know reads as [`Condition::Unknown`].

use super::document::Record;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Condition {
    /// The probe's time limit (`--time-limit`, `-t`) stopped it before it
    /// measured all it planned: figures are missing, or a curve ends early.
    /// `limit_s` is the limit in seconds.
    CutByTimeLimit { limit_s: f64 },
    /// A signal (`SIGINT`, `SIGTERM`) stopped the measurement: its figures
    /// are partial.
    CutBySignal { signal: i32 },
    /// The measurement failed after part of it was made (a task that died,
    /// a buffer the kernel refused): its figures are partial; `why` is the
    /// error.
    PartFailed { why: String },
    /// A buffer was scaled down to fit under the process's memory limit
    /// (a memory cgroup or a resource limit), not under the node's free
    /// memory; `source` names the limit as the topology's `memory_limit`
    /// does.
    ScaledByMemoryLimit { source: String },
    /// The method asked for gave way to another part-way (AutoNUMA's
    /// sampled looks to `numa_maps`); `why` says what failed.
    FallbackMethod { why: String },
    /// A kind a newer numabench wrote that this one does not know.
    #[serde(other)]
    Unknown,
}

impl Condition {
    /// The condition of a time limit of `limit` that stopped a probe.
    pub fn time_limit(limit: std::time::Duration) -> Condition {
        Condition::CutByTimeLimit {
            limit_s: limit.as_secs_f64(),
        }
    }

    /// Whether it is a stop by a time limit.
    pub fn is_time_limit(&self) -> bool {
        matches!(self, Condition::CutByTimeLimit { .. })
    }
}

impl Record {
    /// The time limit, in seconds, that cut the record's measurement short.
    pub fn cut_by_time_limit(&self) -> Option<f64> {
        self.conditions.iter().find_map(|c| match c {
            Condition::CutByTimeLimit { limit_s } => Some(*limit_s),
            _ => None,
        })
    }

    /// The signal that stopped the record's measurement.
    pub fn cut_by_signal(&self) -> Option<i32> {
        self.conditions.iter().find_map(|c| match c {
            Condition::CutBySignal { signal } => Some(*signal),
            _ => None,
        })
    }

    /// Why the record's measurement failed part-way.
    pub fn part_failed(&self) -> Option<&str> {
        self.conditions.iter().find_map(|c| match c {
            Condition::PartFailed { why } => Some(why.as_str()),
            _ => None,
        })
    }

    /// Whether the memory limit named `source` scaled a buffer of the
    /// record down.
    pub fn scaled_by_memory_limit(&self, source: &str) -> bool {
        self.conditions
            .iter()
            .any(|c| matches!(c, Condition::ScaledByMemoryLimit { source: s } if s == source))
    }

    /// Why the record's method gave way to another.
    pub fn fallback_method(&self) -> Option<&str> {
        self.conditions.iter().find_map(|c| match c {
            Condition::FallbackMethod { why } => Some(why.as_str()),
            _ => None,
        })
    }

    /// Adds `c` unless the record has it already.
    pub fn add_condition(&mut self, c: Condition) {
        if !self.conditions.contains(&c) {
            self.conditions.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn every() -> Vec<Condition> {
        vec![
            Condition::CutByTimeLimit { limit_s: 20.0 },
            Condition::CutBySignal { signal: 2 },
            Condition::PartFailed {
                why: "mbind: out of memory".into(),
            },
            Condition::ScaledByMemoryLimit {
                source: "memory cgroup /x (memory.max)".into(),
            },
            Condition::FallbackMethod {
                why: "move_pages: EPERM".into(),
            },
            Condition::Unknown,
        ]
    }

    #[test]
    fn each_condition_round_trips_through_json() {
        for c in every() {
            let text = serde_json::to_string(&c).unwrap();
            let back: Condition = serde_json::from_str(&text).unwrap();
            assert_eq!(back, c, "{text}");
        }
        assert_eq!(
            serde_json::to_value(Condition::CutByTimeLimit { limit_s: 0.5 }).unwrap(),
            json!({"kind": "cut_by_time_limit", "limit_s": 0.5})
        );
    }

    #[test]
    fn a_record_keeps_its_conditions_through_json_and_leaves_out_none() {
        let mut r = Record::new("peak", "best 0->0 1t");
        let plain = serde_json::to_value(&r).unwrap();
        assert!(plain.get("conditions").is_none(), "{plain}");
        for c in every() {
            r.add_condition(c.clone());
            r.add_condition(c);
        }
        assert_eq!(r.conditions.len(), every().len());
        let back: Record = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.cut_by_time_limit(), Some(20.0));
        assert_eq!(back.cut_by_signal(), Some(2));
        assert_eq!(back.part_failed(), Some("mbind: out of memory"));
        assert!(back.scaled_by_memory_limit("memory cgroup /x (memory.max)"));
        assert!(!back.scaled_by_memory_limit("memory cgroup /y (memory.max)"));
        assert_eq!(back.fallback_method(), Some("move_pages: EPERM"));
    }

    #[test]
    fn a_kind_this_build_does_not_know_reads_as_unknown() {
        let r: Record = serde_json::from_value(json!({
            "probe": "peak",
            "name": "best",
            "conditions": [{"kind": "cut_by_moon_phase", "phase": "full"}, {"kind": "cut_by_signal", "signal": 15}]
        }))
        .unwrap();
        assert_eq!(
            r.conditions,
            [Condition::Unknown, Condition::CutBySignal { signal: 15 }]
        );
        assert_eq!(r.cut_by_time_limit(), None);
    }
}
