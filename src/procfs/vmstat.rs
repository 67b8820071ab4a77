//! `/proc/vmstat`: the kernel's event counters, the few a caller names.

use std::collections::BTreeMap;

/// Counter values by name; a counter this kernel lacks is absent.
pub(crate) type Counters = BTreeMap<String, u64>;

/// The counters of `keys` found in `text` (vmstat's `name value` lines).
pub(crate) fn parse(text: &str, keys: &[&str]) -> Counters {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            keys.contains(&k)
                .then(|| v.trim().parse().ok().map(|v| (k.to_string(), v)))
                .flatten()
        })
        .collect()
}

/// The counters of `keys` now; none where /proc/vmstat cannot be read.
pub(crate) fn read(keys: &[&str]) -> Counters {
    std::fs::read_to_string("/proc/vmstat")
        .map(|t| parse(&t, keys))
        .unwrap_or_default()
}

/// `after - before` for the counters present in both (counters never go
/// down, a wrap or reset reads as 0).
pub(crate) fn delta(before: &Counters, after: &Counters) -> Counters {
    after
        .iter()
        .filter_map(|(k, a)| before.get(k).map(|b| (k.clone(), a.saturating_sub(*b))))
        .collect()
}
