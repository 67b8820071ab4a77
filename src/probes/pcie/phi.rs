//! Phi of one GPU: the figure alpha_p divides by, and where it comes from.
//! The arithmetic is the link's, in [`crate::topology::pcie_link`].

use crate::topology::Accelerator;
use crate::topology::pcie_link;

/// Where Phi comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PhiSource {
    /// `--phi`.
    Given,
    /// The PCIe link in sysfs (`current_link_speed`, `current_link_width`).
    Link { speed_gt_s: f64, width: u32 },
}

/// The theoretical one-direction bandwidth of a GPU's link.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Phi {
    pub mb_s: f64,
    pub source: PhiSource,
}

impl Phi {
    pub(crate) fn given(mb_s: f64) -> Phi {
        Phi {
            mb_s,
            source: PhiSource::Given,
        }
    }

    /// Phi of the accelerator's current link, when sysfs reports it.
    pub(crate) fn of_link(acc: &Accelerator) -> Option<Phi> {
        let (speed_gt_s, width) = (acc.link_speed_gt_s?, acc.link_width?);
        Some(Phi {
            mb_s: pcie_link::phi_mb_s(speed_gt_s, width)?,
            source: PhiSource::Link { speed_gt_s, width },
        })
    }

    /// One line: the figure and where it comes from.
    pub(crate) fn describe(&self) -> String {
        match &self.source {
            PhiSource::Given => format!("Phi = {:.0} MB/s, as given with --phi", self.mb_s),
            PhiSource::Link { speed_gt_s, width } => format!(
                "Phi = {:.0} MB/s per direction: PCIe link {} GT/s x{width}, {} encoding",
                self.mb_s,
                short(*speed_gt_s),
                pcie_link::encoding(*speed_gt_s)
            ),
        }
    }
}

/// The larger of two Phi readings of the same link. GPUs drop their link
/// to a lower speed when idle and train it up under load, so the reading
/// taken after the copies is normally the real one.
pub(super) fn better_phi(a: Option<Phi>, b: Option<Phi>) -> Option<Phi> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.mb_s > a.mb_s { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// A number without needless decimals: 8, 2.5.
pub(super) fn short(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
