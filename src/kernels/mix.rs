//! Read/write mixes: the traffic patterns peak injection bandwidth is
//! measured with, each one kernel operation, in the spirit of Intel MLC's
//! `-W` modes.
//!
//! | mix   | operation | reads            | writes | bytes per element |
//! |-------|-----------|------------------|--------|-------------------|
//! | read  | read      | 1 stream         | none   | 8                 |
//! | 3:1   | add3      | 3 streams        | 1      | 32                |
//! | 2:1   | add       | 2 streams        | 1      | 24                |
//! | 1:1   | copy      | 1 stream         | 1      | 16                |
//! | write | write     | none             | 1      | 8                 |
//! | triad | triad     | 2 streams        | 1      | 24 (`a = b + q*c`) |
//!
//! Streams are separate arrays walked in step, one 8-byte word each per
//! element. Bytes are counted the STREAM way: bytes read plus bytes
//! written, no write-allocate read a regular store causes, MB = 10^6 bytes.
//! So with regular stores the memory really moves one more read stream than
//! counted (a 1:1 copy moves 24 bytes per element, counted as 16), and
//! non-temporal stores, which skip that read, can show more for the same
//! mix. Every storing mix runs with both store kinds where the instruction
//! set has streaming stores.

use super::{Op, ParseError};
use std::fmt;
use std::str::FromStr;

/// A read/write mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Mix {
    /// All reads.
    Read,
    /// Three reads to one write.
    R3W1,
    /// Two reads to one write.
    R2W1,
    /// One read to one write.
    R1W1,
    /// All writes.
    Write,
    /// STREAM triad: two reads to one write, with a multiply and an add.
    Triad,
}

impl Mix {
    pub(crate) const ALL: [Mix; 6] = [
        Mix::Read,
        Mix::R3W1,
        Mix::R2W1,
        Mix::R1W1,
        Mix::Write,
        Mix::Triad,
    ];

    /// The kernel operation that makes this traffic.
    pub(crate) fn op(self) -> Op {
        match self {
            Mix::Read => Op::Read,
            Mix::R3W1 => Op::Add3,
            Mix::R2W1 => Op::Add,
            Mix::R1W1 => Op::Copy,
            Mix::Write => Op::Write,
            Mix::Triad => Op::Triad,
        }
    }

    /// What records and options call it: `read`, `3:1`, `2:1`, `1:1`,
    /// `write`, `triad`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mix::Read => "read",
            Mix::R3W1 => "3:1",
            Mix::R2W1 => "2:1",
            Mix::R1W1 => "1:1",
            Mix::Write => "write",
            Mix::Triad => "triad",
        }
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mix {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mix::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| ParseError::new("mix", s, Mix::ALL.map(Mix::name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_what_the_names_say() {
        for (mix, reads, writes) in [
            (Mix::Read, 1, 0),
            (Mix::R3W1, 3, 1),
            (Mix::R2W1, 2, 1),
            (Mix::R1W1, 1, 1),
            (Mix::Write, 0, 1),
            (Mix::Triad, 2, 1),
        ] {
            let op = mix.op();
            assert_eq!((op.read_streams(), op.write_streams()), (reads, writes));
            assert_eq!(
                op.stream_bytes_per_element(),
                8 * (reads + writes) as u64,
                "{mix}"
            );
            assert_eq!(mix.name().parse::<Mix>(), Ok(mix));
        }
        assert!(
            "4:1"
                .parse::<Mix>()
                .unwrap_err()
                .to_string()
                .contains("3:1")
        );
    }
}
