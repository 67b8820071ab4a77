//! System calls for processes and memory that the probes share: fork, wait,
//! signals to children, futexes, CPU times, anonymous mappings and regions
//! shared across processes.
//!
//! Every `unsafe` block here sits in a small function whose safe signature
//! carries what the kernel or libc needs, with a SAFETY comment saying why
//! the call is sound. The NUMA calls (mbind, move_pages, affinity) live
//! with placement, which is their only user.

pub(crate) mod alloc;
pub(crate) mod futex;
pub(crate) mod mmap;
pub(crate) mod note;
pub(crate) mod process;
pub(crate) mod region;
pub(crate) mod threads;

pub(crate) use futex::{futex_wait, futex_wake_all};
pub(crate) use process::*;
pub(crate) use region::Region;
