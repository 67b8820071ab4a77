//! Devices that compute (GPUs and accelerators) from the PCI tree, with
//! their link and NUMA node.

use super::*;

/// PCI class codes of devices that compute: display controllers (GPUs),
/// co-processors and processing accelerators. A plain VGA controller counts
/// only from GPU vendors: nearly every server has a BMC display adapter
/// (ASPEED, Matrox) of that class.
pub(super) fn accelerator_kind(class: u32, vendor: &str) -> Option<&'static str> {
    const GPU_VENDORS: [&str; 3] = ["0x10de", "0x1002", "0x8086"];
    match class >> 8 {
        0x0300 if GPU_VENDORS.contains(&vendor) => Some("VGA controller"),
        0x0302 => Some("3D controller"),
        0x0380 => Some("display controller"),
        0x0b40 => Some("co-processor"),
        0x1200 => Some("processing accelerator"),
        _ => None,
    }
}

/// The speed of a `*_link_speed` file: `Ok(None)` for the kernel's
/// `Unknown`; an error for anything that is not a positive, finite speed
/// up to 256 GT/s (PCIe 7.0 runs at 128), so no NaN or negative peak is
/// ever computed from it.
pub(super) fn parse_link_speed(text: &str) -> Result<Option<f64>, ()> {
    let first = text.split_whitespace().next().ok_or(())?;
    if first.eq_ignore_ascii_case("unknown") {
        return Ok(None);
    }
    let gt: f64 = first.parse().map_err(|_| ())?;
    if gt.is_finite() && gt > 0.0 && gt <= 256.0 {
        Ok(Some(gt))
    } else {
        Err(())
    }
}

/// The lanes of a `*_link_width` file: 0 is the kernel's "unknown"; more
/// than 32 lanes (the widest link PCIe defines) is an error.
pub(super) fn parse_link_width(text: &str) -> Result<Option<u32>, ()> {
    match text.trim().parse::<u32>() {
        Ok(0) => Ok(None),
        Ok(w) if w <= 32 => Ok(Some(w)),
        _ => Err(()),
    }
}

/// An optional value (a link speed, a device's node) that does not parse
/// is shown as unknown, with a warning naming the file and the value.
pub(super) fn optional<T>(
    src: &SysfsRoot,
    rel: &str,
    what: &str,
    parse: impl Fn(&str) -> Result<Option<T>, ()>,
) -> Result<Option<T>, TopologyError> {
    let Some(text) = src.read_trimmed(rel)? else {
        return Ok(None);
    };
    match parse(&text) {
        Ok(v) => Ok(v),
        Err(()) => {
            crate::console::err(&format!(
                "numabench: warning: {}: '{}' is not {what}; shown as unknown\n",
                crate::text::escape(rel),
                shown(&text)
            ));
            Ok(None)
        }
    }
}

pub(super) fn read_accelerators(src: &SysfsRoot) -> Result<Vec<Accelerator>, TopologyError> {
    let dir = "sys/bus/pci/devices";
    let mut out = Vec::new();
    for bdf in src.list(dir) {
        let d = format!("{dir}/{bdf}");
        let Some(class_text) = src.read_trimmed(&format!("{d}/class"))? else {
            continue;
        };
        let class = u32::from_str_radix(class_text.trim_start_matches("0x"), 16).map_err(|_| {
            malformed(
                &format!("{d}/class"),
                format!("'{class_text}' is not a class code"),
            )
        })?;
        let vendor = text(src, &format!("{d}/vendor"))?;
        let Some(kind) = accelerator_kind(class, &vendor) else {
            continue;
        };
        // -1: the firmware does not say.
        let node = |t: &str| match t.parse::<i64>() {
            Ok(-1) => Ok(None),
            Ok(n) if (0..MAX_NODES as i64).contains(&n) => Ok(Some(n as usize)),
            _ => Err(()),
        };
        let speed = "a PCIe link speed (e.g. '16.0 GT/s PCIe')";
        let width = "a PCIe link width (1 to 32 lanes)";
        out.push(Accelerator {
            pci_address: bdf.clone(),
            vendor,
            device: text(src, &format!("{d}/device"))?,
            class: class_text,
            kind: kind.to_string(),
            numa_node: optional(src, &format!("{d}/numa_node"), "a node number", node)?,
            link_speed_gt_s: optional(
                src,
                &format!("{d}/current_link_speed"),
                speed,
                parse_link_speed,
            )?,
            link_width: optional(
                src,
                &format!("{d}/current_link_width"),
                width,
                parse_link_width,
            )?,
            max_link_speed_gt_s: optional(
                src,
                &format!("{d}/max_link_speed"),
                speed,
                parse_link_speed,
            )?,
            max_link_width: optional(src, &format!("{d}/max_link_width"), width, parse_link_width)?,
        });
    }
    Ok(out)
}
