//! Peak measurements as records: one per mix, store kind, CPU node, target
//! and thread count, and one naming the best of each CPU node, target and
//! thread count.

use super::{MixRun, Peak, best};
use crate::results::names::peak::{self as pk, kind};
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Record};
use crate::stats;

/// The params every peak record has, from the run it describes.
fn base(kind: &str, name: String, r: &MixRun) -> Record {
    let b = &r.bandwidth;
    let mut rec = Record::new(probe::PEAK, &name)
        .param(pk::param::KIND, kind)
        .param(param::CPU_NODE, r.cpu_node)
        .param(pk::param::TARGET, r.target.name());
    if let super::Target::Node(m) = r.target {
        rec = rec.param(param::MEM_NODE, m);
    }
    rec = rec
        .param(param::THREADS, b.threads)
        .param(pk::param::MIX, r.mix.name())
        .param(pk::param::STORE, b.kernel.store.to_string())
        .param(param::KERNEL, b.kernel.op.to_string())
        .param(param::VARIANT, b.kernel.name)
        .param(
            pk::param::BYTES_PER_ELEMENT,
            b.kernel.op.stream_bytes_per_element(),
        )
        .param(pk::param::READ_STREAMS, b.kernel.op.read_streams())
        .param(pk::param::WRITE_STREAMS, b.kernel.op.write_streams())
        .param(param::SIZE_BYTES, b.array_bytes)
        .param(param::PAGE_SIZE, b.seen.page_kind.clone())
        .metric(
            metric::BANDWIDTH_MB_S,
            b.stream_mb_s(),
            "MB/s",
            Better::Higher,
        );
    rec.placement = Some(b.seen.placement());
    rec
}

fn mix_record(r: &MixRun) -> Record {
    let b = &r.bandwidth;
    let name = format!(
        "{} {} {}->{} {}t",
        r.mix,
        b.kernel.store,
        r.cpu_node,
        r.target.name(),
        b.threads
    );
    let mut rec = base(kind::MIX, name, r)
        .metric(
            metric::CV_PCT,
            stats::cv_pct(&b.stream_samples()),
            "%",
            Better::Lower,
        )
        .metric(metric::RUNTIME_S, b.elapsed_s, "s", Better::Lower);
    rec.samples
        .insert(metric::BANDWIDTH_MB_S.into(), b.stream_samples());
    rec
}

impl Peak {
    /// Every run, then the best of each (CPU node, target, threads) in the
    /// order first measured.
    pub(crate) fn records(&self) -> Vec<Record> {
        let mut out: Vec<Record> = self.runs.iter().map(mix_record).collect();
        let mut groups: Vec<(usize, String, usize)> = Vec::new();
        for r in &self.runs {
            let key = (r.cpu_node, r.target.name(), r.bandwidth.threads);
            if !groups.contains(&key) {
                groups.push(key);
            }
        }
        for (c, t, n) in groups {
            let of: Vec<&MixRun> = self
                .runs
                .iter()
                .filter(|r| r.cpu_node == c && r.target.name() == t && r.bandwidth.threads == n)
                .collect();
            let Some(top) = best(&of, |r| r.mb_s()) else {
                continue;
            };
            let mut rec = base(kind::BEST, format!("{} {c}->{t} {n}t", kind::BEST), top);
            rec.notes.push(format!(
                "best of {} mix and store kind pair(s): {} with {} ({})",
                of.len(),
                top.mix,
                top.bandwidth.kernel.access(),
                top.bandwidth.kernel.name
            ));
            out.push(rec);
        }
        if let Some(first) = out.first_mut() {
            first.notes.extend(self.notes.iter().cloned());
            first.conditions.extend(self.conditions.iter().cloned());
        }
        out
    }
}
