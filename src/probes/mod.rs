//! Probes: each measures one thing and returns rows or records; none
//! prints.

pub mod autonuma;
pub mod matrix;
pub mod measure;
pub mod mem;
pub mod model;
pub mod pcie;
pub mod sched;
pub mod seats;
pub mod sweep;
pub mod team;

/// Every probe's view, in the order the report shows them. Adding a probe
/// is adding its module and one line here.
pub static VIEWS: &[&dyn crate::view::View] = &[
    &matrix::MatrixView, // node x node bandwidth and latency
    &sweep::view::SweepView,
    &sched::view::SchedView,
    &autonuma::view::VIEW,
    &mem::view::VIEW,
    &model::ModelView, // classes, alpha, D
    &pcie::VIEW,
];
