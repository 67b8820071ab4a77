//! The table of kernels and run-time selection among them.
//!
//! Every kernel is listed for every instruction set this build targets, so a
//! result can name exactly which loop produced it; selection happens when the
//! program runs, from the CPU's features, never from the build machine's.
//! Read has no stores; its non-temporal entry is the one with streaming
//! loads. Portable and NEON kernels have no non-temporal variant: stable
//! Rust has no portable streaming load or store, and AArch64's `ldnp`/`stnp`
//! have no intrinsic, so on such machines `best(op, Store::NonTemporal)` is
//! `None` rather than a regular kernel under a misleading name.

use super::portable;
use super::{Isa, KernelSpec, Op, Store};

#[cfg(target_arch = "aarch64")]
use super::neon;
#[cfg(target_arch = "x86_64")]
use super::x86::{avx2, avx512};

/// `kernel!(isa_module, Isa, op_fn, Op)` for a kernel with one store kind;
/// add `regular` or `nt` to pick the variant of a generic one.
macro_rules! kernel {
    ($isa:ident, $Isa:ident, $op:ident, $Op:ident) => {
        KernelSpec {
            name: concat!(stringify!($op), "_", stringify!($isa)),
            op: Op::$Op,
            isa: Isa::$Isa,
            store: Store::Regular,
            streams: 1,
            func: $isa::$op,
        }
    };
    ($isa:ident, $Isa:ident, $op:ident, $Op:ident, regular) => {
        KernelSpec {
            name: concat!(stringify!($op), "_", stringify!($isa)),
            op: Op::$Op,
            isa: Isa::$Isa,
            store: Store::Regular,
            streams: 1,
            func: $isa::$op::<false>,
        }
    };
    ($isa:ident, $Isa:ident, $op:ident, $Op:ident, nt) => {
        KernelSpec {
            name: concat!(stringify!($op), "_nt_", stringify!($isa)),
            op: Op::$Op,
            isa: Isa::$Isa,
            store: Store::NonTemporal,
            streams: 1,
            func: $isa::$op::<true>,
        }
    };
}

/// `streams!(isa_module, Isa)` for the multi-stream read of one store kind
/// (`regular` or `nt`; `portable` has one kind and no argument).
macro_rules! streams {
    ($isa:ident, $Isa:ident) => {
        streams!(@ $isa, $Isa, "read_s8_", Regular, $isa::read_streams)
    };
    ($isa:ident, $Isa:ident, regular) => {
        streams!(@ $isa, $Isa, "read_s8_", Regular, $isa::read_streams::<false>)
    };
    ($isa:ident, $Isa:ident, nt) => {
        streams!(@ $isa, $Isa, "read_s8_nt_", NonTemporal, $isa::read_streams::<true>)
    };
    (@ $isa:ident, $Isa:ident, $prefix:literal, $Store:ident, $func:expr) => {
        KernelSpec {
            name: concat!($prefix, stringify!($isa)),
            op: Op::Read,
            isa: Isa::$Isa,
            store: Store::$Store,
            streams: super::STREAMS,
            func: $func,
        }
    };
}

/// `copy_streams!(isa_module, Isa)` for the multi-stream streaming copy
/// (x86 only: the portable and NEON kernels have no streaming stores).
#[cfg(target_arch = "x86_64")]
macro_rules! copy_streams {
    ($isa:ident, $Isa:ident) => {
        KernelSpec {
            name: concat!("copy_s4_nt_", stringify!($isa)),
            op: Op::Copy,
            isa: Isa::$Isa,
            store: Store::NonTemporal,
            streams: super::COPY_STREAMS,
            func: $isa::copy_streams::<true>,
        }
    };
}

