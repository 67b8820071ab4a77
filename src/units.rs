//! Sizes, durations, run counts and peak bandwidths as people type them,
//! checked once for every option that takes one: a value that cannot be
//! measured as written (a fraction of a byte, a time limit of 1e30 s, NaN,
//! 2^64 tries) is refused with the accepted range instead of being rounded
//! or overflowing later. And sizes as people read them ([`bytes`]).
//!
//! Errors are plain messages: the command line turns them into usage
//! errors, other callers into whatever fits.

use std::time::Duration;

/// Largest size accepted anywhere: 64 PiB, far above any machine, small
/// enough that a few multiples of it still fit in a `usize`.
pub(crate) const MAX_SIZE: u64 = 1 << 56;

/// Longest time option accepted: one week. Longer runs are not what a time
/// limit is for, and anything up to this converts to a `Duration` exactly.
pub(crate) const MAX_SECONDS: f64 = 7.0 * 86_400.0;

/// Most timed runs per measurement: each keeps its samples in memory and
/// takes at least tens of milliseconds, so more is a typo, not a plan.
pub(crate) const MAX_TRIES: usize = 1000;

/// A count of timed runs from 1 to [`MAX_TRIES`]; `what` names one run.
pub(crate) fn tries(n: usize, flag: &str, what: &str) -> Result<(), String> {
    if n == 0 {
        return Err(format!("{flag} 0: at least one {what} is needed"));
    }
    if n > MAX_TRIES {
        return Err(format!(
            "{flag} {n}: give 1 to {MAX_TRIES} timed runs per measurement"
        ));
    }
    Ok(())
}

/// Largest peak bandwidth accepted, MB/s: 1 PB/s, far above any memory or
/// link, so that measured / peak stays a finite ratio.
pub(crate) const MAX_PEAK_MB_S: f64 = 1e9;

/// A peak bandwidth typed by the user (--peak, --phi), MB/s: from 1 to
/// [`MAX_PEAK_MB_S`].
pub(crate) fn peak(p: f64, flag: &str) -> Result<(), String> {
    if p.is_finite() && (1.0..=MAX_PEAK_MB_S).contains(&p) {
        return Ok(());
    }
    // 1e-300 as written, not as 300 zeros.
    let shown = if p != 0.0 && p.is_finite() && !(1e-6..1e15).contains(&p.abs()) {
        format!("{p:e}")
    } else {
        p.to_string()
    };
    Err(format!(
        "{flag} {shown}: give MB/s from 1 to 1000000000 (1 PB/s)"
    ))
}

/// Sizes as people write them: `4096`, `64K`, `64KiB`, `2M`, `1.5G`
/// (binary multiples), a whole number of bytes from 1 byte to under 64
/// PiB.
/// The error is the reason only, without the flag.
pub(crate) fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        other => {
            return Err(format!(
                "'{text}': unknown unit '{other}' (use K, M, G, T or P)"
            ));
        }
    };
    let not_a_size = || format!("'{text}' is not a size (e.g. 4096, 64K, 256M, 1.5G)");
    let out_of_range = || format!("'{text}' is out of range (1 byte to under 64 PiB)");
    let bytes = if num.contains('.') {
        let value: f64 = num.parse().map_err(|_| not_a_size())?;
        let bytes = value * mult as f64;
        if !bytes.is_finite() || bytes >= MAX_SIZE as f64 {
            return Err(out_of_range());
        }
        // A decimal fraction times a power of two is exact in f64 whenever
        // the result is whole, so this only refuses true fractions.
        if bytes.fract() != 0.0 {
            return Err(format!(
                "'{text}' is {bytes} bytes, not a whole number of bytes (write e.g. 1536 or 1.5K)"
            ));
        }
        bytes as u64
    } else {
        // Integers exactly, however many digits: no rounding through f64.
        let value: u64 = match num.parse() {
            Ok(v) => v,
            Err(_) if !num.is_empty() => return Err(out_of_range()),
            Err(_) => return Err(not_a_size()),
        };
        value
            .checked_mul(mult)
            .filter(|&b| b < MAX_SIZE)
            .ok_or_else(out_of_range)?
    };
    if bytes == 0 {
        return Err(out_of_range());
    }
    usize::try_from(bytes).map_err(|_| out_of_range())
}

