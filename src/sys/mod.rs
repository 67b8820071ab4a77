//! System calls for processes and memory that the probes share: fork, wait,
//! signals to children, futexes, CPU times, anonymous mappings and regions
//! shared across processes.
//!
//! Every `unsafe` block here sits in a small function whose safe signature
//! carries what the kernel or libc needs, with a SAFETY comment saying why
//! the call is sound. The NUMA calls (mbind, move_pages, affinity) live
//! with placement, which is their only user.

pub mod alloc;
pub mod futex;
pub mod mmap;
pub mod note;
pub mod process;
pub mod region;
pub mod threads;

pub use futex::{futex_wait, futex_wake_all};
pub use process::*;
pub use region::Region;
