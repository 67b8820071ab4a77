//! Integration tests: run the numabench binary as a user would.

mod bad_input;
mod fixtures;
mod gather;
mod matrix;
mod mem;
mod model;
mod pcie;
mod report;
mod sweep;
mod util;
mod vm;
