//! The data-access performance model of Braithwaite's thesis "NUMA
//! Data-Access Bandwidth Characterization and Modeling" (Virginia Tech,
//! 2012), chapter 4, and two ways of predicting the bandwidth of a placement
//! that spreads memory over several nodes.
//!
//! * `alpha_i` (eq. 4.3) is the best bandwidth of bandwidth class `i` as a
//!   fraction of a theoretical peak: Gamma for memory, Phi for PCIe.
//! * `theta_i` is the fraction of a program's accesses that go to class `i`;
//!   the thetas add up to 1.
//! * `D = sum(alpha_i * theta_i)` (eq. 4.6) is the fraction of the peak the
//!   program may reach; `D - alpha_0` (eq. 4.12) is what its placement costs
//!   compared with all-local access.
//!
//! All bandwidths here are in MB/s (10^6 bytes per second); the thesis
//! writes GB/s, which only moves the decimal point of both the bandwidth and
//! the peak, so every alpha is the same.

use serde::{Deserialize, Serialize};

/// Gamma of the thesis: one DDR3-2133 channel, 2133.33 MT/s x 8 bytes. The
/// thesis writes 17.066 GB/s (the exact product is 17 066.67 MB/s); the
/// thesis' figure is kept so its alpha values come out as printed.
#[cfg(test)]
pub(crate) const DDR3_2133_MB_S: f64 = 17_066.0;

/// Phi of the thesis: "PCIe 2.0", 12.8 GB/s, which it derives as 8b/10b
/// encoding applied to the 16 GB/s quoted for a x16 slot. Note that the
/// 16 GB/s already counts both directions; one direction of a PCIe 2.0 x16
/// link carries 8 000 MB/s (what
/// [`Accelerator::link_peak_mb_s`](crate::topology::Accelerator::link_peak_mb_s)
/// reports). Use this constant to compare with the thesis' numbers.
#[cfg(test)]
pub(crate) const PCIE2_X16_MB_S: f64 = 12_800.0;

/// How far the thetas may add up from 1 (typed fractions such as
/// `0.333,0.333,0.333` are accepted).
pub(crate) const THETA_TOLERANCE: f64 = 1e-3;

/// A model input that cannot be used; every message is one line naming the
/// bad value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ModelError {
    #[error("no theta values given")]
    NoThetas,
    #[error("theta {position} is empty (expected e.g. 0.5,0.25,0.25 or 50%,25%,25%)")]
    EmptyTheta { position: usize },
    #[error("theta {position} '{piece}' is not a number (expected e.g. 0.5 or 50%)")]
    NotANumber { position: usize, piece: String },
    #[error("theta {position} '{piece}' must be a finite number >= 0")]
    BadTheta { position: usize, piece: String },
    #[error("theta values add up to {}, not 1", short(.sum))]
    ThetaSum { sum: f64 },
    #[error("{given} theta values but only {classes} bandwidth classes")]
    TooManyThetas { given: usize, classes: usize },
    #[error("{what} {position} is {}; it must be a finite number >= 0", short(.value))]
    BadValue {
        what: &'static str,
        position: usize,
        value: f64,
    },
    #[error(
        "memory node {position} has bandwidth 0 but theta {}: no time-weighted prediction is possible",
        short(.theta)
    )]
    ZeroBandwidth { position: usize, theta: f64 },
}

