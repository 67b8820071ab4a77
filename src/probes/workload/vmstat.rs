//! The kernel's NUMA-balancing counters from `/proc/vmstat`, to report how
//! much scanning, hinting-fault and migration work a run caused.

use crate::results::names::{mem::metric as mem, metric};

/// The counters read, in the order reported.
pub(crate) const KEYS: [&str; 5] = [
    mem::NUMA_PTE_UPDATES,
    mem::NUMA_HUGE_PTE_UPDATES,
    metric::NUMA_HINT_FAULTS,
    mem::NUMA_HINT_FAULTS_LOCAL,
    metric::NUMA_PAGES_MIGRATED,
];

pub(crate) use crate::procfs::vmstat::{Counters, delta};

#[cfg(test)]
fn parse(text: &str) -> Counters {
    crate::procfs::vmstat::parse(text, &KEYS)
}

pub(crate) fn read() -> Counters {
    crate::procfs::vmstat::read(&KEYS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_subtracts() {
        let a = parse(
            "nr_free_pages 5\nnuma_pte_updates 10\nnuma_hint_faults 3\nnuma_pages_migrated 1\n",
        );
        let b = parse(
            "numa_pte_updates 25\nnuma_hint_faults 3\nnuma_pages_migrated 0\nnuma_hint_faults_local 9\n",
        );
        assert_eq!(a.len(), 3);
        let d = delta(&a, &b);
        assert_eq!(d["numa_pte_updates"], 15);
        assert_eq!(d["numa_hint_faults"], 0);
        assert_eq!(d["numa_pages_migrated"], 0);
        assert!(!d.contains_key("numa_hint_faults_local"));
    }
}
