//! Whether the kernel runs in a virtual machine, and what says so.
//!
//! A guest's CPUs, caches and nodes are what its host declares, and the host
//! decides where the virtual CPUs really run: two of them may be SMT
//! siblings of one core now and sit on different dies a minute later.
//! Multi-thread bandwidth and core-to-core figures follow that placement, so
//! a report should say when it comes from a guest.

use super::*;

/// DMI names that only a virtual machine's firmware gives: (file, text it
/// contains, hypervisor named). Bare-metal cloud instances share their
/// vendor string with virtual ones (`Amazon EC2`), so vendors alone are not
/// enough; these are the names of virtual hardware.
const DMI_NAMES: [(&str, &str, &str); 8] = [
    ("product_name", "KVM", "KVM"),
    ("sys_vendor", "QEMU", "QEMU"),
    ("product_name", "VMware", "VMware"),
    ("sys_vendor", "VMware", "VMware"),
    ("product_name", "VirtualBox", "VirtualBox"),
    ("product_name", "Virtual Machine", "Hyper-V"),
    ("product_name", "HVM domU", "Xen"),
    ("sys_vendor", "Parallels", "Parallels"),
];

/// A line saying which hypervisor runs this kernel and how that is known;
/// `None` where nothing says so (bare metal, or a guest that hides it).
pub(super) fn read_virtual_machine(src: &SysfsRoot, cpuinfo: &str) -> Option<String> {
    let read = |rel: &str| {
        src.read_trimmed(rel)
            .ok()
            .flatten()
            .filter(|t| !t.is_empty())
    };
    if let Some(kind) = read("sys/hypervisor/type") {
        return Some(format!("{} (sys/hypervisor/type)", shown_name(&kind)));
    }
    // Each DMI file once, then the table against it.
    let dmi = ["product_name", "sys_vendor"].map(|f| (f, read(&format!("sys/class/dmi/id/{f}"))));
    for (file, text, name) in DMI_NAMES {
        let value = dmi
            .iter()
            .find(|(f, _)| *f == file)
            .and_then(|(_, v)| v.as_deref());
        if value.is_some_and(|v| v.contains(text)) {
            return Some(format!("{name} (DMI {file})"));
        }
    }
    hypervisor_flag(cpuinfo).then(|| "a hypervisor (the CPU's hypervisor flag)".to_string())
}

/// Whether the first x86 `flags` line of `/proc/cpuinfo` holds
/// `hypervisor`, the bit a hypervisor sets in the CPUID of its guests (every
/// CPU's line says the same).
fn hypervisor_flag(cpuinfo: &str) -> bool {
    cpuinfo
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim() == "flags")
        .is_some_and(|(_, v)| v.split_whitespace().any(|f| f == "hypervisor"))
}

/// The first 32 characters of a name read from a file, control characters
/// shown as `\xNN` so a planted one stays visible and never reaches a
/// terminal.
fn shown_name(s: &str) -> String {
    let head: String = s.chars().take(32).collect();
    crate::text::escape(&head).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn root(files: &[(&str, &str)]) -> (tempfile::TempDir, SysfsRoot) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        let src = SysfsRoot::new(dir.path());
        (dir, src)
    }

    const GUEST_FLAGS: &str = "processor\t: 0\nflags\t\t: fpu sse2 hypervisor avx2\n";
    const METAL_FLAGS: &str = "processor\t: 0\nflags\t\t: fpu sse2 avx2\n";

    #[test]
    fn the_cpu_flag_dmi_names_and_the_hypervisor_file_each_tell_a_guest() {
        let (_d, src) = root(&[]);
        assert_eq!(
            read_virtual_machine(&src, GUEST_FLAGS).as_deref(),
            Some("a hypervisor (the CPU's hypervisor flag)")
        );
        assert_eq!(read_virtual_machine(&src, METAL_FLAGS), None);
        assert_eq!(read_virtual_machine(&src, ""), None);

        let (_d, src) = root(&[
            ("sys/class/dmi/id/sys_vendor", "QEMU\n"),
            (
                "sys/class/dmi/id/product_name",
                "Standard PC (Q35 + ICH9, 2009)\n",
            ),
        ]);
        assert_eq!(
            read_virtual_machine(&src, METAL_FLAGS).as_deref(),
            Some("QEMU (DMI sys_vendor)")
        );

        let (_d, src) = root(&[("sys/hypervisor/type", "xen\n")]);
        assert_eq!(
            read_virtual_machine(&src, "").as_deref(),
            Some("xen (sys/hypervisor/type)")
        );
    }

    #[test]
    fn a_bare_metal_cloud_instance_is_not_taken_for_a_guest() {
        let (_d, src) = root(&[
            ("sys/class/dmi/id/sys_vendor", "Amazon EC2\n"),
            ("sys/class/dmi/id/product_name", "m7i.metal-24xl\n"),
        ]);
        assert_eq!(read_virtual_machine(&src, METAL_FLAGS), None);
        // "hypervisor" elsewhere than in the flags is not the flag.
        assert_eq!(
            read_virtual_machine(&src, "model name\t: hypervisor edition\n"),
            None
        );
    }

    #[test]
    fn a_planted_name_is_cut_short_and_its_control_characters_are_shown() {
        let (_d, src) = root(&[("sys/hypervisor/type", "x\u{1b}[31m".repeat(40).as_str())]);
        let line = read_virtual_machine(&src, "").unwrap();
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(line.starts_with(r"x\x1b[31mx\x1b[31m"), "{line:?}");
        assert!(line.len() < 200, "{line:?}");
    }
}
