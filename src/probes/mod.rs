//! Probes: each measures one thing (`mod.rs`), turns what it measured
//! into records (`records.rs`), draws its records (`view.rs`) and says
//! what it adds to the jobs over several probes (`part.rs`: its part in
//! `run`, its summary line, its repeat-check and fleet figures); none
//! prints. `measure`, `seats`, `team`, `part` and `workload` are what
//! several probes share: timed kernels, CPU seats, the pinned team of
//! threads, the sizing of a part's command line, perf's process workload
//! engine.

pub(crate) mod cost;
pub(crate) mod measure;
pub(crate) mod node_chase;
pub(crate) mod pairs;
pub(crate) mod part;
pub(crate) mod seats;
pub(crate) mod sizing;
pub(crate) mod team;
pub(crate) mod workload;

/// Declares each probe's module and lists its registry entry, so that a
/// probe is one line of [`REGISTRY`]: `folder::View`.
macro_rules! registry {
    ($($folder:ident :: $entry:ident),* $(,)?) => {
        $(pub(crate) mod $folder;)*

        /// Every probe, in the order the report shows them: its view, and
        /// what it adds to `run`, its summary, the repeat check and the
        /// fleet report (`crate::view::Probe`). Adding a probe is adding
        /// its folder, one line here and its name in `results::names`.
        pub(crate) static REGISTRY: &[&dyn crate::view::Probe] = &[$(&$folder::$entry),*];
    };
}

registry! {
    matrix::MatrixView,
    sweep::SweepView,
    latency::LatencyView,
    mlp::MlpView,
    loaded::LoadedView,
    peak::PeakView,
    c2c::C2cView,
    sched::SchedView,
    autonuma::AutonumaView,
    tier::TierView,
    mem::MemView,
    model::ModelView,
    pcie::PcieView,
}
