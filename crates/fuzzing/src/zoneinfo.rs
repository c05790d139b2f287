//! `/proc/zoneinfo`: zones, watermarks and counters.

use numasleuth_kernel::procfs::zoneinfo;

use crate::text;

pub fn run(data: &[u8]) {
    let text = text(data);
    if let Ok(zones) = zoneinfo::parse(&text) {
        assert!(!zones.is_empty());
        let headers = text.lines().filter(|l| l.trim().starts_with("Node ")).count();
        assert_eq!(zones.len(), headers, "one zone per `Node N, zone` header");
        for zone in &zones {
            let headroom = zone.headroom_over_low_pages();
            if zone.free_pages < zone.low_pages {
                assert!(
                    headroom < 0,
                    "{} pages free under a low mark of {} reads as headroom",
                    zone.free_pages,
                    zone.low_pages
                );
            }
        }
    }
}
