//! Every kernel against a scalar reference, plus the guard against the
//! optimiser dropping repeated stores.

use super::*;
use std::time::{Duration, Instant};

const LENGTHS: [usize; 8] = [0, 1, 7, 63, 64, 65, 1000, 4099];
/// Offsets in words from a 64-byte boundary: aligned, 8 bytes in, one line in.
const OFFSETS: [usize; 3] = [0, 1, 8];
/// Words either side of the destination that no kernel may touch.
const GUARD: usize = 16;
const GUARD_WORD: u64 = 0xDEAD_BEEF_DEAD_BEEF;

/// Storage whose slices start at a chosen distance from a 64-byte boundary.
struct Aligned {
    words: Vec<u64>,
    start: usize,
}

impl Aligned {
    fn new(len: usize, offset: usize, fill: impl Fn(usize) -> u64) -> Self {
        let mut words = vec![GUARD_WORD; len + offset + 2 * GUARD + 8];
        let misaligned = words.as_ptr().addr() % 64 / 8;
        let start = (8 - misaligned) % 8 + GUARD + offset;
        for (i, w) in words[start..start + len].iter_mut().enumerate() {
            *w = fill(i);
        }
        Aligned { words, start }
    }

    fn slice(&self, len: usize) -> &[u64] {
        &self.words[self.start..self.start + len]
    }

    fn slice_mut(&mut self, len: usize) -> &mut [u64] {
        &mut self.words[self.start..self.start + len]
    }

    fn guards_intact(&self, len: usize) -> bool {
        let (before, after) = (&self.words[..self.start], &self.words[self.start + len..]);
        before.iter().chain(after).all(|&w| w == GUARD_WORD)
    }
}

/// Ordinary doubles of varied magnitude and sign, so an FMA's single
/// rounding would show up as a different last bit somewhere.
fn double(seed: u64, i: usize) -> u64 {
    let x = crate::memory::fill::pattern_word(seed, i as u64);
    let unit = (x >> 11) as f64 / (1u64 << 53) as f64;
    ((unit - 0.5) * 1000.0 + 1e-3).to_bits()
}

/// What `op` must produce, element by element, written the obvious way.
fn reference(op: Op, [a, b, c]: [&[u64]; 3], q: f64, n: usize) -> Vec<u64> {
    let f = f64::from_bits;
    (0..n)
        .map(|i| match op {
            Op::Read => unreachable!(),
            Op::Write => q.to_bits(),
            Op::Copy => a[i],
            Op::Scale => (q * f(a[i])).to_bits(),
            Op::Add => (f(a[i]) + f(b[i])).to_bits(),
            Op::Triad => (f(a[i]) + q * f(b[i])).to_bits(),
            Op::Add3 => (f(a[i]) + f(b[i]) + f(c[i])).to_bits(),
        })
        .collect()
}

#[test]
fn kernels_match_the_reference_for_every_length_and_offset() {
    let q = 3.000_000_000_000_4_f64;
    let mut checked = 0;
    for k in available() {
        for &n in &LENGTHS {
            for &offset in &OFFSETS {
                // The sources sit at other offsets than dst, so loads are
                // also tested misaligned relative to the stores.
                let a = Aligned::new(n, (offset + 3) % 8, |i| double(1, i));
                let b = Aligned::new(n, (offset + 5) % 8, |i| double(2, i));
                let c = Aligned::new(n, (offset + 6) % 8, |i| double(5, i));
                let mut d = Aligned::new(n, offset, |_| 0x7FF0_DEAD_0000_0001);
                let uses = |used: bool| if used { n } else { 0 };
                let mut args = KernelArgs {
                    dst: d.slice_mut(uses(k.op.stores())),
                    src1: a.slice(uses(k.op.reads_src1())),
                    src2: b.slice(uses(k.op.reads_src2())),
                    src3: c.slice(uses(k.op.reads_src3())),
                    scalar: q,
                };
                let sum = k.run(&mut args);
                if k.op == Op::Read {
                    let expected = a.slice(n).iter().fold(0, |x, w| x ^ w);
                    assert_eq!(sum, expected, "{} n={n} offset={offset}", k.name);
                } else {
                    let expected = reference(k.op, [a.slice(n), b.slice(n), c.slice(n)], q, n);
                    let got = d.slice(n);
                    if let Some(i) = (0..n).find(|&i| got[i] != expected[i]) {
                        panic!(
                            "{} n={n} offset={offset}: element {i} is {:#x}, expected {:#x}",
                            k.name, got[i], expected[i]
                        );
                    }
                    assert_eq!(sum, edge_checksum(&expected), "{}", k.name);
                }
                assert!(
                    d.guards_intact(n),
                    "{} n={n} offset={offset} wrote outside dst",
                    k.name
                );
                assert!(a.guards_intact(n) && b.guards_intact(n) && c.guards_intact(n));
                checked += 1;
            }
        }
    }
    assert!(checked >= Op::ALL.len() * LENGTHS.len() * OFFSETS.len());
}

