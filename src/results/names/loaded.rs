//! Record, param and metric names of the `loaded` probe alone.

/// What a loaded-latency record holds, in its `kind` param.
pub(crate) mod kind {
    /// One point of the curve: the chase's latency under one delay.
    pub(crate) const POINT: &str = "point";
    /// A pair's summary: idle latency, the knee, the most bandwidth.
    pub(crate) const KNEE: &str = "knee";
}

/// Params of the loaded-latency probe.
pub(crate) mod param {
    /// One of [`super::kind`].
    pub(crate) const KIND: &str = "kind";
    /// Spin between two injector chunks, in nanoseconds; absent on the
    /// idle point (injectors parked).
    pub(crate) const DELAY_NS: &str = "delay_ns";
    /// The spin loop iterations the delay came to on this machine.
    pub(crate) const SPINS: &str = "spins";
    /// Nanoseconds one spin iteration took when calibrated.
    pub(crate) const NS_PER_SPIN: &str = "ns_per_spin";
    /// Bytes each injector reads (or copies) between two delays.
    pub(crate) const CHUNK_BYTES: &str = "chunk_bytes";
    /// Injector threads generating traffic (0 on the idle point).
    pub(crate) const INJECTORS: &str = "injectors";
    /// The node whose CPUs the injectors run on.
    pub(crate) const INJECTOR_NODE: &str = "injector_node";
    /// CPUs the injectors ran on, as the kernel reported them.
    pub(crate) const INJECTOR_CPUS: &str = "injector_cpus";
    /// Bytes of each injector's buffer.
    pub(crate) const INJECTOR_BYTES: &str = "injector_bytes";
    /// The traffic the injectors make: [`super::READ`], [`super::COPY`] or
    /// [`super::COPY_NT`].
    pub(crate) const MIX: &str = "mix";
    /// Whether the point's latency is below a lighter-loaded point's by
    /// more than the noise allows (true: see the record's note).
    pub(crate) const NOT_MONOTONE: &str = "not_monotone";
}

/// Metrics of the loaded-latency probe.
pub(crate) mod metric {
    /// Latency with the injectors parked.
    pub(crate) const IDLE_LATENCY_NS: &str = "idle_latency_ns";
    /// Injected bandwidth where the latency reaches the knee factor times
    /// the idle latency (interpolated).
    pub(crate) const KNEE_BANDWIDTH_MB_S: &str = "knee_bandwidth_mb_s";
    /// The latency at the knee: the knee factor times the idle latency.
    pub(crate) const KNEE_LATENCY_NS: &str = "knee_latency_ns";
    /// The most bandwidth any point injected.
    pub(crate) const MAX_BANDWIDTH_MB_S: &str = "max_bandwidth_mb_s";
    /// The latency at the point of most bandwidth.
    pub(crate) const MAX_LOAD_LATENCY_NS: &str = "max_load_latency_ns";
}

/// `mix` values: reads only, or a 1:1 read:write copy.
pub(crate) const READ: &str = "read";
pub(crate) const COPY: &str = "copy";
/// 1:1 reads and non-temporal writes (glibc's memcpy for large copies).
pub(crate) const COPY_NT: &str = "copy-nt";

/// The name of the idle point's delay in tables and names.
pub(crate) const IDLE: &str = "idle";
