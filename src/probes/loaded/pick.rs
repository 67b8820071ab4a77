//! The injectors' kernel when none is asked for: of every kernel this CPU
//! runs that makes the mix's traffic with the mix's own store kind (regular
//! loads for read), the one that moves the most, found by a short trial on
//! the first injector's own buffer before the curve. Kernels within
//! [`MARGIN_PCT`] of the fastest count as tied and the widest of them is
//! taken, so the curves of one run do not switch kernels on noise.
//!
//! The widest loads are not always the fastest from one core: on an
//! AVX-512 Xeon the 256-bit read moved 18.4 GB/s where the 512-bit one
//! moved 15.5, four runs each (docs/loaded.md). An injector that moves
//! less makes a curve that stops short of the load the machine can take.

use super::Mix;
use super::work::Work;
use crate::kernels::{self, KernelSpec};
use std::time::{Duration, Instant};

/// Time each kernel runs in one round of the trial, after one warm batch.
const TRIAL: Duration = Duration::from_millis(30);
/// Rounds over all the kernels; each kernel keeps its best.
const ROUNDS: usize = 2;
/// Rates this close to the fastest, in percent, are a tie.
pub(super) const MARGIN_PCT: f64 = 3.0;

/// One kernel's best rate in the trial.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Tried {
    pub kernel: &'static str,
    pub mb_s: f64,
}

/// Every kernel this CPU runs that makes `mix`'s traffic with its own store
/// kind: each instruction set, one pass or several streams at once.
pub(super) fn candidates(mix: Mix) -> Vec<&'static KernelSpec> {
    let (op, store) = mix.kernel_kind();
    kernels::available()
        .filter(|k| k.op == op && k.store == store)
        .collect()
}

/// Runs each of `kernels` on `work` for [`TRIAL`], round after round so a
/// drift in the machine's load falls on all of them, and returns every
/// kernel's best rate, the pick first ([`pick`]).
pub(super) fn trial(
    work: &mut Work,
    kernels: &[&'static KernelSpec],
) -> Vec<(&'static KernelSpec, f64)> {
    let mut best = vec![0.0f64; kernels.len()];
    for _ in 0..ROUNDS {
        for (k, b) in kernels.iter().zip(best.iter_mut()) {
            work.batch(k);
            let (t0, mut bytes) = (Instant::now(), 0u64);
            while t0.elapsed() < TRIAL {
                bytes += work.batch(k).0;
            }
            *b = b.max(bytes as f64 / t0.elapsed().as_secs_f64() / 1e6);
        }
    }
    pick(kernels.iter().copied().zip(best).collect())
}

/// `rated` with the pick first and the rest fastest first: the pick is the
/// widest (then the one with fewer streams) of those within [`MARGIN_PCT`]
/// of the fastest.
pub(super) fn pick(mut rated: Vec<(&'static KernelSpec, f64)>) -> Vec<(&'static KernelSpec, f64)> {
    rated.sort_by(|a, b| b.1.total_cmp(&a.1));
    let Some(&(_, fastest)) = rated.first() else {
        return rated;
    };
    let tied = rated
        .iter()
        .take_while(|(_, r)| *r >= fastest * (1.0 - MARGIN_PCT / 100.0))
        .count();
    let widest = (0..tied)
        .max_by_key(|&i| (rated[i].0.isa.rank(), std::cmp::Reverse(rated[i].0.streams)))
        .unwrap_or(0);
    let chosen = rated.remove(widest);
    rated.insert(0, chosen);
    rated
}

/// The note a trial leaves on its curve; `tried` has the pick first.
pub(super) fn note(tried: &[Tried]) -> Option<String> {
    let (first, rest) = tried.split_first()?;
    let others: Vec<String> = rest
        .iter()
        .map(|t| format!("{} {:.0}", t.kernel, t.mb_s))
        .collect();
    Some(format!(
        "injector kernel {}: the widest of those within {MARGIN_PCT}% of the fastest in a trial of {} on the first injector before the curve, one core at full load ({:.0} MB/s; {})",
        first.kernel,
        tried.len(),
        first.mb_s,
        if others.is_empty() {
            "no other".to_string()
        } else {
            others.join(", ")
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{Op, Store};

    #[test]
    fn candidates_make_the_mix_traffic_with_its_store_kind() {
        for mix in [Mix::Read, Mix::Copy, Mix::CopyNt] {
            let (op, store) = mix.kernel_kind();
            let c = candidates(mix);
            assert!(
                c.iter()
                    .all(|k| k.op == op && k.store == store && k.is_available())
            );
            // The widest, which was the only choice before, is among them.
            if let Some(widest) = kernels::best(op, store) {
                assert!(c.iter().any(|k| k.name == widest.name), "{mix:?}");
            }
        }
        // Every machine has a portable read in one pass and in streams.
        let read = candidates(Mix::Read);
        assert!(read.iter().any(|k| k.streams == 1));
        assert!(read.iter().any(|k| k.streams > 1));
        assert!(
            read.iter()
                .all(|k| k.op == Op::Read && k.store == Store::Regular)
        );
    }

    #[test]
    fn the_note_names_the_pick_first_and_every_other_rate() {
        let tried = [
            Tried {
                kernel: "read_avx2",
                mb_s: 18440.4,
            },
            Tried {
                kernel: "read_avx512",
                mb_s: 15512.0,
            },
        ];
        let n = note(&tried).unwrap();
        assert!(
            n.starts_with("injector kernel read_avx2: the widest of those within 3% of the fastest in a trial of 2"),
            "{n}"
        );
        assert!(n.contains("(18440 MB/s; read_avx512 15512)"), "{n}");
        assert!(note(&[]).is_none());
        let one = note(&tried[..1]).unwrap();
        assert!(one.contains("no other"), "{one}");
    }

    #[test]
    fn the_pick_is_the_widest_within_the_margin_of_the_fastest() {
        let k = |n: &str| kernels::find(n).unwrap();
        let names =
            |v: &[(&'static KernelSpec, f64)]| v.iter().map(|(k, _)| k.name).collect::<Vec<_>>();
        // A clear winner is taken, whatever its width.
        let p = pick(vec![
            (k("read_portable"), 100.0),
            (k("read_s8_portable"), 150.0),
        ]);
        assert_eq!(names(&p), ["read_s8_portable", "read_portable"]);
        // Within the margin, the one pass beats the streams at one width.
        let p = pick(vec![
            (k("read_s8_portable"), 100.0),
            (k("read_portable"), 98.0),
        ]);
        assert_eq!(names(&p), ["read_portable", "read_s8_portable"]);
        // Just outside it, the faster stays.
        let p = pick(vec![
            (k("read_s8_portable"), 100.0),
            (k("read_portable"), 96.9),
        ]);
        assert_eq!(p[0].0.name, "read_s8_portable");
        if cfg!(target_arch = "x86_64") {
            // A wider ISA within the margin is taken over a narrower one;
            // the rest follow fastest first.
            let p = pick(vec![
                (k("copy_s4_nt_avx2"), 22394.0),
                (k("copy_nt_avx512"), 17399.0),
                (k("copy_s4_nt_avx512"), 22158.0),
            ]);
            assert_eq!(
                names(&p),
                ["copy_s4_nt_avx512", "copy_s4_nt_avx2", "copy_nt_avx512"]
            );
        }
        assert!(pick(Vec::new()).is_empty());
    }
}
