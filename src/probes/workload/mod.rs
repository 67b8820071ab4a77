//! The process workload engine of perf's `perf bench numa mem` (2012):
//! perf's options resolved for this machine (`params`, `lists`), the
//! processes and threads of a run (`tasks`, `parent`, `child`, `worker`)
//! on global, per-process and per-thread memory (`layout`) with perf's
//! access patterns (`sweep`, `lfsr`), what a run reports as it goes and
//! hands back (`outcome`), NUMA convergence (`convergence`), where the
//! memory went (`areas`), the kernel's balancing counters (`vmstat`) and
//! the parent's looks at the running children (`watch`, `memwatch`).
//!
//! Not a probe: `mem` and `autonuma` run it and make their records and
//! views of what it measured; it knows neither of them.

pub mod areas;
mod child;
pub mod convergence;
pub mod layout;
pub mod lfsr;
pub mod lists;
pub mod memwatch;
pub mod outcome;
pub mod params;
mod parent;
mod sweep;
pub mod tasks;
pub mod vmstat;
pub mod watch;
pub mod worker;
