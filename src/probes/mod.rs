//! Probes: each measures one thing (`mod.rs`), turns what it measured
//! into records (`records.rs`), draws its records (`view.rs`) and says
//! what it adds to the jobs over several probes (`part.rs`: its part in
//! `run`, its summary line, its repeat-check and fleet figures); none
//! prints. `measure`, `seats`, `team`, `part` and `workload` are what
//! several probes share: timed kernels, CPU seats, the pinned team of
//! threads, the sizing of a part's command line, perf's process workload
//! engine.

pub mod autonuma;
pub mod c2c;
pub mod latency;
pub mod loaded;
pub mod matrix;
pub mod measure;
pub mod mem;
pub mod mlp;
pub mod model;
pub mod part;
pub mod pcie;
pub mod peak;
pub mod sched;
pub mod seats;
pub mod sizing;
pub mod sweep;
pub mod team;
pub mod tier;
pub mod workload;

/// Every probe, in the order the report shows them: its view, and what it
/// adds to `run`, its summary, the repeat check and the fleet report
/// (`crate::view::Probe`). Adding a probe is adding its folder and one
/// line here.
pub static REGISTRY: &[&dyn crate::view::Probe] = &[
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
