//! The option checks of [`crate::units`] as the command line reports them:
//! a value out of range is a usage error (exit 2).

pub(crate) use crate::units::{
    duration, limit, parse_size, short_size, size_at_least, time, time_limit,
};

/// A size as `--size` and the other size options take it: a number with a
/// unit (512K, 1M, 1.5G, or B for bytes). A bare number is refused rather
/// than guessed: sc-membench reads `-s 1024` as KiB, most tools as bytes,
/// and either guess would silently measure a buffer 1024 times off.
pub(crate) fn size_with_unit(text: &str) -> Result<String, String> {
    let t = text.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let mib = match t.parse::<u64>() {
            Ok(n) if n > 0 && n % 1024 == 0 => format!("{}M", n / 1024),
            _ => format!("{t}M"),
        };
        return Err(format!(
            "give a unit, e.g. {t}K or {mib}, or {t}B for bytes (a bare number is refused, not guessed as KiB or bytes)"
        ));
    }
    parse_size(t)?;
    Ok(text.to_string())
}

/// A count of timed runs from 1 to [`MAX_TRIES`](crate::units::MAX_TRIES); `what` names one run.
pub(crate) fn tries(n: usize, flag: &str, what: &str) -> anyhow::Result<()> {
    crate::units::tries(n, flag, what).map_err(crate::error::usage)
}

/// A peak bandwidth typed by the user (--peak, --phi), MB/s: from 1 to
/// [`MAX_PEAK_MB_S`](crate::units::MAX_PEAK_MB_S).
pub(crate) fn peak(p: f64, flag: &str) -> anyhow::Result<()> {
    crate::units::peak(p, flag).map_err(crate::error::usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_errors_are_usage_errors() {
        let e = tries(0, "-r", "try").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
        assert_eq!(e.to_string(), "-r 0: at least one try is needed");
        let e = peak(f64::NAN, "--peak").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
        assert!(tries(3, "-r", "try").is_ok() && peak(17066.0, "--peak").is_ok());
    }

    #[test]
    fn a_size_needs_its_unit() {
        assert_eq!(
            size_with_unit("1024").unwrap_err(),
            "give a unit, e.g. 1024K or 1M, or 1024B for bytes (a bare number is refused, not guessed as KiB or bytes)"
        );
        assert!(
            size_with_unit("100")
                .unwrap_err()
                .contains("e.g. 100K or 100M")
        );
        assert!(size_with_unit("1.5").is_err());
        for ok in ["512K", "1M", "1.5G", "4096B", " 2m "] {
            assert_eq!(size_with_unit(ok).as_deref(), Ok(ok), "{ok}");
        }
        assert!(size_with_unit("4Q").unwrap_err().contains("unknown unit"));
    }
}
