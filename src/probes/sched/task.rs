//! One task of the run: the random update `a[ix[i]] += b[i]` of the
//! original benchmark on the task's own three arrays, which it writes
//! itself first (so first touch puts their pages near where it starts),
//! then where its pages are at the end of its work.

use super::shared::{MemoryReport, Shared, TaskReport};
use crate::placement::pages;
use crate::sys::{self, Whose};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The most pages asked of `move_pages` per array; larger arrays are
/// sampled.
const PAGE_SAMPLE: usize = 16 * 1024;

/// A task's data: values `a`, addends `b` and random indexes `ix` into `a`.
pub(crate) struct Arrays {
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub ix: Vec<u32>,
}

/// splitmix64: distinct, well-mixed streams from small seeds.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Arrays {
    /// `n` elements each (`n` at most 2^32), every element written in
    /// order by the calling thread. `a` starts at 0 and `b[i]` at `i`, as
    /// in the original; `ix` is uniform over `0..n`.
    pub(crate) fn init(n: usize, seed: u64) -> Arrays {
        assert!(n > 0 && n as u64 <= 1 << 32, "size {n} out of range");
        // The zero goes through black_box so that the stores stay stores:
        // memory the allocator got zeroed could otherwise be left untouched,
        // and first touch would then happen later, wherever the task runs.
        let a: Vec<f64> = (0..n).map(|_| black_box(0.0)).collect();
        let b: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let mut state = seed;
        let ix: Vec<u32> = (0..n)
            .map(|_| ((u128::from(next(&mut state)) * n as u128) >> 64) as u32)
            .collect();
        Arrays { a, b, ix }
    }

    /// Bytes of the three arrays.
    pub(crate) fn bytes(n: usize) -> u64 {
        (n as u64).saturating_mul(8 + 8 + 4)
    }

    /// `passes` sweeps of `a[ix[i]] += b[i]`, each followed by
    /// `b[k] = a[k]` (k = the pass, modulo the size), the original's
    /// dependency between passes.
    #[inline(never)]
    pub(crate) fn run(&mut self, passes: u32) {
        let Arrays { a, b, ix } = self;
        let n = a.len();
        for k in 0..passes as usize {
            for (&j, &add) in ix.iter().zip(b.iter()) {
                a[j as usize] += add;
            }
            let k = k % n;
            b[k] = a[k];
        }
    }

    /// A value that depends on every element of `a`, so no pass can be
    /// left out.
    pub(crate) fn checksum(&self) -> u64 {
        self.a
            .iter()
            .fold(0u64, |s, v| s.rotate_left(5) ^ v.to_bits())
    }

    /// The (address, length) of each array.
    fn ranges(&self) -> [(usize, usize); 3] {
        [
            (self.a.as_ptr() as usize, self.a.len() * 8),
            (self.b.as_ptr() as usize, self.b.len() * 8),
            (self.ix.as_ptr() as usize, self.ix.len() * 4),
        ]
    }

    /// Where the arrays' pages are now (`move_pages`, sampled beyond
    /// 16 Ki pages per array) and how much of them THP backs (smaps).
    pub(crate) fn memory(&self) -> Option<MemoryReport> {
        let page = crate::sys::mmap::base_page_size();
        let smaps = crate::procfs::smaps::read_self_smaps().unwrap_or_default();
        let mut m = MemoryReport::default();
        let mut by_node = BTreeMap::new();
        for (addr, len) in self.ranges() {
            let sample = pages::page_nodes_sampled(addr, len, page, PAGE_SAMPLE).ok()?;
            let h = sample.histogram();
            // A sampled array counts each page found for the pages it stands for.
            let weight = sample.stride as u64;
            for (node, count) in h.by_node {
                *by_node.entry(node).or_insert(0) += count * weight;
            }
            m.not_present += h.not_present * weight;
            m.huge_bytes +=
                crate::procfs::smaps::huge_bytes(&smaps, addr as u64, (addr + len) as u64);
            m.bytes += len as u64;
        }
        m.pages_by_node = by_node;
        Some(m)
    }
}

