//! `numabench place`: its arguments, checked against the machine (see
//! `jobs::place` for the work).

use super::args::{PagesArgs, SizeArgs};
use super::select;
use crate::memory::PageKind;
use crate::output::render::Format;
use crate::topology::{SysfsRoot, read_topology};
use crate::units::bytes;
use anyhow::Result;
use std::path::Path;

/// Allocate a buffer under a memory policy and report where its pages really are.
///
/// Allocate a buffer under a memory policy from a pinned thread and report
/// where its pages and the thread really are (pages per node, huge-page
/// coverage, CPU seen).
///
/// The buffer (--size) is 64 MiB unless given.
#[derive(clap::Args, Debug)]
pub struct PlaceArgs {
    /// Memory policy, e.g. bind:0 or interleave:all.
    ///
    /// One of default, local, preferred:N, preferred-many:LIST, bind:LIST,
    /// interleave:LIST or weighted-interleave:LIST; LIST like 0-1,3, or
    /// `all` as numactl takes it: every node with memory this process may
    /// use.
    #[arg(long, short = 'm', default_value = "default", value_name = "POLICY")]
    pub policy: String,
    #[command(flatten)]
    pub size: SizeArgs,
    /// Run the allocating thread on this CPU.
    #[arg(long, short = 'c', value_name = "CPU", conflicts_with = "cpu_node")]
    pub cpu: Option<usize>,
    /// Run the allocating thread on the first usable CPU of this node.
    #[arg(long, short = 'N', value_name = "NODE")]
    pub cpu_node: Option<usize>,
    #[command(flatten)]
    pub pages: PagesArgs,
    #[command(flatten)]
    pub format: super::output::FormatArgs,
}

pub(super) fn run(args: PlaceArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    let policy = select::policy(&topo, &args.policy, "--policy")?;
    let size_text = args.size.size.as_deref().unwrap_or(DEFAULT_SIZE);
    let size = super::units::parse_size(size_text)
        .map_err(|e| crate::error::usage(format!("--size {e}")))?;
    let (pages_text, pages) = args.pages.one()?;
    check_huge_size(pages, pages_text, Path::new(HUGEPAGES))?;
    let cpu = match (args.cpu, args.cpu_node) {
        (Some(c), _) => {
            select::cpu(&topo, c, "--cpu")?;
            Some(c)
        }
        (None, Some(n)) => select::cpu_node(&topo, n, "--cpu-node")?.first(),
        (None, None) => None,
    };
    let request = crate::jobs::place::Request {
        policy,
        size,
        size_text: size_text.to_string(),
        pages,
        cpu,
    };
    let report = crate::jobs::place::run(&topo, &request)?;
    let format = args.format.chosen().unwrap_or(Format::Text);
    crate::console::out(&report.render(format)?);
    Ok(())
}

/// The buffer without `--size`.
const DEFAULT_SIZE: &str = "64M";

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
