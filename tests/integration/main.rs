//! Integration tests: run the numabench binary as a user would.

mod architecture;
mod autonuma;
mod bad_input;
mod big_machines;
mod c2c;
mod cgroup;
mod chase;
mod cli;
mod compare;
mod docs;
mod fixtures;
mod fleet;
mod formats;
mod gather;
mod generate;
mod golden;
mod loaded;
mod matrix;
mod mem;
mod mem_compare;
mod model;
mod pcie;
mod peak;
mod plan;
mod report;
mod run_folder;
mod sched;
mod sweep;
// Synthetic sysfs trees of big machines, shared with the unit tests.
#[path = "../../src/topology/synthetic.rs"]
mod synthetic;
mod tier;
mod trust;
mod util;
pub(crate) mod vm;
