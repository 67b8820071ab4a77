//! The CPU model from `/proc/cpuinfo`, whichever architecture wrote it.

pub(super) fn cpu_model(cpuinfo: &str) -> String {
    let value = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    // x86 and ia64 say "model name"; POWER and SPARC "cpu"; ARM boards
    // "Hardware" or only a part number; MIPS "cpu model"; older ia64
    // "family"; s390 a vendor and a machine type on its "processor" lines.
    value("model name")
        .or_else(|| value("cpu"))
        .or_else(|| value("Hardware"))
        .or_else(|| value("CPU part").map(|p| format!("CPU part {p}")))
        .or_else(|| value("cpu model"))
        .or_else(|| value("family"))
        .or_else(|| s390_model(cpuinfo))
        .unwrap_or_default()
}

/// "IBM/S390 machine 8561" from `vendor_id` and the first
/// `processor N: version = .., identification = .., machine = 8561` line.
pub(super) fn s390_model(cpuinfo: &str) -> Option<String> {
    let vendor = cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "vendor_id").then(|| v.trim().to_string())
    })?;
    let machine = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor "))
        .find_map(|l| l.split("machine = ").nth(1))
        .map(|m| m.split([',', ' ']).next().unwrap_or("").to_string());
    Some(match machine {
        Some(m) if !m.is_empty() => format!("{vendor} machine {m}"),
        _ => vendor,
    })
}

/// True for AMD families 15h (Bulldozer to Excavator) and 16h (Jaguar):
/// neither has SMT, but kernels list the two cores of a 15h compute unit
/// as thread siblings (`cu_id` decides `thread_siblings`), some with a
/// shared `core_id` too. hwloc's Linux backend tests the same families.
pub(super) fn amd_without_smt(cpuinfo: &str) -> bool {
    let value = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim())
        })
    };
    value("vendor_id") == Some("AuthenticAMD")
        && matches!(
            value("cpu family").and_then(|f| f.parse::<u32>().ok()),
            Some(0x15 | 0x16)
        )
}
