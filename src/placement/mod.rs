//! Where threads run and where memory lives: CPU and node sets, thread
//! pinning, memory policies, page-location queries, `numa_maps` and the
//! mapping list (`maps`).

pub(crate) mod affinity;
pub(crate) mod mempolicy;
pub(crate) mod pages;
pub(crate) mod sys;

pub(crate) use affinity::{current_affinity, current_cpu, pin_and_check, pin_current_thread};
pub(crate) use mempolicy::{
    MbindFlags, MemPolicy, bind_range, get_thread_policy, set_thread_policy,
};
pub(crate) use sys::{PlacementError, possible_nodes};
