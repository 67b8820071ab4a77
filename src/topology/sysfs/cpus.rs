//! The CPUs: which are online, and each one's package, die, core and SMT
//! siblings, where the kernel's ids and lists disagree or are missing.

use super::*;

/// Without a global `cpu/online` (old kernels), each `cpuN/online` says;
/// a CPU without one (cpu0 often cannot go offline) is online, and so is
/// one whose file is empty (a 128-CPU ia64 machine writes that; hwloc
/// reads it as online too, being no "0").
pub(super) fn online_one_by_one(src: &SysfsRoot) -> Result<IdSet, TopologyError> {
    let all = Ids::Cpus.entries(CPU_DIR, numbered(&src.list(CPU_DIR), "cpu"))?;
    let mut online = Vec::new();
    for id in all.iter() {
        let file = format!("{CPU_DIR}/cpu{id}/online");
        match src.read_trimmed(&file)?.as_deref() {
            None | Some("1" | "") => online.push(id),
            Some("0") => {}
            Some(other) => {
                return Err(malformed(&file, format!("'{other}' is neither 0 nor 1")));
            }
        }
    }
    Ok(IdSet::from_ids(online))
}

pub(super) fn read_cpus(
    src: &SysfsRoot,
    online: &IdSet,
    nodes: &[Node],
    notes: &mut Vec<String>,
) -> Result<Vec<Cpu>, TopologyError> {
    let mut cpus = Vec::new();
    let mut package_masks = Vec::new();
    let mut node_of = std::collections::HashMap::new();
    for n in nodes {
        for cpu in n.cpus.iter() {
            node_of.entry(cpu).or_insert(n.id);
        }
    }
    for id in online.iter() {
        let dir = format!("{CPU_DIR}/cpu{id}/topology");
        // Some kernels report an unknown die or cluster as -1 or 65535;
        // package and core ids are any 32-bit number (ia64 numbers its
        // packages from 65535 up), -1 being "unknown".
        let small_id = |v: Option<i64>| v.filter(|&v| (0..65535).contains(&v)).map(|v| v as u32);
        let any_id = |v: Option<i64>| v.and_then(|v| u32::try_from(v).ok());
        cpus.push(Cpu {
            id,
            node: node_of.get(&id).copied(),
            package: any_id(number(src, &format!("{dir}/physical_package_id"))?),
            die: small_id(number(src, &format!("{dir}/die_id"))?),
            core: any_id(number(src, &format!("{dir}/core_id"))?),
            // The kernel drops an offlined sibling from the list; a list
            // naming CPUs that are not online (a damaged capture says
            // 0-8191) would make one core of thousands of threads.
            // `core_cpus` is the name since Linux 5.4, and the only one
            // some captures hold.
            smt_siblings: cpus_of(src, &dir, &["thread_siblings", "core_cpus"])?
                .map(|s| {
                    let mut s = s.intersection(online);
                    s.insert(id);
                    s
                })
                .unwrap_or_default(),
        });
        let package = cpus_of(src, &dir, &["package_cpus", "core_siblings"])?;
        package_masks.push(package.map(|s| s.intersection(online)));
    }
    siblings_from_core_ids(&mut cpus);
    packages_from_masks(&mut cpus, &package_masks, notes);
    Ok(cpus)
}

/// Packages from the CPUs each CPU's package holds, where the package ids
/// cannot say: POWER and s390 write -1, and some ia64 kernels give two
/// sockets one id. When every CPU has a non-empty mask and the ids are
/// missing or do not match the masks, each distinct mask is a package,
/// numbered in the order of its first CPU (as hwloc groups them).
fn packages_from_masks(cpus: &mut [Cpu], masks: &[Option<IdSet>], notes: &mut Vec<String>) {
    let Some(masks) = masks
        .iter()
        .map(|m| m.as_ref().filter(|m| !m.is_empty()))
        .collect::<Option<Vec<&IdSet>>>()
    else {
        return;
    };
    if masks.is_empty() {
        return;
    }
    let mut distinct: Vec<&IdSet> = masks.clone();
    distinct.sort_by_key(|m| m.first());
    distinct.dedup();
    let mut id_of_mask = std::collections::HashMap::new();
    let mut conflict = false;
    for (c, m) in cpus.iter().zip(&masks) {
        match (c.package, id_of_mask.insert(m.to_list(), c.package)) {
            (None, _) => conflict = true,
            (id, Some(before)) if before != id => conflict = true,
            _ => {}
        }
    }
    let ids: std::collections::HashSet<Option<u32>> = cpus.iter().map(|c| c.package).collect();
    if !conflict && ids.len() == distinct.len() {
        return;
    }
    let known = cpus.iter().any(|c| c.package.is_some());
    for (c, m) in cpus.iter_mut().zip(&masks) {
        c.package = distinct.iter().position(|d| d == m).map(|i| i as u32);
    }
    if known {
        notes.push(format!(
            "physical_package_id does not match the CPUs each package lists (core_siblings_list); the {} packages are taken from those lists",
            distinct.len()
        ));
    }
}

/// On AMD families without SMT, thread siblings are the cores of one
/// compute unit: each CPU is a core of its own, so that scaling adds them
/// as cores and cache-to-cache figures do not call them SMT siblings.
pub(super) fn split_compute_units(cpus: &mut [Cpu], notes: &mut Vec<String>) {
    let mut paired = 0;
    for c in cpus.iter_mut().filter(|c| c.smt_siblings.len() > 1) {
        c.smt_siblings = IdSet::from_ids([c.id]);
        paired += 1;
    }
    if paired > 0 {
        notes.push(format!(
            "AMD family 15h/16h has no SMT: the {paired} CPUs the kernel lists as thread siblings are the cores of compute units (two cores sharing a front end, FPU and L2), counted here as cores"
        ));
    }
}

/// Where a kernel writes neither sibling file (RHEL5-era trees), the CPUs
/// sharing a package and core id are one core's threads; a CPU without
/// both ids is a core of its own.
fn siblings_from_core_ids(cpus: &mut [Cpu]) {
    let mut by_core: std::collections::HashMap<(u32, u32), Vec<usize>> =
        std::collections::HashMap::new();
    for c in cpus.iter() {
        if let (Some(p), Some(k)) = (c.package, c.core) {
            by_core.entry((p, k)).or_default().push(c.id);
        }
    }
    for c in cpus.iter_mut().filter(|c| c.smt_siblings.is_empty()) {
        c.smt_siblings = match (c.package, c.core) {
            (Some(p), Some(k)) => IdSet::from_ids(by_core[&(p, k)].iter().copied()),
            _ => IdSet::from_ids([c.id]),
        };
    }
}
