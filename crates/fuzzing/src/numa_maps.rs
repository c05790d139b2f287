//! `/proc/PID/numa_maps`: lines, policies and escaped paths.

use numasleuth_kernel::procfs::numa_maps;

use crate::text;

pub fn run(data: &[u8]) {
    let text = text(data);
    if let Ok(entries) = numa_maps::parse(&text) {
        assert_eq!(entries.len(), text.lines().filter(|l| !l.trim().is_empty()).count());
        for entry in &entries {
            let _ = (entry.resident_pages(), entry.page_size_bytes());
            if let Some(policy) = &entry.policy {
                let _ = (policy.mode.restricts_nodes(), policy.mode.interleaves());
            }
        }
    }
    // The first line alone as a policy: what parses prints back the same.
    let first = text.lines().next().unwrap_or_default();
    if let Ok(policy) = numa_maps::parse_policy(first) {
        let shown = policy.to_string();
        let again =
            numa_maps::parse_policy(&shown).unwrap_or_else(|e| panic!("`{shown}` does not parse back: {}", e.0));
        assert_eq!(again, policy, "`{first}` shown as `{shown}` parses differently");
    }
    // Unescaping ASCII never lengthens it: `\ooo` is four bytes, and what it
    // stands for at most three (a replacement character).
    if text.is_ascii() {
        let plain = numa_maps::unescape(&text);
        assert!(plain.len() <= text.len(), "`{text}` unescapes to the longer `{plain}`");
        if !text.contains('\\') {
            assert_eq!(plain, text);
        }
    }
}
