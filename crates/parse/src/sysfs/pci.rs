//! Device locality: which node a NIC, NVMe drive, disk or accelerator hangs
//! off, and which CPUs are local to it.
//!
//! Devices are found from their class directories (`/sys/class/net`,
//! `nvme`, `block`) and, for display and accelerator functions, from
//! `/sys/bus/pci/devices`. The locality files live on the PCI function,
//! which for virtio devices is the *parent* of the class device's `device`
//! link, so we walk up the resolved sysfs path to the nearest PCI address.

use crate::cpulist::IdList;
use crate::error::ParseError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PciFunction {
    /// `0000:11:01.0`.
    pub address: String,
    /// `numa_node`; the kernel writes -1 when firmware gave no locality.
    pub node: Option<u32>,
    pub local_cpus: Option<IdList>,
    /// 24-bit class code, e.g. 0x020000 for Ethernet.
    pub class: Option<u32>,
    pub vendor: Option<u16>,
    pub device: Option<u16>,
}

/// What a placed device is: the class directory it was found in (`net`,
/// `nvme`, `block`) or, for a PCI function no class directory names, what
/// its PCI class says ([`kind_of_class`]). Reports show and serialise it as
/// [`DeviceKind::as_str`], the words they always used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    Net,
    Nvme,
    Block,
    Display,
    Accelerator,
}

impl DeviceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceKind::Net => "net",
            DeviceKind::Nvme => "nvme",
            DeviceKind::Block => "block",
            DeviceKind::Display => "display",
            DeviceKind::Accelerator => "accelerator",
        }
    }
}

impl std::fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// As a JSON string, the same word as before the kind was an enum.
impl serde::Serialize for DeviceKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    pub kind: DeviceKind,
    pub name: String,
    pub pci: PciFunction,
}

/// `dddd:bb:dd.f` with hex digits.
pub fn is_pci_address(name: &str) -> bool {
    let bytes = name.as_bytes();
    let shape = [4, 2, 2, 1];
    let parts: Vec<&str> = name.split([':', '.']).collect();
    bytes.len() == 12
        && bytes[4] == b':'
        && bytes[7] == b':'
        && bytes[10] == b'.'
        && parts.len() == 4
        && parts
            .iter()
            .zip(shape)
            .all(|(p, len)| p.len() == len && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The PCI function a resolved sysfs path belongs to, as a path prefix.
pub fn pci_ancestor(resolved: &str) -> Option<String> {
    let parts: Vec<&str> = resolved.split('/').collect();
    let last = parts.iter().rposition(|p| is_pci_address(p))?;
    Some(parts[..=last].join("/"))
}

/// Maps a PCI class code to the device kinds we show; `None` for the rest
/// (bridges, USB, ...), which have no NUMA story worth a line.
pub fn kind_of_class(class: u32) -> Option<DeviceKind> {
    match class >> 16 {
        0x03 => Some(DeviceKind::Display),
        0x12 => Some(DeviceKind::Accelerator),
        0x0b if (class >> 8) & 0xff == 0x40 => Some(DeviceKind::Accelerator),
        _ => None,
    }
}

/// `0x020000`, as sysfs writes class, vendor and device ids.
pub fn parse_hex(text: &str) -> Result<u32, ParseError> {
    let digits = text.trim().trim_start_matches("0x");
    u32::from_str_radix(digits, 16).map_err(|_| ParseError::new(format!("`{}` is not a hex id", text.trim())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reports printed and serialised these words when the kind was a
    /// string; scripts match on them, so the enum must keep them.
    #[test]
    fn a_kind_is_shown_and_serialised_as_the_same_word() {
        for (kind, word) in [
            (DeviceKind::Net, "net"),
            (DeviceKind::Nvme, "nvme"),
            (DeviceKind::Block, "block"),
            (DeviceKind::Display, "display"),
            (DeviceKind::Accelerator, "accelerator"),
        ] {
            assert_eq!(kind.to_string(), word);
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{word}\""));
        }
    }
}