/// A number for a message: at most six decimals, trailing zeros dropped.
fn short(x: &f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// `alpha` (eq. 4.3): the bandwidth of a class as a fraction of the
/// theoretical peak, both in the same unit.
pub(crate) fn alpha(bandwidth_mb_s: f64, peak_mb_s: f64) -> f64 {
    bandwidth_mb_s / peak_mb_s
}

/// Checks that `thetas` are finite, >= 0 and add up to 1 within
/// [`THETA_TOLERANCE`]. Positions in messages count from 1.
pub(crate) fn check_thetas(thetas: &[f64]) -> Result<(), ModelError> {
    if thetas.is_empty() {
        return Err(ModelError::NoThetas);
    }
    check_values("theta", thetas)?;
    let sum: f64 = thetas.iter().sum();
    if (sum - 1.0).abs() > THETA_TOLERANCE {
        return Err(ModelError::ThetaSum { sum });
    }
    Ok(())
}

fn check_values(what: &'static str, values: &[f64]) -> Result<(), ModelError> {
    match values.iter().position(|v| !v.is_finite() || *v < 0.0) {
        Some(i) => Err(ModelError::BadValue {
            what,
            position: i + 1,
            value: values[i],
        }),
        None => Ok(()),
    }
}

/// Checks thetas against `classes` per-class values: at most one theta per
/// class, and the checks of [`check_thetas`].
fn check_against(what: &'static str, values: &[f64], thetas: &[f64]) -> Result<(), ModelError> {
    if thetas.len() > values.len() {
        return Err(ModelError::TooManyThetas {
            given: thetas.len(),
            classes: values.len(),
        });
    }
    check_values(what, values)?;
    check_thetas(thetas)
}

/// `D` (eq. 4.6): `sum(alpha_i * theta_i)`. Thetas pair with alphas by
/// position (class 0 first); fewer thetas than alphas leave the remaining
/// classes at 0, more thetas than alphas is an error.
pub(crate) fn performance(alphas: &[f64], thetas: &[f64]) -> Result<f64, ModelError> {
    check_against("alpha", alphas, thetas)?;
    Ok(alphas.iter().zip(thetas).map(|(a, t)| a * t).sum())
}

/// What a placement loses against all-local access (eq. 4.12): `D -
/// alpha_0`, negative when accesses leave class 0.
pub(crate) fn loss(d: f64, alpha0: f64) -> f64 {
    d - alpha0
}

/// Parses thetas typed as fractions (`0.5,0.25,0.25`) or percentages
/// (`50%,25%,25%`), separated by commas, spaces allowed around each piece.
/// Each piece must be a finite number >= 0 and the whole must add up to 1.
pub(crate) fn parse_thetas(text: &str) -> Result<Vec<f64>, ModelError> {
    if text.trim().is_empty() {
        return Err(ModelError::NoThetas);
    }
    let mut out = Vec::new();
    for (i, raw) in text.split(',').enumerate() {
        let position = i + 1;
        let piece = raw.trim();
        if piece.is_empty() {
            return Err(ModelError::EmptyTheta { position });
        }
        let (number, scale) = match piece.strip_suffix('%') {
            Some(n) => (n.trim_end(), 100.0),
            None => (piece, 1.0),
        };
        let value: f64 = number.parse().map_err(|_| ModelError::NotANumber {
            position,
            piece: piece.to_string(),
        })?;
        if !value.is_finite() || value < 0.0 {
            return Err(ModelError::BadTheta {
                position,
                piece: piece.to_string(),
            });
        }
        out.push(value / scale);
    }
    check_thetas(&out)?;
    Ok(out)
}

/// Bandwidth predicted for a placement that puts fraction `theta[i]` of the
/// memory on a node with bandwidth `b[i]`, taken as the thesis' model: D
/// times the peak, i.e. the access-weighted mean `sum(theta_i * b_i)`. It
/// assumes the nodes serve their shares at the same time, each at its own
/// rate. Same pairing rules as [`performance`].
pub(crate) fn predict_linear(b: &[f64], theta: &[f64]) -> Result<f64, ModelError> {
    check_against("bandwidth", b, theta)?;
    Ok(b.iter().zip(theta).map(|(b, t)| b * t).sum())
}

/// Bandwidth predicted for the same placement when one stream walks the
/// bytes one after the other, each byte taking `1 / b_i` of time: the
/// time-weighted (harmonic) mean `1 / sum(theta_i / b_i)`. It never exceeds
/// [`predict_linear`] and is the better guess for a single thread, whose
/// slow pages hold it up. A node with bandwidth 0 and a share > 0 is an
/// error. Same pairing rules as [`performance`].
pub(crate) fn predict_harmonic(b: &[f64], theta: &[f64]) -> Result<f64, ModelError> {
    check_against("bandwidth", b, theta)?;
    let mut time = 0.0;
    for (i, (b, t)) in b.iter().zip(theta).enumerate() {
        if *t == 0.0 {
            continue;
        }
        if *b == 0.0 {
            return Err(ModelError::ZeroBandwidth {
                position: i + 1,
                theta: *t,
            });
        }
        time += t / b;
    }
    Ok(1.0 / time)
}

/// How far a prediction is from the measurement, in percent of the
/// measurement: positive when the prediction is too high. `None` when the
/// measurement is 0 or either value is not finite.
pub(crate) fn error_pct(predicted: f64, measured: f64) -> Option<f64> {
    if measured == 0.0 || !measured.is_finite() || !predicted.is_finite() {
        return None;
    }
    Some(100.0 * (predicted - measured) / measured)
}

/// Where a peak bandwidth came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum PeakSource {
    /// The user gave it (`--peak`).
    Given,
    /// The memory speed the firmware reports (SMBIOS type 17), assuming one
    /// module per channel: `channels x mt_s x bytes_per_transfer`.
    Dmi {
        mt_s: u32,
        bytes_per_transfer: u32,
        channels: u32,
    },
    /// Nothing better known: the best measured bandwidth, which makes
    /// alpha_0 1 by construction.
    MeasuredLocal,
}

/// A theoretical peak (Gamma for memory) and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Peak {
    pub mb_s: f64,
    pub source: PeakSource,
}

impl Peak {
    /// A peak the user gave.
    pub(crate) fn given(mb_s: f64) -> Self {
        Peak {
            mb_s,
            source: PeakSource::Given,
        }
    }

    /// The peak of `channels` channels at `mt_s` transfers per microsecond
    /// of `bytes_per_transfer` bytes each (MT/s x B = MB/s).
    pub(crate) fn dmi(mt_s: u32, bytes_per_transfer: u32, channels: u32) -> Self {
        Peak {
            mb_s: crate::topology::peak::memory_mb_s(mt_s, bytes_per_transfer, channels),
            source: PeakSource::Dmi {
                mt_s,
                bytes_per_transfer,
                channels,
            },
        }
    }

    /// One line saying what Gamma is and where the number comes from.
    pub(crate) fn describe(&self) -> String {
        let head = format!("Gamma = {:.0} MB/s", self.mb_s);
        match &self.source {
            PeakSource::Given => format!("{head}, as given with --peak"),
            PeakSource::Dmi {
                mt_s,
                bytes_per_transfer,
                channels,
            } => format!(
                "{head} from DMI: {channels} channel{} x {mt_s} MT/s x {bytes_per_transfer} B (one module per channel assumed)",
                if *channels == 1 { "" } else { "s" }
            ),
            PeakSource::MeasuredLocal => format!(
                "{head}: not known (no --peak given, no DMI memory speed readable), so the best measured cell stands in: alphas are relative to it (alpha_0 = 1) and not comparable across machines; give the memory's peak with --peak"
            ),
        }
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