#[test]
fn kernels_nontemporal_write_what_regular_ones_do() {
    let n = 10_000 + 13;
    let a = Aligned::new(n, 0, |i| double(3, i));
    let b = Aligned::new(n, 0, |i| double(4, i));
    let c = Aligned::new(n, 0, |i| double(6, i));
    let mut pairs = 0;
    for nt in available().filter(|k| k.store == Store::NonTemporal) {
        let regular = KERNELS
            .iter()
            .find(|k| (k.op, k.isa, k.store) == (nt.op, nt.isa, Store::Regular))
            .expect("every non-temporal kernel has a regular twin");
        let run = |k: &KernelSpec| {
            let mut d = Aligned::new(n, 1, |_| 0);
            let sum = k.run(&mut KernelArgs {
                dst: d.slice_mut(n),
                src1: a.slice(if nt.op == Op::Write { 0 } else { n }),
                src2: b.slice(if nt.op.reads_src2() { n } else { 0 }),
                src3: c.slice(if nt.op.reads_src3() { n } else { 0 }),
                scalar: -1.25,
            });
            (sum, d.slice(n).to_vec())
        };
        assert!(
            run(nt) == run(regular),
            "{} differs from {}",
            nt.name,
            regular.name
        );
        pairs += 1;
    }
    if Isa::Avx2.is_available() {
        assert!(pairs >= 5);
    }
}

#[test]
fn kernels_reject_mismatched_lengths_with_a_clear_message() {
    let k = find("triad_portable").unwrap();
    let (a, b) = (vec![0u64; 8], vec![0u64; 7]);
    let mut d = vec![0u64; 8];
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        k.run(&mut KernelArgs {
            dst: &mut d,
            src1: &a,
            src2: &b,
            src3: &[],
            scalar: 1.0,
        })
    }))
    .unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("triad_portable") && msg.contains("src2 has 7"),
        "{msg}"
    );
}

#[test]
fn kernels_unavailable_isa_panics_instead_of_faulting() {
    let Some(k) = KERNELS.iter().find(|k| !k.is_available()) else {
        return;
    };
    let r = std::panic::catch_unwind(|| {
        k.run(&mut KernelArgs {
            dst: &mut [],
            src1: &[],
            src2: &[],
            src3: &[],
            scalar: 0.0,
        })
    });
    assert!(r.is_err(), "{} ran without its ISA", k.name);
}

#[test]
fn kernels_op_and_enum_names_round_trip() {
    for op in Op::ALL {
        assert_eq!(op.to_string().parse::<Op>(), Ok(op));
        assert_eq!(serde_json::to_string(&op).unwrap(), format!("\"{op}\""));
    }
    for isa in Isa::ALL {
        assert_eq!(isa.to_string().parse::<Isa>(), Ok(isa));
        assert_eq!(serde_json::to_string(&isa).unwrap(), format!("\"{isa}\""));
    }
    for store in Store::ALL {
        assert_eq!(store.to_string().parse::<Store>(), Ok(store));
        assert_eq!(
            serde_json::to_string(&store).unwrap(),
            format!("\"{store}\"")
        );
    }
    assert_eq!("nt".parse::<Store>(), Ok(Store::NonTemporal));
    let err = "trid".parse::<Op>().unwrap_err().to_string();
    assert!(err.contains("'trid'"), "{err}");
    assert!(
        err.contains("read, write, copy, scale, add, triad"),
        "{err}"
    );
}

