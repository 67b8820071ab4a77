//! A pointer-chase buffer on one memory node, mapped, faulted in and linked
//! once, then chased from each CPU node in turn: the latency, mlp and
//! loaded probes measure every (CPU node, memory node) pair over one
//! buffer per memory node instead of one per pair (a chase buffer is 16x
//! the L3, at least 1 GiB, so building it cost more than chasing it).
//!
//! [`NodeChase::build`] maps the buffer bound to its node and faults it in
//! from a pinned thread; [`NodeChase::link`] links it once per [`Link`] on
//! that same thread (the CPU that built a pair's buffer before); then
//! [`Linked::chase_from`] runs the timed chase on a thread pinned to each
//! pair's CPU, re-verifying the placement first, so every pair's record
//! still carries its own verified placement and its own CPU. The chase
//! continues from where the previous CPU's stopped: the lines that CPU
//! left in its caches lie behind, a buffer of many times the L3 is not
//! walked round in one measurement, so the next CPU does not meet them.
//!
//! [`Buffers`] is the seam the probes' loops take: [`Memory`] here, a
//! counting stand-in in their tests.

use super::measure::{self, Latency, Seen};
use crate::ids::NodeSet;
use crate::kernels::chase::Chases;
use crate::kernels::latency::{Chain, LINE_BYTES};
use crate::kernels::pattern::Pattern;
use crate::memory::{Buffer, BufferOptions, PageKind, Placement};
use crate::placement::MemPolicy;
use anyhow::{Result, anyhow};
use std::time::Instant;

/// How a buffer's chase is linked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Link {
    /// The one chase of the idle latency: the in-place full-random cycle
    /// through every line ([`Chain`]), or for another pattern one
    /// [`Chases`] chase at the pattern's own spacing.
    One { pattern: Pattern, seed: u64 },
    /// `chases` independent chases, elements `spacing` bytes apart, that
    /// a thread follows together (mlp).
    Parallel {
        pattern: Pattern,
        spacing: usize,
        chases: usize,
        seed: u64,
    },
}

impl Link {
    pub(crate) fn pattern(&self) -> Pattern {
        match *self {
            Link::One { pattern, .. } | Link::Parallel { pattern, .. } => pattern,
        }
    }
}

/// Where the probes' chase buffers come from: the machine's memory
/// ([`Memory`]), or in tests a stand-in that counts what is asked of it.
pub(crate) trait Buffers {
    /// A buffer on one memory node.
    type Built;
    /// A buffer linked for chasing, borrowing it.
    type Linked<'b>
    where
        Self::Built: 'b;

    /// A `size`-byte buffer of `pages` bound to `node`, faulted in from a
    /// thread pinned to `cpu`.
    fn build(
        &mut self,
        cpu: usize,
        node: usize,
        size: usize,
        pages: PageKind,
    ) -> Result<Self::Built>;

    /// `built` linked as `how`, on the CPU that built it.
    fn link<'b>(&mut self, built: &'b mut Self::Built, how: Link) -> Result<Self::Linked<'b>>;
}

/// The machine's memory: [`NodeChase`]s.
pub(crate) struct Memory;

impl Buffers for Memory {
    type Built = NodeChase;
    type Linked<'b> = Linked<'b>;

    fn build(
        &mut self,
        cpu: usize,
        node: usize,
        size: usize,
        pages: PageKind,
    ) -> Result<NodeChase> {
        NodeChase::build(cpu, node, size, pages)
    }

    fn link<'b>(&mut self, built: &'b mut NodeChase, how: Link) -> Result<Linked<'b>> {
        built.link(how)
    }
}

/// A chase buffer bound to one memory node.
pub(crate) struct NodeChase {
    buffer: Buffer,
    /// The CPU that faulted it in; it links it too.
    cpu: usize,
}

impl NodeChase {
    /// Maps a `size`-byte buffer of `pages` bound to `node` and faults it
    /// in from a thread pinned to `cpu`.
    pub(crate) fn build(
        cpu: usize,
        node: usize,
        size: usize,
        pages: PageKind,
    ) -> Result<NodeChase> {
        let buffer = on_cpu(cpu, |_| {
            let opts = BufferOptions::new(size)
                .pages(pages)
                .policy(MemPolicy::Bind(NodeSet::from_ids([node])));
            Ok(Buffer::new(&opts)?)
        })?;
        Ok(NodeChase { buffer, cpu })
    }

