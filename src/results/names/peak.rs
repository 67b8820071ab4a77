//! Record, param and metric names of the `peak` probe alone.

/// What a peak record holds, in its `kind` param.
pub(crate) mod kind {
    /// One mix with one store kind from one CPU node to one target.
    pub(crate) const MIX: &str = "mix";
    /// The best mix and store kind of one CPU node, target and thread count.
    pub(crate) const BEST: &str = "best";
}

/// Params of a peak record.
pub(crate) mod param {
    /// One of [`super::kind`].
    pub(crate) const KIND: &str = "kind";
    /// The read/write mix: read, 3:1, 2:1, 1:1, write or triad.
    pub(crate) const MIX: &str = "mix";
    /// regular or nontemporal.
    pub(crate) const STORE: &str = "store";
    /// Where the memory is: a node number, or [`super::INTERLEAVE`].
    pub(crate) const TARGET: &str = "target";
    /// Bytes counted per element (reads + writes, STREAM convention).
    pub(crate) const BYTES_PER_ELEMENT: &str = "bytes_per_element";
    /// Arrays read per element.
    pub(crate) const READ_STREAMS: &str = "read_streams";
    /// Arrays written per element.
    pub(crate) const WRITE_STREAMS: &str = "write_streams";
}

/// The target of memory interleaved over every node allowed.
pub(crate) const INTERLEAVE: &str = "interleave";

/// Columns of the CSV that are not param or metric names.
pub(crate) mod csv {
    /// The lowest share of a team's pages found on its target, in percent.
    pub(crate) const VERIFIED_PCT: &str = "verified_pct";
}
