//! Record, param and metric names of the `loaded` probe alone.

/// What a loaded-latency record holds, in its `kind` param.
pub mod kind {
    /// One point of the curve: the chase's latency under one delay.
    pub const POINT: &str = "point";
    /// A pair's summary: idle latency, the knee, the most bandwidth.
    pub const KNEE: &str = "knee";
}

/// Params of the loaded-latency probe.
pub mod param {
    /// One of [`super::kind`].
    pub const KIND: &str = "kind";
    /// Spin between two injector chunks, in nanoseconds; absent on the
    /// idle point (injectors parked).
    pub const DELAY_NS: &str = "delay_ns";
    /// The spin loop iterations the delay came to on this machine.
    pub const SPINS: &str = "spins";
    /// Nanoseconds one spin iteration took when calibrated.
    pub const NS_PER_SPIN: &str = "ns_per_spin";
    /// Bytes each injector reads (or copies) between two delays.
    pub const CHUNK_BYTES: &str = "chunk_bytes";
    /// Injector threads generating traffic (0 on the idle point).
    pub const INJECTORS: &str = "injectors";
    /// The node whose CPUs the injectors run on.
    pub const INJECTOR_NODE: &str = "injector_node";
    /// CPUs the injectors ran on, as the kernel reported them.
    pub const INJECTOR_CPUS: &str = "injector_cpus";
    /// Bytes of each injector's buffer.
    pub const INJECTOR_BYTES: &str = "injector_bytes";
    /// The traffic the injectors make: [`super::READ`], [`super::COPY`] or
    /// [`super::COPY_NT`].
    pub const MIX: &str = "mix";
    /// Whether the point's latency is below a lighter-loaded point's by
    /// more than the noise allows (true: see the record's note).
    pub const NOT_MONOTONE: &str = "not_monotone";
}

/// Metrics of the loaded-latency probe.
pub mod metric {
    /// Latency with the injectors parked.
    pub const IDLE_LATENCY_NS: &str = "idle_latency_ns";
    /// Injected bandwidth where the latency reaches the knee factor times
    /// the idle latency (interpolated).
    pub const KNEE_BANDWIDTH_MB_S: &str = "knee_bandwidth_mb_s";
    /// The latency at the knee: the knee factor times the idle latency.
    pub const KNEE_LATENCY_NS: &str = "knee_latency_ns";
    /// The most bandwidth any point injected.
    pub const MAX_BANDWIDTH_MB_S: &str = "max_bandwidth_mb_s";
    /// The latency at the point of most bandwidth.
    pub const MAX_LOAD_LATENCY_NS: &str = "max_load_latency_ns";
}

/// `mix` values: reads only, or a 1:1 read:write copy.
pub const READ: &str = "read";
pub const COPY: &str = "copy";
/// 1:1 reads and non-temporal writes (glibc's memcpy for large copies).
pub const COPY_NT: &str = "copy-nt";

/// The name of the idle point's delay in tables and names.
pub const IDLE: &str = "idle";
