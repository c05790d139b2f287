//! Reading `sysfs::pci`; its format, types and parser are `numasleuth_parse::sysfs::pci`.

pub use numasleuth_parse::sysfs::pci::*;

use crate::error::ReadError;
use crate::read;
use crate::root::Root;
use crate::unread::Gaps;

/// A PCI function's locality and identity; an unusable file is noted in
/// `gaps` and read as unknown.
pub fn read_function(root: &Root, dir: &str, gaps: &mut Gaps) -> PciFunction {
    let address = dir.rsplit('/').next().unwrap_or(dir).to_string();
    let node = gaps.keep(read::id(root, &format!("{dir}/numa_node")));
    let local_cpus = gaps.keep(read::list_or_mask(
        root,
        &format!("{dir}/local_cpulist"),
        &format!("{dir}/local_cpus"),
    ));
    let mut hex = |name: &str| gaps.keep(read::parsed(root, &format!("{dir}/{name}"), parse_hex));
    PciFunction {
        address,
        node,
        local_cpus,
        class: hex("class"),
        vendor: hex("vendor").and_then(|v| u16::try_from(v).ok()),
        device: hex("device").and_then(|v| u16::try_from(v).ok()),
    }
}

/// The IRQs a PCI function raises: its MSI/MSI-X vectors, or its legacy
/// INTx line when it has no MSI.
///
/// The vectors are the names in `msi_irqs/`: files holding `msi` or `msix`
/// on 5.x and later kernels, directories holding a `mode` file before.
/// Only the names are used, but a snapshot must hold the entries for a
/// replay to list them: a listing records directories and links, not
/// files, so under a recording root each file entry is read here too.
pub fn read_irqs(root: &Root, function_dir: &str) -> Result<Vec<u32>, ReadError> {
    let msi_dir = format!("{function_dir}/msi_irqs");
    let mut irqs: Vec<u32> = root
        .list(&msi_dir)?
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect();
    if root.is_recording() {
        for irq in &irqs {
            // `exists` reads (and so keeps) a file; a directory is kept
            // by the listing already.
            root.exists(&format!("{msi_dir}/{irq}"));
        }
    }
    if irqs.is_empty() {
        let legacy = read::number(root, &format!("{function_dir}/irq"))?;
        irqs.extend(legacy.and_then(|irq| u32::try_from(irq).ok()).filter(|irq| *irq != 0));
    }
    irqs.sort_unstable();
    Ok(irqs)
}

