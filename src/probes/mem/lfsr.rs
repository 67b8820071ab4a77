//! The 32-bit Galois LFSR that drives perf's random walk.
//!
//! Each step shifts right by one; when the bit shifted out is 1 the tap mask
//! (bits 1, 5, 6 and 31) is XORed in. Zero is a fixed point, as in perf.

/// Bits 1, 5, 6 and 31.
pub const TAPS: u32 = (1 << 1) | (1 << 5) | (1 << 6) | (1 << 31);

/// One step of the register.
#[inline(always)]
pub fn lfsr_32(lfsr: u32) -> u32 {
    (lfsr >> 1) ^ (0u32.wrapping_sub(lfsr & 1) & TAPS)
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
}
