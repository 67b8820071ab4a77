//! Probes: each measures one thing and returns rows or records; none
//! prints.

pub mod seats;
pub mod stats;
pub mod sweep;
pub mod team;