/// Every device we can place, in a stable order: class devices first (by
/// kind, then name), then display and accelerator functions not already
/// named by a class device. A class directory or device that cannot be
/// read is noted in `gaps` and left out.
pub fn read_devices(root: &Root, gaps: &mut Gaps) -> Vec<Device> {
    let mut devices = Vec::new();
    for (kind, class_dir, virtual_dir) in [
        (DeviceKind::Net, "sys/class/net", Some("sys/devices/virtual/net")),
        (DeviceKind::Nvme, "sys/class/nvme", None),
        (DeviceKind::Block, "sys/class/block", Some("sys/devices/virtual/block")),
    ] {
        // Virtual devices (lo, bridges, veths, loops) have no PCI function.
        // One listing of where they live spares resolving each link, which
        // on a container host is hundreds. Absent from a capture, it is not
        // a gap: every link is then resolved.
        let virtual_names = virtual_dir
            .and_then(|dir| root.list(dir).ok().flatten())
            .unwrap_or_default();
        for name in gaps.keep(root.list(class_dir)).unwrap_or_default() {
            if virtual_names.binary_search(&name).is_ok() {
                continue;
            }
            let entry = format!("{class_dir}/{name}");
            // A device can vanish between listing and resolving (or its link
            // dangle in a capture); it is then simply not there.
            let Some(resolved) = gaps.ok(root.resolve(&entry)) else {
                continue;
            };
            // Virtual devices (loop, lo, bridges) have no PCI function.
            let Some(function_dir) = pci_ancestor(&resolved) else {
                continue;
            };
            // Partitions share their disk's locality; one line per disk.
            if kind == DeviceKind::Block && root.exists(&format!("{entry}/partition")) {
                continue;
            }
            let pci = read_function(root, &function_dir, gaps);
            let already = devices
                .iter()
                .any(|d: &Device| d.kind == DeviceKind::Nvme && d.pci.address == pci.address);
            if kind == DeviceKind::Block && already {
                continue;
            }
            devices.push(Device { kind, name, pci });
        }
    }
    for address in gaps.keep(root.list("sys/bus/pci/devices")).unwrap_or_default() {
        if devices.iter().any(|d| d.pci.address == address) {
            continue;
        }
        let Some(dir) = gaps.ok(root.resolve(&format!("sys/bus/pci/devices/{address}"))) else {
            continue;
        };
        let Some(class) = gaps.keep(read::parsed(root, &format!("{dir}/class"), parse_hex)) else {
            continue;
        };
        let Some(kind) = kind_of_class(class) else {
            continue;
        };
        devices.push(Device {
            kind,
            name: address.clone(),
            pci: read_function(root, &dir, gaps),
        });
    }
    devices
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree with a virtio NIC on a PCI function and `lo`; `virtual_net`
    /// names what `sys/devices/virtual/net` lists (`None`: no such dir).
    fn device_tree(virtual_net: Option<&[&str]>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let at = |p: &str| dir.path().join(p);
        let function = "sys/devices/pci0000:00/0000:00:03.0";
        std::fs::create_dir_all(at(&format!("{function}/virtio0/net/eth0"))).unwrap();
        for (file, value) in [("class", "0x020000"), ("vendor", "0x1af4"), ("device", "0x1000")] {
            std::fs::write(at(&format!("{function}/{file}")), format!("{value}\n")).unwrap();
        }
        std::fs::create_dir_all(at("sys/bus/pci/devices")).unwrap();
        std::os::unix::fs::symlink(
            "../../../devices/pci0000:00/0000:00:03.0",
            at("sys/bus/pci/devices/0000:00:03.0"),
        )
        .unwrap();
        std::fs::create_dir_all(at("sys/class/net")).unwrap();
        let eth0 = "../../devices/pci0000:00/0000:00:03.0/virtio0/net/eth0";
        std::os::unix::fs::symlink(eth0, at("sys/class/net/eth0")).unwrap();
        std::os::unix::fs::symlink("../../devices/virtual/net/lo", at("sys/class/net/lo")).unwrap();
        if let Some(names) = virtual_net {
            for name in names {
                std::fs::create_dir_all(at(&format!("sys/devices/virtual/net/{name}"))).unwrap();
            }
        }
        dir
    }

    #[test]
    fn virtual_devices_are_known_by_one_listing_or_by_their_links() {
        let names = |devices: &[Device]| devices.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
        // lo is left out by its dangling link when nothing lists it, and no
        // gap is noted for the missing listing.
        let tree = device_tree(None);
        let mut gaps = Gaps::default();
        let devices = read_devices(&Root::directory(tree.path()).unwrap(), &mut gaps);
        assert_eq!(names(&devices), ["eth0"]);
        assert_eq!(devices[0].pci.address, "0000:00:03.0");
        assert!(gaps.is_empty(), "{:?}", gaps.first());
        // The listing decides without resolving: a listed name is left out
        // even where its link would lead to a PCI function.
        let tree = device_tree(Some(&["lo", "eth0"]));
        let mut gaps = Gaps::default();
        let devices = read_devices(&Root::directory(tree.path()).unwrap(), &mut gaps);
        assert!(names(&devices).is_empty(), "{:?}", names(&devices));
        assert!(gaps.is_empty(), "{:?}", gaps.first());
    }

    /// A snapshot keeps both layouts of `msi_irqs/` (on this project's
    /// development VM, kernel 6.18, `msi_irqs/37` is a file holding
    /// `msix`; before 5.x each vector is a directory holding `mode`), so
    /// the replay finds the same vectors. Without the reads under a
    /// recording root the file vectors were lost and the NIC had no IRQs.
    #[test]
    fn a_snapshot_keeps_msi_vectors_of_both_layouts() {
        let tree = device_tree(Some(&["lo"]));
        let function = "sys/devices/pci0000:00/0000:00:03.0";
        let at = |p: &str| tree.path().join(format!("{function}/msi_irqs/{p}"));
        std::fs::create_dir_all(at("39")).unwrap();
        std::fs::write(at("39/mode"), "msix\n").unwrap();
        for irq in ["37", "38"] {
            std::fs::write(at(irq), "msix\n").unwrap();
        }
        let (recording_root, recording) = Root::directory(tree.path()).unwrap().recording();
        assert_eq!(read_irqs(&recording_root, function).unwrap(), [37, 38, 39]);
        let out = tempfile::tempdir().unwrap();
        let archive = out.path().join("snap.tar.gz");
        crate::snapshot::write(&recording.lock().unwrap(), "{}", &archive).unwrap();
        let replayed = crate::snapshot::open(&archive).unwrap();
        assert_eq!(read_irqs(&replayed, function).unwrap(), [37, 38, 39]);
    }

    #[test]
    fn pci_addresses() {
        assert!(is_pci_address("0000:11:01.0"));
        assert!(is_pci_address("0000:00:1f.2"));
        assert!(!is_pci_address("pci0000:00"));
        assert!(!is_pci_address("virtio2"));
        assert!(!is_pci_address("0000:00:1g.0"));
    }

    #[test]
    fn virtio_net_locality_is_on_the_pci_parent() {
        // /sys/class/net/eth0 on this project's development VM resolves here.
        let resolved = "sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0";
        assert_eq!(
            pci_ancestor(resolved).as_deref(),
            Some("sys/devices/pci0000:00/0000:00:03.0")
        );
        assert_eq!(pci_ancestor("sys/devices/virtual/net/lo"), None);
    }

    #[test]
    fn nested_bridges_pick_the_deepest_function() {
        let resolved = "sys/devices/pci0000:00/0000:00:03.0/0000:01:00.0/host0/target0:2:0/0:2:0:0/block/sda";
        assert_eq!(pci_ancestor(resolved).unwrap().rsplit('/').next(), Some("0000:01:00.0"));
    }

    #[test]
    fn hex_ids() {
        assert_eq!(parse_hex("0x020000\n"), Ok(0x020000));
        assert_eq!(parse_hex("8086"), Ok(0x8086));
        assert!(parse_hex("0xnet").is_err());
        assert!(parse_hex("").is_err());
    }

    #[test]
    fn classes() {
        assert_eq!(kind_of_class(0x030000), Some(DeviceKind::Display));
        assert_eq!(kind_of_class(0x120000), Some(DeviceKind::Accelerator));
        assert_eq!(kind_of_class(0x0b4000), Some(DeviceKind::Accelerator));
        assert_eq!(kind_of_class(0x060400), None);
    }
}
