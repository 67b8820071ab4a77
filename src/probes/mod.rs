//! Probes: each measures one thing (`mod.rs`), turns what it measured
//! into records (`records.rs`) and draws its records (`view.rs`); none
//! prints. `measure`, `seats`, `team` and `workload` are what several
//! probes share: timed kernels, CPU seats, the pinned team of threads,
//! perf's process workload engine.

pub mod autonuma;
pub mod c2c;
pub mod latency;
pub mod loaded;
pub mod matrix;
pub mod measure;
pub mod mem;
pub mod mlp;
pub mod model;
pub mod pcie;
pub mod peak;
pub mod sched;
pub mod seats;
pub mod sizing;
pub mod sweep;
pub mod team;
pub mod tier;
pub mod workload;

/// Every probe's view, in the order the report shows them. Adding a probe
/// is adding its folder and one line here.
pub static VIEWS: &[&dyn crate::view::View] = &[
    &matrix::MatrixView,
    &sweep::SweepView,
    &latency::LatencyView,
    &mlp::MlpView,
    &loaded::LoadedView,
    &peak::PeakView,
    &c2c::C2cView,
    &sched::SchedView,
    &autonuma::AutonumaView,
    &tier::TierView,
    &mem::MemView,
    &model::ModelView,
    &pcie::PcieView,
];
