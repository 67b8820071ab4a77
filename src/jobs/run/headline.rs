//! The first latency line of run's summary, the one a person quotes:
//! page-local idle latency (random within small windows, so the TLB
//! holds the pages: what Intel MLC and multichase report), with the
//! full-random chase beside it as the same load plus its page walks.
//! Every later latency line of the summary says how it differs from this.

use crate::analysis::atlas::buffer_suffix;
use crate::probes::sweep::levels::Levels;
use crate::results::Record;
use crate::results::names::matrix::{kind, param as mx};
use crate::results::names::{metric, param, probe};

const PAGE_LOCAL: &str = "page-local";
const FULL_RANDOM: &str = "full-random";

/// The idle chases of one pattern and where they come from.
struct Chases<'a> {
    records: Vec<&'a Record>,
}

impl Chases<'_> {
    /// `115.9 ns` or `115.9-120.3 ns` over the local (or remote) pairs.
    fn span(&self, local: bool) -> Option<String> {
        let v: Vec<f64> = self
            .records
            .iter()
            .filter(|r| r.node_pair().is_some() && r.is_local() == local)
            .filter_map(|r| r.value(metric::LATENCY_NS))
            .collect();
        let lo = v.iter().copied().reduce(f64::min)?;
        let hi = v.iter().copied().reduce(f64::max)?;
        Some(if hi - lo < 0.05 {
            format!("{lo:.1} ns")
        } else {
            format!("{lo:.1}-{hi:.1} ns")
        })
    }

    /// `thp pages, 1 GiB`: the buffer of its first chase.
    fn buffer(&self) -> Option<String> {
        let r = self.records.first()?;
        Some(format!(
            "{} pages{}",
            crate::text::escape(r.str_param(param::PAGE_SIZE).unwrap_or("?")),
            buffer_suffix(r.u64_param(param::SIZE_BYTES))
        ))
    }
}

fn latency_of<'a>(records: &'a [Record], pattern: &str) -> Vec<&'a Record> {
    records
        .iter()
        .filter(|r| r.probe == probe::LATENCY && r.str_param(param::PATTERN) == Some(pattern))
        .collect()
}

/// The headline line: page-local from the latency probe, full-random
/// from the matrix (every cell, and the figure the findings compare),
/// or from the latency probe where the matrix has none.
pub(super) fn headline(levels: &Levels, records: &[Record]) -> String {
    let page_local = Chases {
        records: latency_of(records, PAGE_LOCAL),
    };
    let matrix: Vec<&Record> = records
        .iter()
        .filter(|r| r.probe == probe::MATRIX && r.str_param(mx::KIND) == Some(kind::LATENCY))
        .filter(|r| crate::analysis::atlas::pattern_label(r) == FULL_RANDOM)
        .collect();
    let full_random = Chases {
        records: if matrix.iter().any(|r| r.value(metric::LATENCY_NS).is_some()) {
            matrix
        } else {
            latency_of(records, FULL_RANDOM)
        },
    };
    let side = |local: bool| {
        let figures: Vec<String> = [
            page_local.span(local).map(|s| format!("{s} (page-local)")),
            full_random
                .span(local)
                .map(|s| format!("{s} with page walks (full-random)")),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!figures.is_empty()).then(|| figures.join(", "))
    };
    let mut out = format!(
        "  idle latency:       local {}",
        side(true).unwrap_or_else(|| "-".into())
    );
    if let Some(remote) = side(false) {
        out.push_str(&format!("; remote {remote}"));
    }
    let buffers = match (page_local.buffer(), full_random.buffer()) {
        (Some(p), Some(f)) if p == f => p,
        (Some(p), Some(f)) => format!("page-local on {p}, full-random on {f}"),
        (p, f) => p.or(f).unwrap_or_default(),
    };
    if !buffers.is_empty() {
        out.push_str(&format!("; {buffers}"));
    }
    // A full-random buffer short of memory's size still finds some of its
    // lines in the L3: say so, as the sweep's lines do.
    if let Some(b) = full_random
        .records
        .first()
        .and_then(|r| r.u64_param(param::SIZE_BYTES))
        .filter(|&b| (b as usize) < levels.memory_from())
    {
        out.push_str(&format!(" ({})", levels.name(b as usize)));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Better;

    fn chase(probe: &str, pattern: &str, c: u64, m: u64, ns: f64) -> Record {
        Record::new(probe, "chase")
            .param(mx::KIND, kind::LATENCY)
            .param(param::PATTERN, pattern)
            .param(param::PAGE_SIZE, "thp")
            .param(param::SIZE_BYTES, 1u64 << 30)
            .param(param::CPU_NODE, c)
            .param(param::MEM_NODE, m)
            .metric(metric::LATENCY_NS, ns, "ns", Better::Lower)
    }

    fn levels() -> Levels {
        Levels::of(&crate::topology::fixture("two-node"), None)
    }

    #[test]
    fn page_local_comes_first_with_full_random_as_page_walks() {
        let records = vec![
            chase(probe::MATRIX, FULL_RANDOM, 0, 0, 236.6),
            chase(probe::MATRIX, FULL_RANDOM, 0, 1, 340.0),
            chase(probe::LATENCY, PAGE_LOCAL, 0, 0, 115.9),
            chase(probe::LATENCY, PAGE_LOCAL, 0, 1, 190.2),
            // The latency probe's own full-random chase repeats the
            // matrix's: not a second headline figure.
            chase(probe::LATENCY, FULL_RANDOM, 0, 0, 250.0),
        ];
        assert_eq!(
            headline(&levels(), &records),
            "  idle latency:       local 115.9 ns (page-local), 236.6 ns with page walks (full-random); \
             remote 190.2 ns (page-local), 340.0 ns with page walks (full-random); thp pages, 1 GiB\n"
        );
    }

    #[test]
    fn without_a_matrix_chase_the_latency_probes_full_random_stands_in() {
        let records = vec![
            chase(probe::LATENCY, PAGE_LOCAL, 0, 0, 115.9),
            chase(probe::LATENCY, FULL_RANDOM, 0, 0, 250.0),
        ];
        assert_eq!(
            headline(&levels(), &records),
            "  idle latency:       local 115.9 ns (page-local), 250.0 ns with page walks (full-random); thp pages, 1 GiB\n"
        );
        assert_eq!(headline(&levels(), &[]), "  idle latency:       local -\n");
    }

    #[test]
    fn a_full_random_buffer_short_of_memory_is_named_by_its_level() {
        let levels = Levels {
            l1: 32 << 10,
            l2: 1 << 20,
            l3: 32 << 20,
        };
        let small =
            chase(probe::MATRIX, FULL_RANDOM, 0, 0, 150.0).param(param::SIZE_BYTES, 256u64 << 20);
        assert_eq!(
            headline(&levels, &[small]),
            "  idle latency:       local 150.0 ns with page walks (full-random); thp pages, 256 MiB (L3 and memory, 8x L3)\n"
        );
    }
}
