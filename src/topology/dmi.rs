//! Memory modules and their speed from the firmware's SMBIOS tables, for a
//! default theoretical peak bandwidth (Gamma) per node.
//!
//! Linux exposes each SMBIOS structure as
//! `/sys/firmware/dmi/entries/<type>-<n>/raw`; type 17 is a Memory Device
//! (one DIMM slot). Those files are readable by root only on most systems,
//! so a permission error is reported as such and the caller can say how to
//! get the figure. Only the formatted area of a structure is decoded (no
//! strings); offsets follow the SMBIOS reference specification (DSP0134),
//! section "Memory Device (Type 17)". These files are read with plain
//! `std::fs`, not [`SysfsRoot`](super::SysfsRoot), because they are binary
//! and a refused read must be told apart from a missing file.

use std::io;
use std::path::Path;

/// SMBIOS structure type of a Memory Device.
const TYPE_MEMORY_DEVICE: u8 = 17;

/// Where the entries live below the root.
const ENTRIES_DIR: &str = "sys/firmware/dmi/entries";

// Offsets into the formatted area of a type-17 structure.
// (0x08 is the total width, data plus ECC bits: not needed here.)
const OFF_DATA_WIDTH: usize = 0x0A;
const OFF_SIZE: usize = 0x0C;
const OFF_SPEED: usize = 0x15; // SMBIOS 2.3
const OFF_EXTENDED_SIZE: usize = 0x1C; // 2.7
const OFF_CONFIGURED_SPEED: usize = 0x20; // 2.7
const OFF_EXTENDED_SPEED: usize = 0x54; // 3.3
const OFF_EXTENDED_CONFIGURED_SPEED: usize = 0x58; // 3.3

/// The shortest type-17 structure decoded: up to and including the size.
const MIN_LENGTH: usize = OFF_SIZE + 2;

/// Data width assumed when the firmware does not give it: a DDR module's
/// 64 data bits (ECC bits excluded).
const DEFAULT_DATA_WIDTH_BITS: u16 = 64;

/// One populated memory slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryDevice {
    /// Module size in MiB; 0 when the firmware does not say.
    pub size_mb: u64,
    /// Data bits per transfer without ECC bits; 0 when the firmware does
    /// not say.
    pub data_width_bits: u16,
    /// Configured speed in MT/s, else the module's rated speed; 0 when
    /// unknown.
    pub speed_mt_s: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum DmiError {
    /// The entries exist but may not be read (not root).
    #[error(
        "cannot read {path}: permission denied (run as root to read the memory speed from DMI)"
    )]
    PermissionDenied { path: String },
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

fn u16_at(raw: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(raw.get(off..off + 2)?.try_into().ok()?))
}

fn u32_at(raw: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(raw.get(off..off + 4)?.try_into().ok()?))
}

/// A speed word: 0 unknown, 0xFFFF "see the 32-bit field at `extended`"
/// (bits 30:0, present from SMBIOS 3.3).
fn speed(area: &[u8], off: usize, extended: usize) -> u32 {
    match u16_at(area, off) {
        None | Some(0) => 0,
        Some(0xFFFF) => u32_at(area, extended).map_or(0, |s| s & 0x7FFF_FFFF),
        Some(s) => u32::from(s),
    }
}

/// Decodes one type-17 structure (formatted area, optionally followed by
/// its strings). `None` for another type, a structure shorter than its
/// length byte or too short to hold the size, and an empty slot (size 0).
pub fn parse_type17(raw: &[u8]) -> Option<MemoryDevice> {
    let (&kind, &length) = (raw.first()?, raw.get(1)?);
    let length = usize::from(length);
    if kind != TYPE_MEMORY_DEVICE || length < MIN_LENGTH || raw.len() < length {
        return None;
    }
    // Only what the length byte covers belongs to this structure's fields.
    let area = &raw[..length];
    let size_mb = match u16_at(area, OFF_SIZE)? {
        0 => return None,
        // Unknown size, but something is there.
        0xFFFF => 0,
        // Too large for the word: the 32-bit extended size, MiB in bits 30:0.
        0x7FFF => u32_at(area, OFF_EXTENDED_SIZE).map_or(0, |s| u64::from(s & 0x7FFF_FFFF)),
        // Bit 15 set: KiB, else MiB.
        s if s & 0x8000 != 0 => u64::from(s & 0x7FFF) / 1024,
        s => u64::from(s),
    };
    let data_width_bits = match u16_at(area, OFF_DATA_WIDTH) {
        None | Some(0xFFFF) => 0,
        Some(w) => w,
    };
    let configured = speed(area, OFF_CONFIGURED_SPEED, OFF_EXTENDED_CONFIGURED_SPEED);
    let speed_mt_s = if configured != 0 {
        configured
    } else {
        speed(area, OFF_SPEED, OFF_EXTENDED_SPEED)
    };
    Some(MemoryDevice {
        size_mb,
        data_width_bits,
        speed_mt_s,
    })
}