/// A size of at least `min` bytes; the error names the minimum.
pub(crate) fn size_at_least(text: &str, min: usize) -> Result<usize, String> {
    let bytes = parse_size(text)?;
    if bytes < min {
        return Err(format!(
            "'{text}' is too small: at least {} is needed",
            short_size(min as u64)
        ));
    }
    Ok(bytes)
}

/// A size as these options take it: 2097152 as 2M, 1073741824 as 1G,
/// 1536 as 1536 (no unit fits exactly).
pub(crate) fn short_size(b: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if b >= 1 << shift && b.is_multiple_of(1 << shift) {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

/// A decimal number of `unit`s (seconds, milliseconds) from `lo` to `hi`:
/// finite, in range, never NaN. The error says the range.
pub(crate) fn time(text: &str, lo: f64, hi: f64, unit: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{text}' is not a number of {unit} from {} to {}",
            plain(lo),
            plain(hi)
        )),
    }
}

/// Seconds for a time limit: 0 (no limit), or 1 ms up to [`MAX_SECONDS`].
/// A limit under 1 ms would stop before the first measurement, and one
/// under f64's range (1e-400) would read as 0, no limit at all.
pub(crate) fn time_limit(text: &str) -> Result<f64, String> {
    let why = |e: String| format!("{e} (0 = no limit, else at least 0.001)");
    let v = time(text, 0.0, MAX_SECONDS, "seconds").map_err(why)?;
    let zero_written = text
        .trim()
        .trim_start_matches(['+', '-'])
        .split(['e', 'E'])
        .next()
        .is_some_and(|m| m.chars().all(|c| c == '0' || c == '.'));
    if (v == 0.0 && !zero_written) || (v > 0.0 && v < 0.001) {
        return Err(why(format!(
            "'{text}' is not a number of seconds from 0 to {}",
            plain(MAX_SECONDS)
        )));
    }
    Ok(v)
}

/// A checked number of seconds as a `Duration`, `None` for 0 (no limit).
/// Never panics: out-of-range input (only reachable by skipping the
/// parsers above) saturates instead of overflowing.
pub(crate) fn limit(secs: f64) -> Option<Duration> {
    (secs > 0.0).then(|| duration(secs))
}

/// Seconds as a `Duration`, saturating: NaN and negatives are zero, values
/// past `Duration::MAX` are `Duration::MAX`.
pub(crate) fn duration(secs: f64) -> Duration {
    if secs.is_nan() || secs <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
}

/// Bytes in binary units with one decimal: `62.8 GiB`, `48 KiB`, `1 GiB`.
/// A figure that rounds to a whole number is written without the decimal
/// (`8 GiB` for 8.04 GiB), so a table never shows `8.0 GiB` beside `8 GiB`.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    let one_decimal = format!("{v:.1}");
    match one_decimal.strip_suffix(".0") {
        _ if unit == 0 => format!("{v:.0} {}", UNITS[unit]),
        Some(whole) => format!("{whole} {}", UNITS[unit]),
        None => format!("{one_decimal} {}", UNITS[unit]),
    }
}