    /// The buffer linked as `how`, on the thread of the CPU that built it.
    pub(crate) fn link(&mut self, how: Link) -> Result<Linked<'_>> {
        let cpu = self.cpu;
        let size = self.buffer.len();
        let (pages, words) = split(&mut self.buffer);
        let walk = on_cpu(cpu, move |_| Walk::build(words, how))?;
        Ok(Linked {
            pages,
            walk,
            how,
            size,
        })
    }
}

/// A shared view of a buffer whose words a chase holds: only what reads
/// none of them (where the pages are, their kind).
struct Pages<'a>(&'a Buffer);

impl Pages<'_> {
    fn verify(&self) -> Result<Placement> {
        Ok(self.0.verify()?)
    }

    fn kind(&self) -> PageKind {
        self.0.page_kind()
    }
}

/// `buffer`'s words, to link and chase, beside a view that can still ask
/// where its pages are.
fn split(buffer: &mut Buffer) -> (Pages<'_>, &mut [u64]) {
    let n = buffer.len() / size_of::<u64>();
    let at = buffer.as_mut_ptr().cast::<u64>();
    // SAFETY: as `Buffer::as_mut_slice`: the mapping is readable and
    // writable for at least `len` bytes, page aligned, and stays mapped
    // while the Buffer lives, which the returned borrows keep. The words
    // are the mapping, not the Buffer struct that `Pages` borrows, and
    // `Pages` offers nothing that reads or writes a word (placement comes
    // from move_pages and smaps), so the slice is their only view.
    let words = unsafe { std::slice::from_raw_parts_mut(at, n) };
    (Pages(buffer), words)
}

/// A linked chase: the in-place cycle or [`Chases`].
pub(crate) enum Walk<'a> {
    Cycle(Chain<'a>),
    Chases(Chases<'a>),
}

impl<'a> Walk<'a> {
    /// Links `words` as `how`; the same links for the same `how`.
    fn build(words: &'a mut [u64], how: Link) -> Result<Walk<'a>> {
        Ok(match how {
            Link::One {
                pattern: Pattern::FullRandom,
                seed,
            } => Walk::Cycle(Chain::build(words, LINE_BYTES, seed)?),
            Link::One { pattern, seed } => {
                Walk::Chases(Chases::build(words, &pattern, pattern.spacing(), 1, seed)?)
            }
            Link::Parallel {
                pattern,
                spacing,
                chases,
                seed,
            } => Walk::Chases(Chases::build(words, &pattern, spacing, chases, seed)?),
        })
    }

    /// Loads in one pass over the buffer, per chase.
    pub(crate) fn lap(&self) -> u64 {
        match self {
            Walk::Cycle(c) => c.lines() as u64,
            Walk::Chases(c) => c.elements() as u64,
        }
    }

    /// ns per load over `loads` dependent loads of the first chase.
    pub(crate) fn ns_per_load(&mut self, loads: u64) -> f64 {
        self.ns_per_access(1, loads)
    }

    /// ns per load following the first `n` chases `steps` loads each,
    /// interleaved (the cycle has one chase).
    pub(crate) fn ns_per_access(&mut self, n: usize, steps: u64) -> f64 {
        match self {
            Walk::Cycle(c) => {
                assert_eq!(n, 1, "the full-random cycle is one chase");
                c.chase_ns_per_load(steps)
            }
            Walk::Chases(c) => c.ns_per_access(n, steps),
        }
    }
}

/// A buffer linked for chasing, from any CPU in turn.
pub(crate) struct Linked<'a> {
    pages: Pages<'a>,
    walk: Walk<'a>,
    how: Link,
    size: usize,
}

impl<'a> Linked<'a> {
    /// Where the pages are now.
    pub(crate) fn placement(&self) -> Result<Placement> {
        self.pages.verify()
    }

    /// The page kind the buffer got.
    pub(crate) fn page_kind(&self) -> PageKind {
        self.pages.kind()
    }

    /// The chase itself, for a thread that pinned itself.
    pub(crate) fn walk(&mut self) -> &mut Walk<'a> {
        &mut self.walk
    }

    /// On a thread pinned to `cpu`: the placement verified again, then
    /// `chase` over the walk; what it returns with what was seen.
    pub(crate) fn chase_from<T: Send>(
        &mut self,
        cpu: usize,
        chase: impl FnOnce(&mut Walk<'_>) -> Result<T> + Send,
    ) -> Result<(T, Seen)> {
        let (pages, walk) = (&self.pages, &mut self.walk);
        let (out, placement, cpu) = on_cpu(cpu, |seen| {
            let placement = pages.verify()?;
            let out = chase(walk)?;
            Ok((out, placement, seen))
        })?;
        Ok((out, Seen::of_chase(placement, cpu, self.page_kind())))
    }

    /// The idle latency from `cpu`, as [`measure::latency`] measures it on
    /// a buffer of its own.
    pub(crate) fn latency_from(&mut self, cpu: usize) -> Result<Latency> {
        let begun = Instant::now();
        let (samples, seen) = self.chase_from(cpu, |walk| {
            let lap = walk.lap();
            Ok(measure::sample_chase(
                &mut |loads| walk.ns_per_load(loads),
                lap,
            ))
        })?;
        Ok(Latency {
            size_bytes: self.size,
            pattern: self.how.pattern(),
            samples,
            elapsed_s: begun.elapsed().as_secs_f64(),
            seen,
        })
    }
}

/// `f` on a thread pinned to `cpu`, given the CPU it was seen on (checked
/// to be `cpu`), as the probes' own chase threads ran.
fn on_cpu<T: Send>(cpu: usize, f: impl FnOnce(usize) -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|scope| {
        crate::sys::threads::spawn_scoped(scope, (0, 1), || -> Result<T> {
            let seen = crate::placement::pin_and_check(cpu)?;
            f(seen)
        })?
        .join()
        .map_err(|_| anyhow!("the chase thread on CPU {cpu} panicked"))?
    })
}