/// Every kernel this build has, whether or not this CPU can run it.
pub(crate) static KERNELS: &[KernelSpec] = &[
    kernel!(portable, Portable, read, Read),
    kernel!(portable, Portable, write, Write),
    kernel!(portable, Portable, copy, Copy),
    kernel!(portable, Portable, scale, Scale),
    kernel!(portable, Portable, add, Add),
    kernel!(portable, Portable, triad, Triad),
    kernel!(portable, Portable, add3, Add3),
    streams!(portable, Portable),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, read, Read, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, read, Read, nt),
    #[cfg(target_arch = "x86_64")]
    streams!(avx2, Avx2, regular),
    #[cfg(target_arch = "x86_64")]
    streams!(avx2, Avx2, nt),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, write, Write, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, write, Write, nt),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, copy, Copy, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, copy, Copy, nt),
    #[cfg(target_arch = "x86_64")]
    copy_streams!(avx2, Avx2),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, scale, Scale, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, scale, Scale, nt),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, add, Add, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, add, Add, nt),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, triad, Triad, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, triad, Triad, nt),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, add3, Add3, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx2, Avx2, add3, Add3, nt),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, read, Read, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, read, Read, nt),
    #[cfg(target_arch = "x86_64")]
    streams!(avx512, Avx512, regular),
    #[cfg(target_arch = "x86_64")]
    streams!(avx512, Avx512, nt),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, write, Write, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, write, Write, nt),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, copy, Copy, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, copy, Copy, nt),
    #[cfg(target_arch = "x86_64")]
    copy_streams!(avx512, Avx512),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, scale, Scale, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, scale, Scale, nt),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, add, Add, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, add, Add, nt),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, triad, Triad, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, triad, Triad, nt),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, add3, Add3, regular),
    #[cfg(target_arch = "x86_64")]
    kernel!(avx512, Avx512, add3, Add3, nt),
    #[cfg(target_arch = "aarch64")]
    kernel!(neon, Neon, read, Read),
    #[cfg(target_arch = "aarch64")]
    kernel!(neon, Neon, write, Write),
    #[cfg(target_arch = "aarch64")]
    kernel!(neon, Neon, copy, Copy),
    #[cfg(target_arch = "aarch64")]
    kernel!(neon, Neon, scale, Scale),
    #[cfg(target_arch = "aarch64")]
    kernel!(neon, Neon, add, Add),
    #[cfg(target_arch = "aarch64")]
    kernel!(neon, Neon, triad, Triad),
    #[cfg(target_arch = "aarch64")]
    kernel!(neon, Neon, add3, Add3),
];

/// The kernels this CPU can run.
pub(crate) fn available() -> impl Iterator<Item = &'static KernelSpec> {
    KERNELS.iter().filter(|k| k.is_available())
}

/// The kernel with exactly this name, available or not.
pub(crate) fn find(name: &str) -> Option<&'static KernelSpec> {
    KERNELS.iter().find(|k| k.name == name)
}

/// The widest available kernel for `op` with `store` (AVX-512 > AVX2 > NEON >
/// portable). `None` when nothing fits: never a regular kernel standing in
/// for a non-temporal one. One-pass kernels only: this is what a probe uses
/// unless told otherwise.
pub(crate) fn best(op: Op, store: Store) -> Option<&'static KernelSpec> {
    available()
        .filter(|k| k.op == op && k.store == store && k.streams == 1)
        .max_by_key(|k| k.isa.rank())
}

