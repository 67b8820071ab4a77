//! Where threads run and where memory lives: CPU and node sets, thread
//! pinning, memory policies, page-location queries, `numa_maps` and the
//! mapping list (`maps`).

pub mod affinity;
pub mod mempolicy;
pub mod pages;
pub mod sys;

pub use affinity::{current_affinity, current_cpu, pin_and_check, pin_current_thread};
pub use mempolicy::{MbindFlags, MemPolicy, bind_range, get_thread_policy, set_thread_policy};
pub use sys::{PlacementError, possible_nodes};