/// The line a probe's view shows of its chase buffers, from its records'
/// [`CHASE_BUFFERS_BUILT`](crate::results::names::param::CHASE_BUFFERS_BUILT):
/// "chase buffers built: 4 (one per memory node)"; `None` for records
/// without it (files written before it was counted).
pub(crate) fn builds_line(records: &[&crate::results::Record]) -> Option<String> {
    use crate::results::names::param;
    use std::collections::BTreeSet;
    let built = records
        .iter()
        .filter_map(|r| r.u64_param(param::CHASE_BUFFERS_BUILT))
        .max()?;
    let per_buffer: BTreeSet<_> = records
        .iter()
        .map(|r| {
            (
                r.u64_param(param::MEM_NODE),
                r.str_param(param::PAGES_ASKED),
                r.u64_param(param::SIZE_BYTES),
            )
        })
        .collect();
    let mut per = vec!["memory node"];
    let kinds: BTreeSet<_> = per_buffer.iter().map(|b| b.1).collect();
    let sizes: BTreeSet<_> = per_buffer.iter().map(|b| b.2).collect();
    if kinds.len() > 1 {
        per.push("page kind");
    }
    if sizes.len() > 1 {
        per.push("size");
    }
    let how = if built as usize == per_buffer.len() {
        format!(
            " (one per {}, chased from each CPU node)",
            per.join(" and ")
        )
    } else {
        String::new()
    };
    Some(format!("chase buffers built: {built}{how}"))
}

/// A stand-in for [`Memory`] that maps nothing and remembers what was
/// asked: (cpu, node, size, pages) per build, (build index, link) per link.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct Counted {
    pub builds: Vec<(usize, usize, usize, PageKind)>,
    pub links: Vec<(usize, Link)>,
    /// Build number (from 1) that fails, if any.
    pub fail_build: Option<usize>,
}

/// What a [`Counted`] build or link hands out: the build's index and node.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Fake {
    pub build: usize,
    pub node: usize,
}

#[cfg(test)]
impl Buffers for Counted {
    type Built = Fake;
    type Linked<'b> = Fake;

    fn build(&mut self, cpu: usize, node: usize, size: usize, pages: PageKind) -> Result<Fake> {
        if self.fail_build == Some(self.builds.len() + 1) {
            anyhow::bail!("mbind failed on node {node}");
        }
        self.builds.push((cpu, node, size, pages));
        Ok(Fake {
            build: self.builds.len() - 1,
            node,
        })
    }

