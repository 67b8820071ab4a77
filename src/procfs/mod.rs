//! Parsers of `/proc` files: a process's mappings (`maps`, `smaps`,
//! `numa_maps`) and its tasks' `stat` lines. Plain text in, plain data out:
//! below placement, memory and the probes that read them.

pub mod lines;
pub mod maps;
pub mod numa_maps;
pub mod smaps;
pub mod stat;