fn io_error(path: &Path, source: io::Error) -> DmiError {
    let path = path.display().to_string();
    if source.kind() == io::ErrorKind::PermissionDenied {
        DmiError::PermissionDenied { path }
    } else {
        DmiError::Io { path, source }
    }
}

/// The populated memory slots listed under
/// `<root>/sys/firmware/dmi/entries/17-*/raw`, in entry order (`root` is
/// `/` on a live system). No entries (no DMI, a virtual machine, a captured
/// tree without them) is `Ok` and empty; entries that may not be read are
/// [`DmiError::PermissionDenied`].
pub fn read_memory_devices(root: &Path) -> Result<Vec<MemoryDevice>, DmiError> {
    let dir = root.join(ENTRIES_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(&dir, e)),
    };
    let mut numbered: Vec<(u32, String)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|name| {
            let n = name.strip_prefix("17-")?.parse().ok()?;
            Some((n, name))
        })
        .collect();
    numbered.sort();
    let mut out = Vec::new();
    for (_, name) in numbered {
        let path = dir.join(&name).join("raw");
        match std::fs::read(&path) {
            Ok(raw) => out.extend(parse_type17(&raw)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_error(&path, e)),
        }
    }
    Ok(out)
}

/// A per-node peak worked out from the memory devices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DmiPeak {
    /// `speed_mt_s x bytes_per_transfer x channels_per_node`, MB/s.
    pub mb_s: f64,
    pub speed_mt_s: u32,
    pub bytes_per_transfer: u32,
    pub channels_per_node: u32,
}

/// The theoretical peak of one memory node from the devices with a known
/// speed, or `None` when there are none.
///
/// Assumptions, all of them guesses the tables cannot confirm:
/// * one module per channel, so the modules are the channels (two modules
///   per channel would double the figure), spread evenly over
///   `memory_nodes` nodes (rounded up, so the best node's peak is not
///   understated when they do not divide evenly);
/// * every channel runs at the slowest module's speed, which is what a
///   memory controller does with mixed modules;
/// * the narrowest data width (64 bits when the firmware does not say).
pub fn peak(devices: &[MemoryDevice], memory_nodes: usize) -> Option<DmiPeak> {
    let known: Vec<&MemoryDevice> = devices.iter().filter(|d| d.speed_mt_s > 0).collect();
    let speed_mt_s = known.iter().map(|d| d.speed_mt_s).min()?;
    let width = known
        .iter()
        .map(|d| match d.data_width_bits {
            0 => DEFAULT_DATA_WIDTH_BITS,
            w => w,
        })
        .min()
        .unwrap_or(DEFAULT_DATA_WIDTH_BITS);
    let bytes_per_transfer = u32::from(width / 8).max(1);
    let nodes = memory_nodes.max(1);
    let channels_per_node = u32::try_from(known.len().div_ceil(nodes)).unwrap_or(u32::MAX);
    Some(DmiPeak {
        mb_s: f64::from(speed_mt_s) * f64::from(bytes_per_transfer) * f64::from(channels_per_node),
        speed_mt_s,
        bytes_per_transfer,
        channels_per_node,
    })
}

