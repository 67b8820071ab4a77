//! The caches each CPU lists, read once however many CPUs share them.

use super::*;

pub(super) fn read_caches(
    src: &SysfsRoot,
    online: &IdSet,
    notes: &mut Vec<String>,
) -> Result<Vec<Cache>, TopologyError> {
    let mut caches: Vec<Cache> = Vec::new();
    // Each CPU lists its shared caches again; a set finds repeats in
    // constant time where a scan of `caches` would be quadratic in CPUs.
    let mut seen = std::collections::HashSet::new();
    for cpu in online.iter() {
        let dir = format!("{CPU_DIR}/cpu{cpu}/cache");
        for index in numbered(&src.list(&dir), "index") {
            let d = format!("{dir}/index{index}");
            let shared = list(src, &format!("{d}/shared_cpu_list"), Ids::Cpus)?;
            // A cache shared with an online CPU of a lower id was read from
            // that CPU already: on a 256-CPU machine this skips most reads.
            if let Some(first) = shared.as_ref().and_then(IdSet::first)
                && first < cpu
                && online.contains(first)
            {
                continue;
            }
            // The kernel hides a cache's level, size and line size where
            // they are 0, so a 0 is a damaged capture, not a real cache.
            let level_file = format!("{d}/level");
            let level = match number::<u32>(src, &level_file)? {
                None => continue,
                Some(l @ 1..=MAX_CACHE_LEVEL) => l,
                Some(l) => {
                    notes.push(format!(
                        "{level_file}: level {l} is not one a cache has (1 to {MAX_CACHE_LEVEL}); that cache is not shown"
                    ));
                    continue;
                }
            };
            let kind = src
                .read_trimmed(&format!("{d}/type"))?
                .unwrap_or_else(|| "Unified".into());
            let size_file = format!("{d}/size");
            let size_bytes = match src.read_trimmed(&size_file)? {
                Some(text) => parse_size(&text)
                    .filter(|&b| b <= MAX_BYTES)
                    .ok_or_else(|| malformed(&size_file, format!("'{text}' is not a size")))?,
                None => continue,
            };
            if size_bytes == 0 {
                notes.push(format!("{size_file}: a size of 0; that cache is not shown"));
                continue;
            }
            let line_file = format!("{d}/coherency_line_size");
            let line_bytes = match number::<u32>(src, &line_file)? {
                Some(0) => {
                    notes.push(format!("{line_file}: a line of 0 B; shown as not reported"));
                    None
                }
                other => other,
            };
            let cpus = shared.unwrap_or_else(|| IdSet::from_ids([cpu]));
            let cache = Cache {
                level,
                kind,
                size_bytes,
                line_bytes,
                cpus,
            };
            let key = (
                cache.level,
                cache.kind.clone(),
                cache.size_bytes,
                cache.line_bytes,
                cache.cpus.clone(),
            );
            if seen.insert(key) {
                caches.push(cache);
            }
        }
    }
    caches.sort_by(|a, b| {
        (a.level, &a.kind, a.cpus.first()).cmp(&(b.level, &b.kind, b.cpus.first()))
    });
    Ok(caches)
}

/// Sizes as sysfs writes them: `48K`, `2048K`, `32M`, or plain bytes.
pub(super) fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, mult) = match t.chars().last()? {
        'K' | 'k' => (&t[..t.len() - 1], 1u64 << 10),
        'M' | 'm' => (&t[..t.len() - 1], 1 << 20),
        'G' | 'g' => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(mult)
}