#[test]
fn kernels_op_metadata_follows_stream() {
    let bytes: Vec<u64> = Op::ALL
        .iter()
        .map(|op| op.stream_bytes_per_element())
        .collect();
    assert_eq!(bytes, [8, 8, 16, 16, 24, 24, 32]);
    let arrays: Vec<usize> = Op::ALL.iter().map(|op| op.arrays()).collect();
    assert_eq!(arrays, [1, 1, 2, 2, 3, 3, 4]);
    assert!(Op::ALL.iter().all(|&op| op.stores() == (op != Op::Read)));
    assert_eq!(find("triad_portable").unwrap().stream_bytes(1000), 24_000);
}

/// CPU time this thread has used: unlike wall time, it does not count the
/// moments a busy neighbour holds the core, which on a shared two-core machine
/// would swamp the factor of eight checked below.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill in.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU time for `reps` back-to-back runs, each storing a different word.
fn time_reps(k: &KernelSpec, dst: &mut [u64], reps: u32, first: f64) -> Duration {
    let t0 = thread_cpu_time();
    for r in 0..reps {
        k.run(&mut KernelArgs {
            dst,
            src1: &[],
            src2: &[],
            src3: &[],
            scalar: first + f64::from(r),
        });
    }
    thread_cpu_time() - t0
}

/// Guards the measured pitfall: a store loop the optimiser can see repeated
/// with the same value "got faster" with every repetition. Eight repetitions
/// must take about eight times as long as one; bounds are wide for a shared
/// two-core machine, yet far from the ~1x a removed loop gives.
#[test]
fn kernels_write_time_grows_with_repetitions() {
    // Optimised, the loop is memory-bound and 64 MiB outgrows the caches, so
    // every pass costs the same; unoptimised it is compute-bound and a
    // smaller array keeps the test quick.
    let bytes = if cfg!(debug_assertions) {
        16 << 20
    } else {
        64 << 20
    };
    let n = bytes / size_of::<u64>();
    let mut d = Aligned::new(n, 0, |_| 1);
    let names = ["write_portable", "write_avx512", "write_avx2"];
    for k in names
        .iter()
        .filter_map(|name| find(name))
        .filter(|k| k.is_available())
    {
        let dst = d.slice_mut(n);
        // Interleaved, best of several, each count right after an untimed
        // pass: both then start from the same cache state, and a neighbour
        // competing for memory slows both alike instead of one of them.
        let (mut one, mut eight) = (Duration::MAX, Duration::MAX);
        for trial in 0..7 {
            let value = 1.5 + 100.0 * f64::from(trial);
            time_reps(k, dst, 1, value);
            one = one.min(time_reps(k, dst, 1, value + 10.0));
            eight = eight.min(time_reps(k, dst, 8, value + 20.0));
        }
        let ratio = eight.as_secs_f64() / one.as_secs_f64();
        assert!(
            (4.0..=16.0).contains(&ratio),
            "{}: 1 rep {one:?}, 8 reps {eight:?}",
            k.name
        );
    }
}

/// Single-thread figures for a report, not a check:
/// `cargo test --release --lib kernels_report -- --ignored --nocapture`.
#[test]
#[ignore]
fn kernels_report_bandwidth_and_latency() {
    use crate::memory::{Buffer, BufferOptions};
    let bytes = 256 << 20;
    // Three arrays of 256 MiB / 3 would shrink with the op; the working set
    // is 256 MiB for every op, split over the arrays it touches.
    let mut buf = Buffer::new(&BufferOptions::new(bytes)).unwrap();
    println!("pages: {}", buf.page_kind());
    let words = buf.as_mut_slice::<u64>();
    for (i, w) in words.iter_mut().enumerate() {
        *w = double(9, i);
    }
    println!("kernel                 GB/s (best of 5, 256 MiB working set)");
    for k in available() {
        let per = words.len() / k.op.arrays() / 512 * 512;
        let (dst, rest) = words.split_at_mut(if k.op.stores() { per } else { 0 });
        let (src1, rest) = rest.split_at(if k.op.reads_src1() { per } else { 0 });
        let (src2, rest) = rest.split_at(if k.op.reads_src2() { per } else { 0 });
        let src3 = &rest[..if k.op.reads_src3() { per } else { 0 }];
        let mut args = KernelArgs {
            dst,
            src1,
            src2,
            src3,
            scalar: 1.0,
        };
        k.run(&mut args);
        let mut best = f64::INFINITY;
        for r in 0..5 {
            args.scalar = 1.0 + f64::from(r) * 1e-3;
            let t0 = Instant::now();
            k.run(&mut args);
            best = best.min(t0.elapsed().as_secs_f64());
        }
        println!(
            "{:22} {:6.1}",
            k.name,
            k.stream_bytes(per) as f64 / best / 1e9
        );
    }
    drop(buf);
    for size in [
        16 << 10,
        512 << 10,
        1 << 20,
        2 << 20,
        4 << 20,
        8 << 20,
        32 << 20,
        256 << 20,
    ] {
        let mut buf = Buffer::new(&BufferOptions::new(size)).unwrap();
        let mut chain =
            latency::Chain::build(buf.as_mut_slice::<u64>(), latency::LINE_BYTES, 1).unwrap();
        chain.chase_ns_per_load(chain.lines() as u64 * 2);
        let loads = (chain.lines() as u64 * 4).clamp(1 << 20, 1 << 22);
        let ns = (0..5)
            .map(|_| chain.chase_ns_per_load(loads))
            .fold(f64::INFINITY, f64::min);
        println!(
            "latency {:>8} KiB {:>5} {ns:6.2} ns/load",
            size >> 10,
            buf.page_kind()
        );
    }
}

