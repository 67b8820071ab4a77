//! The option checks of [`crate::units`] as the command line reports them:
//! a value out of range is a usage error (exit 2).

pub(crate) use crate::units::{
    duration, limit, parse_size, short_size, size_at_least, time, time_limit,
};

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
}
