//! The `place` job: put a buffer and a thread where asked and report where
//! they really are. It answers "does binding work here?" before any
//! benchmark relies on it, and is what the multi-node VM tests drive.

use crate::memory::{Buffer, BufferOptions, PageKind, Placement};
use crate::output::render::Format;
use crate::placement::{MemPolicy, pin_and_check};
use crate::topology::Topology;
use crate::units::bytes;
use crate::view::Section;
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;

/// What to place, checked against the machine already.
pub(crate) struct Request {
    pub policy: MemPolicy,
    pub size: usize,
    /// The size as given, for the admission message.
    pub size_text: String,
    pub pages: PageKind,
    /// The CPU to run on, if any.
    pub cpu: Option<usize>,
}

/// What `place` found: where the pages and the thread really are.
#[derive(Serialize)]
pub(crate) struct Report {
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

/// Admits the buffer against the target nodes' free memory, pins the
/// thread, allocates and touches the buffer under the policy and asks the
/// kernel where its pages are.
pub(crate) fn run(topo: &Topology, req: &Request) -> Result<Report> {
    // Only `bind` keeps the pages off the other nodes; every other policy
    // falls back to them when its nodes are full.
    let bound: Option<Vec<usize>> = match &req.policy {
        MemPolicy::Bind(nodes) => Some(nodes.iter().collect()),
        _ => None,
    };
    crate::memory::admission::admit(
        topo,
        &crate::memory::admission::Footprint {
            bytes: req.size as u64,
            nodes: bound.as_deref(),
            what: format!("--size {}", req.size_text),
            remedy: "give a smaller --size",
        },
    )?;
    if let Some(c) = req.cpu {
        pin_and_check(c).with_context(|| format!("cannot run on CPU {c}"))?;
    }
    let policy = &req.policy;
    let mut opts = BufferOptions::new(req.size).pages(req.pages);
    if *policy != MemPolicy::Default {
        opts = opts.policy(policy.clone());
    }
    let buffer = Buffer::new(&opts)
        .with_context(|| format!("cannot allocate {} under {policy}", bytes(req.size as u64)))?;
    let placement = buffer
        .verify()
        .context("cannot query where the pages are")?;
    let cpu_seen = crate::placement::current_cpu();
    Ok(Report {
        policy_requested: policy.to_string(),
        policy_applied: buffer
            .policy()
            .map_or_else(|| "default".into(), |p| p.to_string()),
        size_bytes: req.size,
        pages_requested: req.pages.to_string(),
        pages_used: buffer.page_kind().to_string(),
        page_size: buffer.page_size(),
        fallback: buffer.fallback_reason().map(str::to_string),
        cpu_requested: req.cpu,
        cpu_seen,
        cpu_seen_node: topo.cpu(cpu_seen).and_then(|c| c.node),
        placement,
    })
}

impl Report {
    /// The report in `format`: its own lines as text, itself as JSON, one
    /// table otherwise.
    pub(crate) fn render(&self, format: Format) -> Result<String> {
        match format {
            Format::Text => Ok(text(self)),
            Format::Json => Ok(format!("{}\n", crate::text::json_pretty(self)?)),
            f => crate::output::tables::render("numabench place", &[self.section()], f),
        }
    }

    /// One row per figure.
    pub(crate) fn section(&self) -> Section {
        let node = |n: Option<usize>| n.map_or("?".into(), |n| n.to_string());
        let p = &self.placement;
        let mut s = Section::new("placement");
        s.header = vec!["what".into(), "value".into()];
        let mut row = |k: &str, v: String| s.rows.push(vec![k.to_string(), v]);
        row("policy requested", self.policy_requested.clone());
        row("policy applied", self.policy_applied.clone());
        row("size", bytes(self.size_bytes as u64));
        row("pages requested", self.pages_requested.clone());
        row("pages used", self.pages_used.clone());
        row("page size", bytes(self.page_size as u64));
        row(
            "fallback",
            self.fallback.clone().unwrap_or_else(|| "-".into()),
        );
        row(
            "CPU requested",
            self.cpu_requested
                .map_or("- (not pinned)".into(), |c| c.to_string()),
        );
        row("CPU seen", self.cpu_seen.to_string());
        row("node of the CPU seen", node(self.cpu_seen_node));
        for (n, c) in &p.pages_by_node {
            row(&format!("pages on node {n}"), c.to_string());
        }
        row(
            "pages checked",
            format!("{} of {}", p.pages_checked, p.pages_total),
        );
        row(
            "on target",
            p.on_target_pct
                .map_or("- (no target)".into(), |v| format!("{v:.1}%")),
        );
        row("huge pages", format!("{:.1}%", p.huge_pct));
        s
    }
}

fn text(r: &Report) -> String {
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
