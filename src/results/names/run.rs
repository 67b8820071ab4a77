//! Record and param names of the `run` job: the records it writes of its
//! own, and what its summary reads of the parts it ran.

/// The record `run` adds under a part's probe when that part failed; the
/// part's other records, if it printed any, are kept beside it.
pub(crate) const NOT_COMPLETE: &str = "not complete";

/// The record a stopped command leaves when it stopped before measuring
/// anything, to carry the note that says so.
pub(crate) const INTERRUPTED: &str = "interrupted";

/// The record `run` keeps per part it ran: the seconds its plan
/// estimated beside the seconds it took.
pub(crate) const PART_TIME: &str = "part time";

/// Params and metrics of a [`PART_TIME`] record.
pub(crate) mod part_time {
    /// The part's probe.
    pub(crate) const PART: &str = "part";
    /// How far the run was trimmed to fit its budget (`none`, `pairs`,
    /// `repeats`, `sizes`).
    pub(crate) const TRIM: &str = "trim";
    /// Seconds the plan estimated.
    pub(crate) const PLANNED_S: &str = "planned_s";
    /// Seconds it took.
    pub(crate) const ACTUAL_S: &str = "actual_s";
}