#[test]
fn kernels_name_their_accesses_by_op_and_store_kind() {
    let access = |name: &str| find(name).map(KernelSpec::access);
    assert_eq!(access("read_portable"), Some("regular loads"));
    assert_eq!(access("copy_portable"), Some("regular stores"));
    assert_eq!(access("read_s8_portable"), Some("regular loads, 8 streams"));
    if cfg!(target_arch = "x86_64") {
        assert_eq!(access("read_nt_avx2"), Some("non-temporal loads"));
        assert_eq!(access("write_nt_avx512"), Some("non-temporal stores"));
        assert_eq!(
            access("copy_s4_nt_avx2"),
            Some("non-temporal stores, 4 streams")
        );
    }
}

#[test]
fn kernels_multi_stream_reads_cover_every_word_once() {
    // Lengths around whole turns of the loop (8 streams of a line each) and
    // between them, from aligned and misaligned starts: XOR of distinct
    // words tells a word skipped or read twice.
    let lengths = [0, 8, 63, 64, 65, 127, 128, 129, 512 + 7, 4096 + 61];
    let mut checked = 0;
    for k in available().filter(|k| k.streams > 1 && k.op == Op::Read) {
        for n in lengths {
            for offset in OFFSETS {
                let a = Aligned::new(n, offset, |i| double(7, i));
                let expected = a.slice(n).iter().fold(0, |x, w| x ^ w);
                let sum = k.run(&mut KernelArgs {
                    dst: &mut [],
                    src1: a.slice(n),
                    src2: &[],
                    src3: &[],
                    scalar: 0.0,
                });
                assert_eq!(sum, expected, "{} n={n} offset={offset}", k.name);
                checked += 1;
            }
        }
    }
    assert!(
        checked >= lengths.len() * OFFSETS.len(),
        "no multi-stream read ran"
    );
}

#[test]
fn kernels_multi_stream_copies_copy_every_word_once_and_nothing_else() {
    // Around whole turns of the loop (4 streams of a line each), with the
    // source and the destination at different offsets from a line.
    let lengths = [0, 3, 31, 32, 33, 63, 64, 65, 256 + 9, 4096 + 61];
    let streamed: Vec<_> = available()
        .filter(|k| k.streams > 1 && k.op != Op::Read)
        .collect();
    for k in &streamed {
        assert_eq!(k.op, Op::Copy, "{}", k.name);
        assert_eq!(k.streams, COPY_STREAMS, "{}", k.name);
        for n in lengths {
            for offset in OFFSETS {
                let a = Aligned::new(n, (offset + 3) % 8, |i| double(9, i));
                let mut d = Aligned::new(n, offset, |_| 0);
                k.run(&mut KernelArgs {
                    dst: d.slice_mut(n),
                    src1: a.slice(n),
                    src2: &[],
                    src3: &[],
                    scalar: 0.0,
                });
                assert_eq!(d.slice(n), a.slice(n), "{} n={n} offset={offset}", k.name);
                assert!(d.guards_intact(n), "{} n={n} offset={offset}", k.name);
            }
        }
    }
    // Every x86-64 CPU with AVX2 has one; the portable build has none.
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        assert!(streamed.iter().any(|k| k.name == "copy_s4_nt_avx2"));
    }
}