/// How the task's process runs.
pub(crate) struct TaskSpec<'a> {
    pub index: usize,
    pub size: usize,
    pub passes: u32,
    pub shared: &'a Shared,
    /// The run's start, shared by every process through fork (the monotonic
    /// clock is the same in all of them).
    pub start: Instant,
    pub parent: libc::pid_t,
}

/// The body of forked task `spec.index`; never returns.
pub(crate) fn main(spec: &TaskSpec<'_>) -> ! {
    let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(spec))).unwrap_or(101);
    sys::exit_now(code)
}

fn body(spec: &TaskSpec<'_>) -> i32 {
    crate::interrupt::child_signal_setup();
    if sys::die_with_parent().is_err() || sys::parent_pid() != spec.parent {
        // The parent is already gone: nobody would look at or reap us.
        return 1;
    }
    sys::set_task_name(&format!("sched task {}", spec.index + 1));
    let t = spec.index;
    spec.shared.set_start(
        t,
        crate::placement::current_cpu(),
        spec.start.elapsed().as_nanos() as u64,
    );
    let mut arrays = Arrays::init(spec.size, t as u64 + 1);
    arrays.run(spec.passes);
    let checksum = black_box(arrays.checksum());
    let memory = arrays.memory();
    spec.shared.finish(
        t,
        &TaskReport {
            done_ns: spec.start.elapsed().as_nanos() as u64,
            cpu: sys::cpu_times_of(Whose::Own),
            checksum,
            memory,
        },
    );
    // Stay until the parent has looked at the final CPU time.
    while !spec.shared.wait_release(t, Duration::from_secs(1)) {
        if sys::parent_pid() != spec.parent {
            return 1;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_is_the_original_update_and_dependency() {
        let mut arr = Arrays {
            a: vec![0.0; 4],
            b: vec![0.0, 1.0, 2.0, 3.0],
            ix: vec![1, 1, 0, 3],
        };
        arr.run(1);
        assert_eq!(arr.a, [2.0, 1.0, 0.0, 3.0]);
        assert_eq!(arr.b, [2.0, 1.0, 2.0, 3.0]);
        arr.run(1);
        // The second call starts at pass 0 again: b[0] = a[0].
        assert_eq!(arr.a, [4.0, 4.0, 0.0, 6.0]);
        assert_eq!(arr.b[0], 4.0);
        let mut arr = Arrays {
            a: vec![0.0; 2],
            b: vec![1.0, 1.0],
            ix: vec![0, 1],
        };
        // Passes beyond the size wrap the dependency index.
        arr.run(3);
        assert_eq!(arr.a, [3.0, 4.0]);
        assert_eq!(arr.b, [3.0, 2.0]);
    }

    #[test]
    fn init_fills_every_array_and_touches_every_page() {
        let n = 100_000;
        let arr = Arrays::init(n, 7);
        assert!(arr.a.iter().all(|&v| v == 0.0));
        assert!(arr.b.iter().enumerate().all(|(i, &v)| v == i as f64));
        assert!(arr.ix.iter().all(|&j| (j as usize) < n));
        // Uniform enough: every tenth of the range gets a share.
        let mut tenths = [0usize; 10];
        for &j in &arr.ix {
            tenths[j as usize * 10 / n] += 1;
        }
        assert!(tenths.iter().all(|&c| c > n / 20), "{tenths:?}");
        assert_ne!(Arrays::init(n, 8).ix, arr.ix);
        let m = arr.memory().unwrap();
        assert_eq!(m.not_present, 0, "{m:?}");
        assert_eq!(m.bytes, Arrays::bytes(n));
        let pages: u64 = m.pages_by_node.values().sum();
        assert!(
            pages * crate::sys::mmap::base_page_size() as u64 >= m.bytes,
            "{m:?}"
        );
    }

    #[test]
    fn the_checksum_sees_every_element() {
        let mut arr = Arrays::init(1000, 1);
        arr.run(2);
        let c = arr.checksum();
        arr.a[999] += 1.0;
        assert_ne!(arr.checksum(), c);
    }
}
