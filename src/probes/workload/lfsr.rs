//! The 32-bit Galois LFSR that drives perf's random walk, and the
//! stateless mix that gives each task and area its starting value.
//!
//! Each step shifts right by one; when the bit shifted out is 1 the tap mask
//! (bits 1, 5, 6 and 31) is XORed in. Zero is a fixed point, as in perf.

/// Bits 1, 5, 6 and 31.
pub(crate) const TAPS: u32 = (1 << 1) | (1 << 5) | (1 << 6) | (1 << 31);

/// One step of the register.
#[inline(always)]
pub(crate) fn lfsr_32(lfsr: u32) -> u32 {
    (lfsr >> 1) ^ (0u32.wrapping_sub(lfsr & 1) & TAPS)
}

/// A stateless mix (splitmix64), for per-task starting values.
pub(crate) fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// perf's per-task `val`, which is `rand()`: 31 bits.
pub(crate) fn task_val(task: usize) -> u64 {
    mix(task as u64 + 1) & 0x7FFF_FFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_are_bits_1_5_6_31() {
        assert_eq!(TAPS, 0x8000_0062);
    }

    #[test]
    fn first_steps_worked_by_hand() {
        // From 1: the low bit is set, so shift (0) and XOR the taps.
        let mut x = 1u32;
        let expected = [
            0x8000_0062,
            0x4000_0031,
            0xA000_007A,
            0x5000_003D,
            0xA800_007C,
        ];
        for e in expected {
            x = lfsr_32(x);
            assert_eq!(x, e, "{x:#x}");
        }
        // Even values only shift; zero stays zero.
        assert_eq!(lfsr_32(2), 1);
        assert_eq!(lfsr_32(0), 0);
        assert_eq!(lfsr_32(0xFFFF_FFFF), 0x7FFF_FFFF ^ TAPS);
    }

    #[test]
    fn does_not_cycle_quickly() {
        // A walk over a buffer must not revisit its start within many steps.
        let start = 12345u32;
        let mut x = start;
        for _ in 0..1_000_000 {
            x = lfsr_32(x);
            assert_ne!(x, start);
            assert_ne!(x, 0);
        }
    }

    #[test]
    fn task_values_are_31_bit_and_distinct() {
        let v: Vec<u64> = (0..64).map(task_val).collect();
        assert!(v.iter().all(|&x| x < 1 << 31));
        let mut d = v.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), v.len());
    }
}
