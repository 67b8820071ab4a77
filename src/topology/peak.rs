//! Theoretical peak memory bandwidth as plain arithmetic over what the
//! firmware describes: channels x transfers per second x bytes per
//! transfer. Analysis calls this Gamma; nothing here measures.

use super::Topology;
use super::dmi::{self, DmiPeak};
use std::path::Path;

/// MB/s of `channels` channels at `mt_s` million transfers per second of
/// `bytes_per_transfer` bytes each (MT/s x B = MB/s).
pub fn memory_mb_s(mt_s: u32, bytes_per_transfer: u32, channels: u32) -> f64 {
    f64::from(mt_s) * f64::from(bytes_per_transfer) * f64::from(channels)
}

/// The peak of one memory node of `topo` from the DMI memory devices under
/// `root`; `Err` says why there is none (tables unreadable, no device with
/// a known speed).
pub fn dmi_node_peak(topo: &Topology, root: &Path) -> Result<DmiPeak, String> {
    let devices = dmi::read_memory_devices(root).map_err(|e| e.to_string())?;
    let nodes = topo.nodes.iter().filter(|n| n.has_memory).count().max(1);
    dmi::peak(&devices, nodes).ok_or_else(|| "no DMI memory device with a known speed".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_times_rate_times_width() {
        assert_eq!(memory_mb_s(3200, 8, 6), 153_600.0);
        assert_eq!(memory_mb_s(0, 8, 6), 0.0);
    }
}
