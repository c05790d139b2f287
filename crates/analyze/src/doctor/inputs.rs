//! Matching what a check reads against what could not be read.
//!
//! The readers note every file that exists but could not be used; matching
//! those paths against each check's input patterns ([`super::CheckId::inputs`])
//! tells which checks ran on partial input.

/// Whether `pattern` (see [`super::CheckId::inputs`]) names `path`.
pub fn reads(pattern: &str, path: &str) -> bool {
    let pattern: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let path: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    matches(&pattern, &path)
}

fn matches(pattern: &[&str], path: &[&str]) -> bool {
    match (pattern.first(), path.first()) {
        (None, None) => true,
        (Some(&"**"), _) => (0..=path.len()).any(|skip| matches(&pattern[1..], &path[skip..])),
        (Some(want), Some(have)) => {
            let fits = match want.strip_suffix('*') {
                Some(prefix) => have.starts_with(prefix),
                None => want == have,
            };
            fits && matches(&pattern[1..], &path[1..])
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert!(reads("/proc/irq/**", "/proc/irq/40/smp_affinity_list"));
        assert!(reads("/proc/irq/**", "/proc/irq"));
        assert!(!reads("/proc/irq/**", "/proc/interrupts"));
        assert!(reads(
            "/sys/devices/system/cpu/*/online",
            "/sys/devices/system/cpu/cpu3/online"
        ));
        assert!(!reads(
            "/sys/devices/system/cpu/*/online",
            "/sys/devices/system/cpu/online"
        ));
        assert!(!reads(
            "/sys/devices/system/cpu/*/online",
            "/sys/devices/system/cpu/cpu3/cache/online"
        ));
        assert!(reads(
            "/sys/devices/pci*/**",
            "/sys/devices/pci0000:10/0000:10:00.0/numa_node"
        ));
        assert!(!reads("/sys/devices/pci*/**", "/sys/devices/system/node/node0/meminfo"));
        assert!(reads("/proc", "/proc"));
        assert!(!reads("/proc", "/proc/1/comm"));
        assert!(reads("/proc/[pid]/comm", "/proc/[pid]/comm"));
    }
}
