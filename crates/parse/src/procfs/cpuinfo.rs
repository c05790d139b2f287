//! `/proc/cpuinfo`: the CPU model and vendor, for the topology header.
//!
//! Architectures spell these differently (x86 `model name`/`vendor_id`, Arm
//! `CPU implementer` or nothing at all, POWER `cpu`), so both are optional.

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuInfo {
    pub model_name: Option<String>,
    pub vendor: Option<String>,
    /// Number of `processor` stanzas, as a cross-check for sysfs.
    pub processors: usize,
}

pub fn parse(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if value.is_empty() {
            continue;
        }
        match key {
            "processor" => info.processors += 1,
            "model name" | "cpu model" | "cpu" | "Model" if info.model_name.is_none() => {
                info.model_name = Some(value.to_string());
            }
            "vendor_id" | "vendor" | "CPU implementer" if info.vendor.is_none() => {
                info.vendor = Some(arm_implementer(value).unwrap_or(value).to_string());
            }
            _ => {}
        }
    }
    info
}

/// Arm reports its vendor as an implementer code.
fn arm_implementer(code: &str) -> Option<&'static str> {
    Some(match code {
        "0x41" => "ARM",
        "0x42" => "Broadcom",
        "0x43" => "Cavium",
        "0x46" => "Fujitsu",
        "0x48" => "HiSilicon",
        "0x4e" => "NVIDIA",
        "0x50" => "APM",
        "0x51" => "Qualcomm",
        "0x61" => "Apple",
        "0xc0" => "Ampere",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn x86() {
        // Abridged from this project's development VM.
        let info = parse("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n");
        assert_eq!(info.vendor.as_deref(), Some("GenuineIntel"));
        assert_eq!(info.model_name.as_deref(), Some("Intel(R) Xeon(R) Processor"));
        assert_eq!(info.processors, 2);
    }

    #[test]
    fn arm_implementer_code() {
        let info = parse("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n");
        assert_eq!(info.vendor.as_deref(), Some("ARM"));
        assert_eq!(info.model_name, None);
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,200}") {
            let _ = parse(&text);
        }
    }
}
