//! `numabench place`: put a buffer and a thread where asked and report where
//! they really are. It answers "does binding work here?" before any
//! benchmark relies on it, and is what the multi-node VM tests drive.

use super::select;
use crate::memory::{Buffer, BufferOptions, PageKind, Placement};
use crate::placement::{MemPolicy, pin_and_check};
use crate::topology::{SysfsRoot, read_topology};
use crate::view::table::bytes;
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Allocate a buffer under a memory policy from a pinned thread and report
/// where its pages and the thread really are (pages per node, huge-page
/// coverage, CPU seen).
#[derive(clap::Args, Debug)]
pub struct PlaceArgs {
    /// Memory policy: default, local, preferred:N, preferred-many:LIST,
    /// bind:LIST, interleave:LIST or weighted-interleave:LIST
    /// (LIST like 0-1,3).
    #[arg(long, short = 'm', default_value = "default", value_name = "POLICY")]
    pub policy: String,
    /// Buffer size in bytes, or with a unit: 64K, 256M, 1G.
    #[arg(long, short = 's', default_value = "64M", value_name = "SIZE")]
    pub size: String,
    /// Run the allocating thread on this CPU.
    #[arg(long, short = 'c', value_name = "CPU", conflicts_with = "cpu_node")]
    pub cpu: Option<usize>,
    /// Run the allocating thread on the first usable CPU of this node.
    #[arg(long, short = 'N', value_name = "NODE")]
    pub cpu_node: Option<usize>,
    /// Pages: base, thp, hugetlb (2 MiB), hugetlb:1G, or auto (hugetlb, then
    /// THP, then base pages). A hugetlb size the kernel lacks is refused;
    /// an empty pool falls back to THP, as the output says.
    #[arg(long, default_value = "thp", value_name = "KIND")]
    pub pages: String,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Report {
    policy_requested: String,
    policy_applied: String,
    size_bytes: usize,
    pages_requested: String,
    pages_used: String,
    page_size: usize,
    fallback: Option<String>,
    cpu_requested: Option<usize>,
    cpu_seen: usize,
    cpu_seen_node: Option<usize>,
    placement: Placement,
}

pub fn run(args: PlaceArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    let policy: MemPolicy = args
        .policy
        .parse()
        .map_err(|e| crate::error::usage(format!("--policy {e}")))?;
    select::policy_nodes(&topo, &policy, "--policy")?;
    let size = super::units::parse_size(&args.size)
        .map_err(|e| crate::error::usage(format!("--size {e}")))?;
    let pages: PageKind = args
        .pages
        .parse()
        .map_err(|e| crate::error::usage(format!("--pages {e}")))?;
    check_huge_size(pages, &args.pages, Path::new(HUGEPAGES))?;
    // Only `bind` keeps the pages off the other nodes; every other policy
    // falls back to them when its nodes are full.
    let bound: Option<Vec<usize>> = match &policy {
        MemPolicy::Bind(nodes) => Some(nodes.iter().collect()),
        _ => None,
    };
    crate::memory::admission::admit(
        &topo,
        &crate::memory::admission::Footprint {
            bytes: size as u64,
            nodes: bound.as_deref(),
            what: format!("--size {}", args.size),
            remedy: "give a smaller --size",
        },
    )?;
    let cpu = match (args.cpu, args.cpu_node) {
        (Some(c), _) => {
            select::cpu(&topo, c, "--cpu")?;
            Some(c)
        }
        (None, Some(n)) => select::cpu_node(&topo, n, "--cpu-node")?.first(),
        (None, None) => None,
    };

    if let Some(c) = cpu {
        pin_and_check(c).with_context(|| format!("cannot run on CPU {c}"))?;
    }
    let mut opts = BufferOptions::new(size).pages(pages);
    if policy != MemPolicy::Default {
        opts = opts.policy(policy.clone());
    }
    let buffer = Buffer::new(&opts)
        .with_context(|| format!("cannot allocate {} under {policy}", bytes(size as u64)))?;
    let placement = buffer
        .verify()
        .context("cannot query where the pages are")?;
    let cpu_seen = crate::placement::current_cpu();
    let report = Report {
        policy_requested: policy.to_string(),
        policy_applied: buffer
            .policy()
            .map_or_else(|| "default".into(), |p| p.to_string()),
        size_bytes: size,
        pages_requested: pages.to_string(),
        pages_used: buffer.page_kind().to_string(),
        page_size: buffer.page_size(),
        fallback: buffer.fallback_reason().map(str::to_string),
        cpu_requested: cpu,
        cpu_seen,
        cpu_seen_node: topo.cpu(cpu_seen).and_then(|c| c.node),
        placement,
    };
    if args.json {
        crate::console::out(&format!("{}\n", serde_json::to_string_pretty(&report)?));
    } else {
        crate::console::out(&render(&report));
    }
    Ok(())
}

/// Where the kernel lists its huge page sizes, one directory each.
const HUGEPAGES: &str = "/sys/kernel/mm/hugepages";

/// A hugetlb size the kernel does not have could never be used: the run
/// would silently measure THP instead. An empty pool of a size it has is
/// different: that is what `place` reports (the fallback line), since pools
/// change at run time.
fn check_huge_size(pages: PageKind, text: &str, dir: &Path) -> Result<()> {
    let PageKind::HugeTlb(size) = pages else {
        return Ok(());
    };
    let mut sizes: Vec<u64> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| {
                let name = e.ok()?.file_name();
                let kb = name
                    .to_str()?
                    .strip_prefix("hugepages-")?
                    .strip_suffix("kB")?;
                kb.parse::<u64>().ok()?.checked_mul(1024)
            })
            .collect()
        })
        .unwrap_or_default();
    if sizes.contains(&(size as u64)) {
        return Ok(());
    }
    sizes.sort_unstable();
    let have = if sizes.is_empty() {
        "none: this kernel has no hugetlb pages".to_string()
    } else {
        sizes
            .iter()
            .map(|&b| format!("hugetlb:{}", super::units::short_size(b)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(crate::error::usage(format!(
        "--pages {text}: this kernel has no {} huge pages (sizes in {}: {have}); use one of those, thp or auto",
        bytes(size as u64),
        dir.display()
    )))
}

fn render(r: &Report) -> String {
    let node = |n: Option<usize>| n.map_or("?".into(), |n| n.to_string());
    let mut out = format!(
        "policy     {} (applied: {})\nbuffer     {}, {} pages (page size {}){}\n",
        r.policy_requested,
        r.policy_applied,
        bytes(r.size_bytes as u64),
        r.pages_used,
        bytes(r.page_size as u64),
        r.fallback
            .as_ref()
            .map_or(String::new(), |f| format!("; {f}")),
    );
    out += &match r.cpu_requested {
        Some(c) => format!(
            "thread     pinned to CPU {c}, seen on CPU {} (node {})\n",
            r.cpu_seen,
            node(r.cpu_seen_node)
        ),
        None => format!(
            "thread     not pinned, seen on CPU {} (node {})\n",
            r.cpu_seen,
            node(r.cpu_seen_node)
        ),
    };
    let p = &r.placement;
    let present: u64 = p.pages_by_node.values().sum();
    let by_node: BTreeMap<_, _> = p.pages_by_node.iter().collect();
    let cells: Vec<String> = by_node
        .iter()
        .map(|(n, c)| {
            format!(
                "node {n}: {c} ({:.1}%)",
                100.0 * **c as f64 / present.max(1) as f64
            )
        })
        .collect();
    out += &format!(
        "pages      {}   [{} of {} pages checked]\n",
        cells.join("   "),
        p.pages_checked,
        p.pages_total
    );
    out += &format!(
        "on target  {}\nhuge pages {:.1}% of the buffer\n",
        p.on_target_pct
            .map_or("- (no target)".into(), |v| format!("{v:.1}%")),
        p.huge_pct
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_huge_page_sizes_the_kernel_has_are_accepted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("hugepages-2048kB")).unwrap();
        let check = |kind: &str| check_huge_size(kind.parse().unwrap(), kind, dir.path());
        assert!(check("hugetlb").is_ok() && check("hugetlb:2M").is_ok());
        assert!(check("thp").is_ok() && check("auto").is_ok());
        let e = check("hugetlb:1G").unwrap_err().to_string();
        assert!(
            e.starts_with("--pages hugetlb:1G: this kernel has no 1 GiB huge pages")
                && e.contains(": hugetlb:2M)"),
            "{e}"
        );
        let empty = tempfile::tempdir().unwrap();
        let e = check_huge_size("hugetlb".parse().unwrap(), "hugetlb", empty.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("none: this kernel has no hugetlb pages"), "{e}");
    }
}