    fn link(&mut self, built: &mut Fake, how: Link) -> Result<Fake> {
        self.links.push((built.build, how));
        Ok(*built)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu_and_node() -> (usize, usize) {
        let topo = crate::topology::read_topology(&crate::topology::SysfsRoot::live()).unwrap();
        let seat = super::super::seats::spread(&topo, 1)[0];
        (seat.cpu, seat.node)
    }

    #[test]
    fn one_buffer_linked_once_is_chased_from_a_cpu_again_and_again() {
        let (cpu, node) = cpu_and_node();
        let mut built = NodeChase::build(cpu, node, 1 << 20, PageKind::Base).unwrap();
        let mut linked = built
            .link(Link::One {
                pattern: Pattern::FullRandom,
                seed: 1,
            })
            .unwrap();
        assert_eq!(linked.walk().lap(), (1 << 20) / LINE_BYTES as u64);
        for _ in 0..2 {
            let l = linked.latency_from(cpu).unwrap();
            assert_eq!(l.size_bytes, 1 << 20);
            assert_eq!(l.pattern, Pattern::FullRandom);
            assert!(l.samples.len() >= 7, "{l:?}");
            assert!(l.median_ns() > 0.0 && l.median_ns().is_finite(), "{l:?}");
            assert_eq!(l.seen.cpus_seen, [cpu]);
            assert_eq!(l.seen.page_kind, "base");
            assert!(l.seen.verified_pct > 99.9, "{:?}", l.seen);
            assert_eq!(
                l.seen.pages_by_node.keys().copied().collect::<Vec<_>>(),
                [node]
            );
        }
    }

    #[test]
    fn a_buffer_links_again_for_each_pattern_and_for_parallel_chases() {
        let (cpu, node) = cpu_and_node();
        let mut built = NodeChase::build(cpu, node, 1 << 20, PageKind::Base).unwrap();
        let window = Pattern::PageLocal { window: 64 << 10 };
        {
            let mut linked = built
                .link(Link::One {
                    pattern: window,
                    seed: 1,
                })
                .unwrap();
            assert_eq!(linked.latency_from(cpu).unwrap().pattern, window);
        }
        let mut linked = built
            .link(Link::Parallel {
                pattern: Pattern::FullRandom,
                spacing: 256,
                chases: 4,
                seed: 1,
            })
            .unwrap();
        assert_eq!(linked.walk().lap(), (1 << 20) / 256);
        let (ns, seen) = linked
            .chase_from(cpu, |walk| Ok(walk.ns_per_access(4, 1000)))
            .unwrap();
        assert!(ns > 0.0, "{ns}");
        assert_eq!(seen.cpus_seen, [cpu]);
    }

    #[test]
    fn the_line_counts_the_buffers_per_memory_node_and_what_else_differs() {
        use crate::results::Record;
        use crate::results::names::param;
        let rec = |c: u64, m: u64, pages: &str| {
            Record::new("latency", "x")
                .param(param::CPU_NODE, c)
                .param(param::MEM_NODE, m)
                .param(param::PAGES_ASKED, pages)
                .param(param::SIZE_BYTES, 1u64 << 30)
        };
        let two: Vec<Record> = (0..2)
            .flat_map(|c| (0..2).map(move |m| rec(c, m, "thp")))
            .map(|r| r.param(param::CHASE_BUFFERS_BUILT, 2))
            .collect();
        let refs: Vec<&Record> = two.iter().collect();
        assert_eq!(
            builds_line(&refs).unwrap(),
            "chase buffers built: 2 (one per memory node, chased from each CPU node)"
        );
        let kinds: Vec<Record> = ["base", "thp"]
            .iter()
            .flat_map(|p| (0..2).map(move |m| rec(0, m, p)))
            .map(|r| r.param(param::CHASE_BUFFERS_BUILT, 4))
            .collect();
        let refs: Vec<&Record> = kinds.iter().collect();
        assert!(
            builds_line(&refs)
                .unwrap()
                .starts_with("chase buffers built: 4 (one per memory node and page kind,")
        );
        let old = [rec(0, 0, "thp")];
        assert_eq!(builds_line(&[&old[0]]), None);
    }

    #[test]
    fn a_cpu_that_cannot_be_pinned_is_an_error_not_a_chase_elsewhere() {
        let (cpu, node) = cpu_and_node();
        assert!(NodeChase::build(1 << 16, node, 1 << 20, PageKind::Base).is_err());
        let mut built = NodeChase::build(cpu, node, 1 << 20, PageKind::Base).unwrap();
        let mut linked = built
            .link(Link::One {
                pattern: Pattern::FullRandom,
                seed: 1,
            })
            .unwrap();
        assert!(linked.latency_from(1 << 16).is_err());
    }
}
