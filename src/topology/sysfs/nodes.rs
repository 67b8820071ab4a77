//! The NUMA nodes: which there are, their CPUs, memory and distances,
//! and the firmware bugs that list one CPU under several of them.

use super::*;

pub(super) fn read_nodes(
    src: &SysfsRoot,
    cpus_online: &IdSet,
    notes: &mut Vec<String>,
) -> Result<(Vec<Node>, bool), TopologyError> {
    let names = src.list(NODE_DIR);
    let online = list(src, &format!("{NODE_DIR}/online"), Ids::Nodes)?;
    for name in absurd_node_dirs(&names) {
        let dir = format!("{NODE_DIR}/{name}");
        let why = format!(
            "a node id beyond {}, which no kernel writes (Linux allows at most 1024 nodes)",
            MAX_NODES - 1
        );
        // With `node/online` saying which nodes there are, the stray
        // directory is not one of them; without it, no list can be trusted.
        if online.is_none() {
            return Err(malformed(&dir, why));
        }
        notes.push(format!("{}: {why}; the directory is ignored", shown(&dir)));
    }
    let ids = match online {
        Some(set) => set,
        None => Ids::Nodes.entries(NODE_DIR, numbered(&names, "node"))?,
    };
    if ids.is_empty() {
        // A kernel built without NUMA: one node holding everything.
        let meminfo = Meminfo::read(src, "proc/meminfo")?;
        return Ok((
            vec![Node {
                id: 0,
                cpus: cpus_online.clone(),
                has_cpu: true,
                has_memory: true,
                mem_total_bytes: meminfo.total_free()?.map_or(0, |m| m.0),
                mem_free_bytes: meminfo.total_free()?.map_or(Some(0), |m| m.1),
                distances: vec![10],
                hugepages: Vec::new(),
                hmat: None,
                tier: None,
            }],
            false,
        ));
    }
    let has_cpu = list(src, &format!("{NODE_DIR}/has_cpu"), Ids::Nodes)?;
    let has_memory = list(src, &format!("{NODE_DIR}/has_memory"), Ids::Nodes)?;
    let mut nodes = Vec::new();
    let mut free_unknown = Vec::new();
    for id in ids.iter() {
        let dir = format!("{NODE_DIR}/node{id}");
        if !src.exists(&dir) {
            notes.push(format!(
                "node {id} is online but {} is missing: its CPUs, memory and distances are unknown",
                shown(&dir)
            ));
        }
        let cpus = list_or_mask(src, &format!("{dir}/cpulist"), &format!("{dir}/cpumap"))?
            .unwrap_or_default()
            .intersection(cpus_online);
        let meminfo = Meminfo::read(src, &format!("{dir}/meminfo"))?;
        let (mem_total_bytes, mem_free_bytes) = meminfo.total_free()?.unwrap_or((0, Some(0)));
        if mem_free_bytes.is_none() {
            free_unknown.push(id);
        }
        let distance_file = format!("{dir}/distance");
        let distances = match src.read(&distance_file)? {
            Some(text) => value_of(&text)
                .split_whitespace()
                .take(MAX_NODES + 1)
                .map(|d| {
                    d.parse::<u32>()
                        .map_err(|_| malformed(&distance_file, format!("'{d}' is not a distance")))
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        let distances = plausible_distances(&distance_file, distances, notes);
        let distances = online_distances(src, &distance_file, distances, &ids, notes)?;
        nodes.push(Node {
            id,
            // The node's own CPU list wins over an empty or stale
            // `has_cpu` (a 3.10 kernel writes it empty).
            has_cpu: !cpus.is_empty() || has_cpu.as_ref().is_some_and(|s| s.contains(id)),
            has_memory: has_memory
                .as_ref()
                .map_or(mem_total_bytes > 0, |s| s.contains(id)),
            cpus,
            mem_total_bytes,
            mem_free_bytes,
            distances,
            hugepages: read_hugepages(src, &format!("{dir}/hugepages"))?,
            hmat: read_hmat(src, &dir, notes)?,
            tier: None,
        });
    }
    if !free_unknown.is_empty() {
        notes.push(format!(
            "the meminfo of node(s) {} has no MemFree line: their free memory is unknown, and runs are sized and admitted against their total memory (or the system's free memory, where less)",
            IdSet::from_ids(free_unknown)
        ));
    }
    claim_cpus_once(&mut nodes, notes);
    Ok((nodes, true))
}

/// `nodeN` directories whose N is no node id: beyond [`MAX_NODES`], or too
/// long to be a number at all.
fn absurd_node_dirs(names: &[String]) -> impl Iterator<Item = &String> {
    names.iter().filter(|name| {
        name.strip_prefix("node").is_some_and(|digits| {
            !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && digits.parse::<usize>().map_or(true, |id| id >= MAX_NODES)
        })
    })
}

/// A distance row whose figures a kernel could have written: Linux keeps
/// each distance in a byte and refuses firmware tables with one under 10
/// (the local distance), so a 0 or a 4294967295 is a damaged capture, and
/// the row is left out with a note rather than ranked.
fn plausible_distances(file: &str, row: Vec<u32>, notes: &mut Vec<String>) -> Vec<u32> {
    match row.iter().find(|d| !(10..=255).contains(*d)) {
        None => row,
        Some(d) => {
            notes.push(format!(
                "{file}: distance {d} is not one Linux writes (10 to 255); the row is left out"
            ));
            Vec::new()
        }
    }
}

/// A node's distance row as long as the online nodes. A row longer than
/// that (a node was offlined after boot) is cut to the online nodes'
/// columns when it has one per possible node, else left out with a note:
/// a wrong column would be worse than none.
fn online_distances(
    src: &SysfsRoot,
    file: &str,
    row: Vec<u32>,
    online: &IdSet,
    notes: &mut Vec<String>,
) -> Result<Vec<u32>, TopologyError> {
    if row.is_empty() || row.len() == online.len() {
        return Ok(row);
    }
    let possible = list(src, &format!("{NODE_DIR}/possible"), Ids::Nodes)?;
    if let Some(possible) = possible
        && possible.len() == row.len()
        && online.iter().all(|n| possible.contains(n))
    {
        let columns: Vec<usize> = possible.iter().collect();
        let cut: Vec<u32> = columns
            .iter()
            .zip(&row)
            .filter(|(n, _)| online.contains(**n))
            .map(|(_, d)| *d)
            .collect();
        let note = format!(
            "distance rows list {} possible nodes, {} are online: the online nodes' columns are used",
            row.len(),
            online.len()
        );
        if !notes.contains(&note) {
            notes.push(note);
        }
        return Ok(cut);
    }
    notes.push(format!(
        "{file}: {} distances for {} online nodes; the row is left out",
        row.len(),
        online.len()
    ));
    Ok(Vec::new())
}

/// A CPU is on one node (the kernel keeps one node per CPU), but firmware
/// may list the same CPUs under several nodes. The lowest such node keeps
/// them and the later ones become memory without CPUs: their memory is
/// still there to bind, but measuring "node 3's CPUs" would measure node
/// 0's again, and per-node CPU figures would repeat one node's as though
/// the nodes were distinct.
fn claim_cpus_once(nodes: &mut [Node], notes: &mut Vec<String>) {
    let mut claimed = IdSet::new();
    // (copy, owner) for nodes listing exactly an earlier node's CPUs.
    let mut copies: Vec<(usize, usize)> = Vec::new();
    for i in 0..nodes.len() {
        let taken = nodes[i].cpus.intersection(&claimed);
        if !taken.is_empty() {
            let owners: Vec<usize> = nodes[..i]
                .iter()
                .filter(|o| !o.cpus.intersection(&taken).is_empty())
                .map(|o| o.id)
                .collect();
            match owners.as_slice() {
                [owner] if nodes[i].cpus == taken && node_cpus(nodes, *owner) == taken => {
                    copies.push((nodes[i].id, *owner));
                }
                _ => notes.push(format!(
                    "firmware bug: node {} lists CPUs {taken} that node(s) {} list too; a CPU is on one node, so they are taken as the lower node's",
                    nodes[i].id,
                    IdSet::from_ids(owners)
                )),
            }
            let n = &mut nodes[i];
            n.cpus = n.cpus.difference(&taken);
            if n.cpus.is_empty() {
                n.has_cpu = false;
            }
        }
        claimed = claimed.union(&nodes[i].cpus);
    }
    let mut owners: Vec<usize> = copies.iter().map(|c| c.1).collect();
    owners.sort_unstable();
    owners.dedup();
    for owner in owners {
        let of: Vec<usize> = copies
            .iter()
            .filter(|c| c.1 == owner)
            .map(|c| c.0)
            .collect();
        let all = IdSet::from_ids(of.iter().copied().chain([owner]));
        notes.push(format!(
            "firmware bug: nodes {all} list the same CPUs ({}); they are taken as node {owner}'s, and nodes {} as memory without CPUs: measuring from their CPUs would measure node {owner}'s again",
            node_cpus(nodes, owner),
            IdSet::from_ids(of)
        ));
    }
}

fn node_cpus(nodes: &[Node], id: usize) -> IdSet {
    nodes
        .iter()
        .find(|n| n.id == id)
        .map(|n| n.cpus.clone())
        .unwrap_or_default()
}
