//! Parsers of `/proc` files: a process's mappings (`maps`, `smaps`,
//! `numa_maps`), its tasks' `stat` lines and the kernel's `vmstat` counters. Plain text in, plain data out:
//! below placement, memory and the probes that read them.

pub(crate) mod lines;
pub(crate) mod maps;
pub(crate) mod numa_maps;
pub(crate) mod smaps;
pub(crate) mod stat;
pub(crate) mod vmstat;
