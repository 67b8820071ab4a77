//! Record and param names of the `run` job: the records it writes of its
//! own, and what its summary reads of the parts it ran.

/// The record `run` adds under a part's probe when that part failed; the
/// part's other records, if it printed any, are kept beside it.
pub(crate) const NOT_COMPLETE: &str = "not complete";

/// The record a stopped command leaves when it stopped before measuring
/// anything, to carry the note that says so.
pub(crate) const INTERRUPTED: &str = "interrupted";
