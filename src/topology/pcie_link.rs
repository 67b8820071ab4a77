//! Phi, the theoretical one-direction bandwidth of a PCIe link, from its
//! speed and width as sysfs gives them (`current_link_speed`,
//! `current_link_width`).

/// The line encoding of a link at `speed_gt_s`: 8b/10b below 8 GT/s
/// (PCIe 1.x and 2.0), 128b/130b from 8 GT/s (3.0 on).
pub fn encoding(speed_gt_s: f64) -> &'static str {
    if speed_gt_s < 8.0 {
        "8b/10b"
    } else {
        "128b/130b"
    }
}

/// The share of the line rate left after encoding.
fn efficiency(speed_gt_s: f64) -> f64 {
    if speed_gt_s < 8.0 {
        8.0 / 10.0
    } else {
        128.0 / 130.0
    }
}

/// Phi of a link of `width` lanes at `speed_gt_s`, per direction, in MB/s:
/// PCIe 2.0 x16 gives 8000 MB/s, 3.0 x16 15754, 4.0 x16 31508, 5.0 x16
/// 63015. `None` for a speed or width that is not a positive finite
/// number (a document edited by hand may hold anything).
///
/// The thesis' Phi for PCIe 2.0 x16 is 12.8 GB/s, 8b/10b applied to the
/// 16 GB/s usually quoted for the slot; that figure counts both
/// directions, while a copy uses one (see
/// `analysis::model::PCIE2_X16_MB_S`).
pub fn phi_mb_s(speed_gt_s: f64, width: u32) -> Option<f64> {
    if !(speed_gt_s.is_finite() && speed_gt_s > 0.0 && width > 0) {
        return None;
    }
    let phi = speed_gt_s * 1e9 * efficiency(speed_gt_s) / 8.0 * f64::from(width) / 1e6;
    (phi.is_finite() && phi > 0.0).then_some(phi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::PCIE2_X16_MB_S;

    #[test]
    fn phi_from_link_speed_and_width() {
        // PCIe 3.0 x16: 8 GT/s x 128/130 x 16 lanes / 8 bits.
        let gen3 = phi_mb_s(8.0, 16).unwrap();
        assert!((gen3 - 15_753.846).abs() < 0.01, "{gen3}");
        // PCIe 2.0 x16: 5 GT/s x 8/10 x 16 / 8 = 8000 MB/s per direction,
        // not the thesis' 12 800 (which counts both directions).
        assert_eq!(phi_mb_s(5.0, 16), Some(8000.0));
        assert_eq!(PCIE2_X16_MB_S, 1.6 * 8000.0);
        assert_eq!(phi_mb_s(2.5, 1), Some(250.0));
        let gen4 = phi_mb_s(16.0, 16).unwrap();
        assert!((gen4 - 31_507.69).abs() < 0.01, "{gen4}");
        let gen5 = phi_mb_s(32.0, 16).unwrap();
        assert!((gen5 - 63_015.38).abs() < 0.01, "{gen5}");
        assert_eq!(phi_mb_s(8.0, 0), None);
        assert_eq!(phi_mb_s(f64::NAN, 16), None);
        assert_eq!(phi_mb_s(-8.0, 16), None);
        assert_eq!(encoding(5.0), "8b/10b");
        assert_eq!(encoding(8.0), "128b/130b");
    }
}
