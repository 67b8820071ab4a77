//! Record, param and metric names of the `model` probe alone.

/// The record holding Gamma.
pub const GAMMA: &str = "gamma";

/// Params of the model alone.
pub mod param {
    /// Where Gamma comes from, in words.
    pub const SOURCE: &str = "source";
    /// How the classes were found, in words.
    pub const CLASS_RULE: &str = "class_rule";
    /// A class's index, 0 = fastest.
    pub const CLASS: &str = "class";
    /// A class's memory nodes (per CPU node) or cells (system-wide).
    pub const MEMBERS: &str = "members";
    /// The access mix of a D record.
    pub const THETA: &str = "theta";
    pub const PID: &str = "pid";
    /// `node:weight,...` of a validation.
    pub const WEIGHTS: &str = "weights";
    pub const WEIGHT: &str = "weight";
}

/// Metrics of the model alone.
pub mod metric {
    pub const ALPHA: &str = "alpha";
    /// A class's best saturated bandwidth (Table 3.4's multi-threaded row).
    pub const SATURATED_MB_S: &str = "saturated_mb_s";
    pub const D: &str = "d";
    pub const LOSS: &str = "loss";
    pub const PREDICTED_LINEAR_MB_S: &str = "predicted_linear_mb_s";
    pub const PREDICTED_HARMONIC_MB_S: &str = "predicted_harmonic_mb_s";
    pub const ERROR_LINEAR_PCT: &str = "error_linear_pct";
    pub const ERROR_HARMONIC_PCT: &str = "error_harmonic_pct";
}