/// A bound as written in help: 604800, not 604800.0.
fn plain(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn binary_units() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(48 << 10), "48 KiB");
        assert_eq!(bytes(64 << 20), "64 MiB");
        assert_eq!(bytes(1536 << 20), "1.5 GiB");
        assert_eq!(bytes(65_854_000 * 1024), "62.8 GiB");
        // Never "8.0 GiB" beside "8 GiB".
        assert_eq!(bytes((8 << 30) + (40 << 20)), "8 GiB");
        assert_eq!(bytes(8 << 30), "8 GiB");
        assert_eq!(bytes(1 << 60), "1 EiB");
        assert_eq!(bytes(u64::MAX), "16 EiB");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("64KiB"), Ok(64 << 10));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size(".5K"), Ok(512));
        assert!(parse_size("12Q").unwrap_err().contains("unknown unit"));
        assert!(parse_size("").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("1e99G").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert!(parse_size("99999999999999999999999").is_err());
        assert!(parse_size(".").is_err());
        assert!(parse_size("1.2.3K").is_err());
        // The largest size, named in the range error, can be written.
        assert_eq!(parse_size("63P"), Ok(63 << 50));
        assert!(parse_size("64P").unwrap_err().contains("under 64 PiB"));
    }

    #[test]
    fn fractions_of_a_byte_are_refused() {
        let e = parse_size("1.5").unwrap_err();
        assert!(e.contains("not a whole number of bytes"), "{e}");
        assert!(parse_size("0.1K").is_err());
        assert_eq!(parse_size("0.25K"), Ok(256));
    }

    #[test]
    fn a_minimum_is_named() {
        let e = size_at_least("64K", 1 << 20).unwrap_err();
        assert_eq!(e, "'64K' is too small: at least 1M is needed");
        assert_eq!(short_size(1536), "1536");
        assert_eq!(short_size(3 << 30), "3G");
        assert_eq!(size_at_least("1M", 1 << 20), Ok(1 << 20));
    }

    #[test]
    fn times_are_finite_and_in_range() {
        assert_eq!(time_limit("0"), Ok(0.0));
        assert_eq!(time_limit("2.5"), Ok(2.5));
        assert_eq!(time_limit("0.0"), Ok(0.0));
        assert_eq!(time_limit("0e5"), Ok(0.0));
        assert_eq!(time_limit("0.001"), Ok(0.001));
        for bad in [
            "1e30", "NaN", "inf", "-inf", "-1", "", "x", "604801", "1e-400", "1e-9", "0.0009",
        ] {
            let e = time_limit(bad).unwrap_err();
            assert!(e.contains("from 0 to 604800"), "{bad}: {e}");
        }
        assert_eq!(
            time("0", 1.0, 1000.0, "milliseconds").unwrap_err(),
            "'0' is not a number of milliseconds from 1 to 1000"
        );
    }

    #[test]
    fn peaks_are_from_one_mb_s_to_one_pb_s() {
        assert!(peak(17066.0, "--peak").is_ok());
        for (p, shown) in [
            (1e-300, "1e-300"),
            (-1.0, "-1"),
            (f64::NAN, "NaN"),
            (2e9, "2000000000"),
            (1e300, "1e300"),
        ] {
            let e = peak(p, "--peak").unwrap_err();
            assert_eq!(
                e,
                format!("--peak {shown}: give MB/s from 1 to 1000000000 (1 PB/s)")
            );
        }
    }

    #[test]
    fn durations_saturate() {
        assert_eq!(duration(f64::NAN), Duration::ZERO);
        assert_eq!(duration(-1.0), Duration::ZERO);
        assert_eq!(duration(1e30), Duration::MAX);
        assert_eq!(duration(f64::INFINITY), Duration::MAX);
        assert_eq!(limit(0.0), None);
        assert_eq!(limit(1.5), Some(Duration::from_millis(1500)));
    }

    proptest! {
        #[test]
        fn any_text_is_a_size_or_an_error(text in "\\PC{0,24}") {
            if let Ok(b) = parse_size(&text) {
                prop_assert!(b >= 1 && (b as u64) < MAX_SIZE);
            }
        }

        #[test]
        fn size_like_text_is_a_size_or_an_error(
            text in "[0-9]{0,22}(\\.[0-9]{0,20})?[ ]?(|b|k|K|KiB|m|M|MB|g|G|t|T|TiB|x)"
        ) {
            if let Ok(b) = parse_size(&text) {
                prop_assert!(b >= 1 && (b as u64) < MAX_SIZE);
            }
        }

        #[test]
        fn whole_sizes_round_trip(n in 1u64..(1 << 30), unit in 0usize..4) {
            let (suffix, mult) = [("", 1u64), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)][unit];
            let text = format!("{n}{suffix}");
            match n.checked_mul(mult).filter(|&b| b < MAX_SIZE) {
                Some(b) => prop_assert_eq!(parse_size(&text), Ok(b as usize)),
                None => prop_assert!(parse_size(&text).is_err()),
            }
        }

        #[test]
        fn any_text_is_a_time_or_an_error(text in "\\PC{0,24}") {
            if let Ok(v) = time_limit(&text) {
                prop_assert!((0.0..=MAX_SECONDS).contains(&v));
                let _ = limit(v);
            }
        }

        #[test]
        fn any_float_text_is_a_time_or_an_error(v in proptest::num::f64::ANY) {
            if let Ok(s) = time_limit(&v.to_string()) {
                prop_assert!(s.is_finite());
            }
            let _ = duration(v);
            let _ = limit(v);
        }
    }
}
