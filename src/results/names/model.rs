//! Record, param and metric names of the `model` probe alone.

/// The record holding Gamma.
pub(crate) const GAMMA: &str = "gamma";

/// Params of the model alone.
pub(crate) mod param {
    /// Where Gamma comes from, in words.
    pub(crate) const SOURCE: &str = "source";
    /// How the classes were found, in words.
    pub(crate) const CLASS_RULE: &str = "class_rule";
    /// A class's index, 0 = fastest.
    pub(crate) const CLASS: &str = "class";
    /// A class's memory nodes (per CPU node) or cells (system-wide).
    pub(crate) const MEMBERS: &str = "members";
    /// The access mix of a D record.
    pub(crate) const THETA: &str = "theta";
    pub(crate) const PID: &str = "pid";
    /// `node:weight,...` of a validation.
    pub(crate) const WEIGHTS: &str = "weights";
    pub(crate) const WEIGHT: &str = "weight";
}

/// Metrics of the model alone.
pub(crate) mod metric {
    pub(crate) const ALPHA: &str = "alpha";
    /// A class's best saturated bandwidth (Table 3.4's multi-threaded row).
    pub(crate) const SATURATED_MB_S: &str = "saturated_mb_s";
    pub(crate) const D: &str = "d";
    pub(crate) const LOSS: &str = "loss";
    pub(crate) const PREDICTED_LINEAR_MB_S: &str = "predicted_linear_mb_s";
    pub(crate) const PREDICTED_HARMONIC_MB_S: &str = "predicted_harmonic_mb_s";
    pub(crate) const ERROR_LINEAR_PCT: &str = "error_linear_pct";
    pub(crate) const ERROR_HARMONIC_PCT: &str = "error_harmonic_pct";
}