/// [`peak`] as `(MB/s, speed in MT/s, channels per node)`.
pub fn peak_mb_s(devices: &[MemoryDevice], memory_nodes: usize) -> Option<(f64, u32, u32)> {
    peak(devices, memory_nodes).map(|p| (p.mb_s, p.speed_mt_s, p.channels_per_node))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const OFF_TOTAL_WIDTH: usize = 0x08;

    /// A type-17 formatted area of `length` bytes followed by an empty
    /// string set, with the given fields.
    fn structure(length: u8, size: u16, data_width: u16, speed: u16, configured: u16) -> Vec<u8> {
        let mut raw = vec![0u8; usize::from(length)];
        raw[0] = 17;
        raw[1] = length;
        raw[2..4].copy_from_slice(&0x0040u16.to_le_bytes()); // handle
        let mut put = |off: usize, v: u16| {
            if off + 2 <= raw.len() {
                raw[off..off + 2].copy_from_slice(&v.to_le_bytes());
            }
        };
        put(OFF_TOTAL_WIDTH, 72);
        put(OFF_DATA_WIDTH, data_width);
        put(OFF_SIZE, size);
        put(OFF_SPEED, speed);
        put(OFF_CONFIGURED_SPEED, configured);
        raw.extend_from_slice(b"DIMM_A1\0\0");
        raw
    }

    /// A 16 GiB DDR4-2400 RDIMM as an SMBIOS 3.2 structure (length 0x54):
    /// the size word holds 16384 MiB directly.
    fn dimm_2400() -> Vec<u8> {
        structure(0x54, 16_384, 64, 2666, 2400)
    }

    #[test]
    fn a_2400_dimm() {
        let d = parse_type17(&dimm_2400()).unwrap();
        assert_eq!(
            d,
            MemoryDevice {
                size_mb: 16_384,
                data_width_bits: 64,
                speed_mt_s: 2400,
            }
        );
    }

    #[test]
    fn an_empty_slot_is_none() {
        assert_eq!(parse_type17(&structure(0x54, 0, 64, 0, 0)), None);
    }

    #[test]
    fn truncated_and_foreign_structures_are_none() {
        let raw = dimm_2400();
        for n in 0..0x54 {
            assert_eq!(parse_type17(&raw[..n]), None, "{n} bytes");
        }
        // A length byte too small to hold the size.
        let mut short = raw.clone();
        short[1] = 0x0C;
        assert_eq!(parse_type17(&short), None);
        // Another type (16, Physical Memory Array).
        let mut other = raw;
        other[0] = 16;
        assert_eq!(parse_type17(&other), None);
        assert_eq!(parse_type17(&[]), None);
        assert_eq!(parse_type17(&[17]), None);
        // Anything at all must not panic.
        for len in 0..40u8 {
            let junk: Vec<u8> = (0..len).map(|i| i.wrapping_mul(37) ^ len).collect();
            let mut typed = junk.clone();
            if let Some(b) = typed.first_mut() {
                *b = 17;
            }
            let _ = parse_type17(&junk);
            let _ = parse_type17(&typed);
        }
    }

    #[test]
    fn an_old_structure_uses_the_rated_speed() {
        // SMBIOS 2.3: length 0x1B, a speed but no configured speed.
        let raw = structure(0x1B, 1024, 64, 1333, 0);
        assert_eq!(raw.len(), 0x1B + 9);
        let d = parse_type17(&raw).unwrap();
        assert_eq!((d.size_mb, d.speed_mt_s), (1024, 1333));
        // Pre-2.3 (length 0x15): no speed field at all.
        let d = parse_type17(&structure(0x15, 512, 64, 0, 0)).unwrap();
        assert_eq!((d.size_mb, d.speed_mt_s), (512, 0));
        // A configured speed of 0 falls back to the rated speed.
        let d = parse_type17(&structure(0x28, 8192, 64, 3200, 0)).unwrap();
        assert_eq!(d.speed_mt_s, 3200);
    }

    #[test]
    fn extended_fields() {
        // 64 GiB does not fit the size word: 0x7FFF and the extended size.
        let mut raw = structure(0x5C, 0x7FFF, 64, 0xFFFF, 0xFFFF);
        raw[OFF_EXTENDED_SIZE..OFF_EXTENDED_SIZE + 4].copy_from_slice(&65_536u32.to_le_bytes());
        raw[OFF_EXTENDED_SPEED..OFF_EXTENDED_SPEED + 4].copy_from_slice(&70_000u32.to_le_bytes());
        raw[OFF_EXTENDED_CONFIGURED_SPEED..OFF_EXTENDED_CONFIGURED_SPEED + 4]
            .copy_from_slice(&68_000u32.to_le_bytes());
        let d = parse_type17(&raw).unwrap();
        assert_eq!((d.size_mb, d.speed_mt_s), (65_536, 68_000));
        // Size in KiB (bit 15), unknown size, unknown width.
        let d = parse_type17(&structure(0x28, 0x8000 | 2048, 0xFFFF, 0, 0)).unwrap();
        assert_eq!((d.size_mb, d.data_width_bits), (2, 0));
        let d = parse_type17(&structure(0x28, 0xFFFF, 64, 0, 0)).unwrap();
        assert_eq!(d.size_mb, 0);
        // 0x7FFF in a structure too short for the extended size.
        let d = parse_type17(&structure(0x1B, 0x7FFF, 64, 2133, 0)).unwrap();
        assert_eq!((d.size_mb, d.speed_mt_s), (0, 2133));
    }

    #[test]
    fn peaks() {
        let dimm = |speed| MemoryDevice {
            size_mb: 16_384,
            data_width_bits: 64,
            speed_mt_s: speed,
        };
        // Four modules on two nodes: two channels each.
        let four = [dimm(2400); 4];
        assert_eq!(peak_mb_s(&four, 2), Some((38_400.0, 2400, 2)));
        assert_eq!(peak(&four, 2).unwrap().bytes_per_transfer, 8);
        assert_eq!(peak_mb_s(&four, 1), Some((76_800.0, 2400, 4)));
        // The thesis' Gamma, near enough: one DDR3-2133 channel.
        assert_eq!(peak_mb_s(&[dimm(2133)], 1), Some((17_064.0, 2133, 1)));
        // Modules without a speed do not count; the slowest sets the speed;
        // uneven spreads round up.
        let mixed = [dimm(3200), dimm(2933), dimm(3200), dimm(0)];
        assert_eq!(peak_mb_s(&mixed, 2), Some((46_928.0, 2933, 2)));
        // Unknown width: 64 bits assumed; zero nodes count as one.
        let unknown = MemoryDevice {
            data_width_bits: 0,
            ..dimm(1600)
        };
        assert_eq!(peak_mb_s(&[unknown], 0), Some((12_800.0, 1600, 1)));
        assert_eq!(peak_mb_s(&[dimm(0)], 1), None);
        assert_eq!(peak_mb_s(&[], 2), None);
    }

    /// A directory of its own under the system's temporary directory,
    /// removed when dropped.
    struct TempRoot(PathBuf);

    impl TempRoot {
        fn new(tag: &str) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "numabench-dmi-{}-{tag}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_nanos()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            TempRoot(dir)
        }

        fn entry(&self, name: &str, raw: &[u8]) -> PathBuf {
            let dir = self.0.join(ENTRIES_DIR).join(name);
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("raw");
            std::fs::write(&path, raw).unwrap();
            path
        }
    }

    impl Drop for TempRoot {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn reads_the_entries_of_a_root() {
        let root = TempRoot::new("two");
        root.entry("17-10", &structure(0x28, 8192, 64, 3200, 2933));
        root.entry("17-2", &dimm_2400());
        // An empty slot, another type, and an entry without its raw file.
        root.entry("17-3", &structure(0x54, 0, 64, 0, 0));
        root.entry("16-0", &[16, 0x17, 0, 0]);
        std::fs::create_dir_all(root.0.join(ENTRIES_DIR).join("17-4")).unwrap();
        let devices = read_memory_devices(&root.0).unwrap();
        // In entry number order: 17-2 before 17-10.
        assert_eq!(devices.len(), 2, "{devices:?}");
        assert_eq!(devices[0].speed_mt_s, 2400);
        assert_eq!(devices[1].speed_mt_s, 2933);
        assert_eq!(peak_mb_s(&devices, 1), Some((38_400.0, 2400, 2)));
    }

    #[test]
    fn no_entries_is_empty() {
        let root = TempRoot::new("none");
        assert!(read_memory_devices(&root.0).unwrap().is_empty());
        std::fs::create_dir_all(root.0.join(ENTRIES_DIR)).unwrap();
        assert!(read_memory_devices(&root.0).unwrap().is_empty());
        assert!(
            read_memory_devices(&root.0.join("does-not-exist"))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn unreadable_entries_ask_for_root() {
        use std::os::unix::fs::PermissionsExt;
        let root = TempRoot::new("perm");
        let path = root.entry("17-0", &dimm_2400());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
        if std::fs::read(&path).is_ok() {
            // Root (or CAP_DAC_OVERRIDE) reads it anyway: nothing to test.
            eprintln!("skipped: this process may read a mode-000 file");
            return;
        }
        let err = read_memory_devices(&root.0).unwrap_err();
        assert!(matches!(err, DmiError::PermissionDenied { .. }), "{err:?}");
        assert!(err.to_string().contains("run as root"), "{err}");
        assert!(!err.to_string().contains('\n'));
    }

    #[test]
    fn permission_message() {
        let err = DmiError::PermissionDenied {
            path: "/sys/firmware/dmi/entries/17-0/raw".into(),
        };
        assert_eq!(
            err.to_string(),
            "cannot read /sys/firmware/dmi/entries/17-0/raw: permission denied (run as root to read the memory speed from DMI)"
        );
    }
}
