//! Parsers of `/proc` files: a process's mappings (`maps`, `smaps`,
//! `numa_maps`), its tasks' `stat` lines and the kernel's `vmstat` counters. Plain text in, plain data out:
//! below placement, memory and the probes that read them.

pub mod lines;
pub mod maps;
pub mod numa_maps;
pub mod smaps;
pub mod stat;
pub mod vmstat;