/// The widest multi-stream kernel of `op` with `store` this CPU runs, where
/// there is one (reads, and copies with streaming stores).
pub(crate) fn best_streams(op: Op, store: Store) -> Option<&'static KernelSpec> {
    available()
        .filter(|k| k.op == op && k.store == store && k.streams > 1)
        .max_by_key(|k| k.isa.rank())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_follow_the_pattern() {
        let mut seen = HashSet::new();
        for k in KERNELS {
            assert!(seen.insert(k.name), "duplicate kernel name {}", k.name);
            let nt = if k.store == Store::NonTemporal {
                "_nt"
            } else {
                ""
            };
            let streams = if k.streams > 1 {
                format!("_s{}", k.streams)
            } else {
                String::new()
            };
            assert_eq!(k.name, format!("{}{streams}{nt}_{}", k.op, k.isa));
        }
    }

    #[test]
    fn one_entry_per_op_isa_store_and_stream_count() {
        let combos: HashSet<_> = KERNELS
            .iter()
            .map(|k| (k.op, k.isa, k.store, k.streams))
            .collect();
        assert_eq!(combos.len(), KERNELS.len());
        // Only reads and streaming copies come in several streams, and each
        // one-pass kernel has one per ISA and store kind at most.
        assert!(KERNELS.iter().all(|k| k.streams == 1
            || k.op == Op::Read
            || (k.op == Op::Copy && k.store == Store::NonTemporal)));
        let combos: HashSet<_> = KERNELS
            .iter()
            .filter(|k| k.streams == 1)
            .map(|k| (k.op, k.isa, k.store))
            .collect();
        for op in Op::ALL {
            assert!(combos.contains(&(op, Isa::Portable, Store::Regular)));
            assert!(!combos.contains(&(op, Isa::Portable, Store::NonTemporal)));
        }
        assert!(
            KERNELS
                .iter()
                .filter(|k| k.store == Store::NonTemporal)
                .all(|k| matches!(k.isa, Isa::Avx2 | Isa::Avx512))
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_op_has_both_access_kinds_on_each_x86_isa() {
        for isa in [Isa::Avx2, Isa::Avx512] {
            for op in Op::ALL {
                for store in Store::ALL {
                    let found = KERNELS
                        .iter()
                        .any(|k| k.op == op && k.isa == isa && k.store == store);
                    assert!(found, "{op} {isa} {store}");
                }
            }
        }
    }

    #[test]
    fn find_is_exact() {
        let k = find("copy_nt_avx2");
        if cfg!(target_arch = "x86_64") {
            let k = k.expect("copy_nt_avx2 is registered");
            assert_eq!(
                (k.op, k.isa, k.store),
                (Op::Copy, Isa::Avx2, Store::NonTemporal)
            );
        }
        assert_eq!(find("triad_portable").map(|k| k.op), Some(Op::Triad));
        assert!(find("copy_nt").is_none());
        assert!(find("COPY_PORTABLE").is_none());
    }

    #[test]
    fn best_prefers_the_widest_available_isa() {
        for op in Op::ALL {
            let k = best(op, Store::Regular).expect("portable always fits");
            assert!(k.is_available());
            assert_eq!(k.op, op);
            assert!(
                available()
                    .filter(|o| o.op == op)
                    .all(|o| o.isa.rank() <= k.isa.rank())
            );
        }
        if Isa::Avx512.is_available() {
            assert_eq!(
                best(Op::Triad, Store::Regular).unwrap().name,
                "triad_avx512"
            );
            assert_eq!(
                best(Op::Copy, Store::NonTemporal).unwrap().name,
                "copy_nt_avx512"
            );
        } else if Isa::Avx2.is_available() {
            assert_eq!(best(Op::Triad, Store::Regular).unwrap().name, "triad_avx2");
        }
        let nt_isa = [Isa::Avx2, Isa::Avx512].into_iter().any(Isa::is_available);
        assert_eq!(best(Op::Write, Store::NonTemporal).is_some(), nt_isa);
        assert_eq!(best(Op::Read, Store::NonTemporal).is_some(), nt_isa);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_is_detected_on_this_kind_of_machine() {
        // Where the CPU reports the features, detection must agree, or every
        // figure would silently come from a narrower kernel.
        let detected = Isa::detected();
        assert_eq!(detected[0], Isa::Portable);
        assert_eq!(
            detected.contains(&Isa::Avx512),
            std::arch::is_x86_feature_detected!("avx512f")
        );
        assert!(!detected.contains(&Isa::Neon));
    }

    #[cfg(target_arch = "aarch64")]
    #[test]
    fn neon_is_detected_on_arm() {
        // Advanced SIMD is part of every AArch64 Linux CPU: without it the
        // figures would silently come from the portable kernels.
        let detected = Isa::detected();
        assert_eq!(detected, [Isa::Portable, Isa::Neon]);
    }
}
