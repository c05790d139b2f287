//! `/proc/zoneinfo`: free pages against each zone's watermarks.
//!
//! This is the file that shows a node sitting at its low watermark, the
//! state behind the zone-reclaim latency incident: allocations fall back to
//! another node or stall in direct reclaim long before the node is "full".
//! Reading it is cheap (no allocator locks), unlike `/proc/slabinfo`.

use std::collections::BTreeMap;

use crate::error::{quote, ParseError};

pub const PATH: &str = "proc/zoneinfo";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Zone {
    pub node: u32,
    /// `DMA`, `DMA32`, `Normal`, `Movable`, `Device`.
    pub name: String,
    pub free_pages: u64,
    pub min_pages: u64,
    pub low_pages: u64,
    pub high_pages: u64,
    pub spanned_pages: u64,
    pub present_pages: u64,
    pub managed_pages: u64,
    /// lowmem_reserve against allocations aimed at each higher zone.
    pub protection_pages: Vec<u64>,
    /// Every other `name value` line of the zone, e.g. `numa_miss`.
    pub counters: BTreeMap<String, u64>,
}

/// A zone's kind, from its name in the header. A name this build does
/// not know is `Other` (the name itself stays in [`Zone::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneKind {
    /// The 16 MiB island legacy ISA devices need.
    Dma,
    Dma32,
    Normal,
    HighMem,
    Movable,
    Device,
    Other,
}

impl Zone {
    pub fn kind(&self) -> ZoneKind {
        match self.name.as_str() {
            "DMA" => ZoneKind::Dma,
            "DMA32" => ZoneKind::Dma32,
            "Normal" => ZoneKind::Normal,
            "HighMem" => ZoneKind::HighMem,
            "Movable" => ZoneKind::Movable,
            "Device" => ZoneKind::Device,
            _ => ZoneKind::Other,
        }
    }

    /// Free pages above the low watermark; negative when below it.
    /// Computed wide and clamped, so absurd counts cannot overflow.
    pub fn headroom_over_low_pages(&self) -> i64 {
        let headroom = i128::from(self.free_pages) - i128::from(self.low_pages);
        headroom.clamp(i64::MIN.into(), i64::MAX.into()) as i64
    }
}

pub fn parse(text: &str) -> Result<Vec<Zone>, ParseError> {
    let mut zones: Vec<Zone> = Vec::new();
    // Per-node stats come first in each node's first zone; they are not
    // zone properties, so skip them until the zone's own `pages free`.
    let mut in_zone_body = false;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let at = |message: String| ParseError::new(format!("line {}: {message}", index + 1));
        if let Some(rest) = line.strip_prefix("Node ") {
            zones.push(header(rest).map_err(|e| at(e.0))?);
            in_zone_body = false;
            continue;
        }
        let Some(zone) = zones.last_mut() else {
            if line.is_empty() {
                continue;
            }
            return Err(at(format!("`{}` before the first `Node N, zone` header", quote(line))));
        };
        if let Some(rest) = line.strip_prefix("pages free") {
            zone.free_pages = number(rest).ok_or_else(|| at(format!("`{}` has no page count", quote(line))))?;
            in_zone_body = true;
            continue;
        }
        if let Some(rest) = line.strip_prefix("protection:") {
            zone.protection_pages = protection(rest).map_err(|e| at(e.0))?;
            continue;
        }
        if !in_zone_body {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(name), Some(value), None) = (words.next(), words.next(), words.next()) else {
            // pagesets and other nested blocks end the zone's counters.
            in_zone_body = !line.starts_with("pagesets");
            continue;
        };
        let Ok(value) = value.parse::<u64>() else {
            // A watermark that does not parse would read as 0 and hide
            // pressure; other two-word lines may carry text.
            if ["min", "low", "high", "spanned", "present", "managed"].contains(&name) {
                return Err(at(format!("`{line}`: {name} is not a page count")));
            }
            continue;
        };
        match name {
            "min" => zone.min_pages = value,
            "low" => zone.low_pages = value,
            "high" => zone.high_pages = value,
            "spanned" => zone.spanned_pages = value,
            "present" => zone.present_pages = value,
            "managed" => zone.managed_pages = value,
            _ => {
                zone.counters.insert(name.to_string(), value);
            }
        }
    }
    if zones.is_empty() {
        return Err(ParseError::new("no zones"));
    }
    Ok(zones)
}

/// `Node N, zone NAME` after its `Node `: a new zone.
fn header(rest: &str) -> Result<Zone, ParseError> {
    let (node, zone) = rest
        .split_once(", zone")
        .ok_or_else(|| ParseError::new(format!("`Node {}` is not `Node N, zone NAME`", quote(rest))))?;
    let node = node
        .trim()
        .parse()
        .map_err(|_| ParseError::new(format!("`{}` is not a node", quote(node))))?;
    Ok(Zone {
        node,
        name: zone.trim().to_string(),
        ..Zone::default()
    })
}

/// `(0, 1234, 5678)` after `protection:`: the lowmem reserve per zone.
fn protection(rest: &str) -> Result<Vec<u64>, ParseError> {
    rest.trim()
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(|v| {
            v.trim()
                .parse()
                .map_err(|_| ParseError::new(format!("`{}` in protection is not a number", quote(v))))
        })
        .collect()
}

fn number(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Abridged from this project's development VM (Linux 6.18): the per-node
    // stats block, a zone, its pagesets, and a second zone.
    const VM: &str = "Node 0, zone      DMA
  per-node stats
      nr_inactive_anon 19183
      nr_active_anon 385
  pages free     3840
        boost    0
        min      44
        low      55
        high     66
        promo    77
        spanned  4095
        present  3998
        managed  3840
        cma      0
        protection: (0, 3019, 5707, 5707, 5707)
      nr_free_pages 3840
      numa_miss    0
  pagesets
    cpu: 0
              count:    0
              high:     0
  vm stats threshold: 4
  node_unreclaimable:  0
  start_pfn:           1
Node 0, zone    DMA32
  pages free     772917
        min      8914
        low      11142
        high     13370
        spanned  1044480
        present  782336
        managed  772917
        protection: (0, 0, 2688, 2688, 2688)
      numa_miss    12
";

    #[test]
    fn zones_and_watermarks() {
        let zones = parse(VM).unwrap();
        assert_eq!(zones.len(), 2);
        let dma = &zones[0];
        assert_eq!((dma.node, dma.name.as_str(), dma.kind()), (0, "DMA", ZoneKind::Dma));
        assert_eq!(
            (dma.free_pages, dma.min_pages, dma.low_pages, dma.high_pages),
            (3840, 44, 55, 66)
        );
        assert_eq!(dma.managed_pages, 3840);
        assert_eq!(dma.protection_pages, vec![0, 3019, 5707, 5707, 5707]);
        // The per-node block and the pageset `high:` must not leak in.
        assert!(!dma.counters.contains_key("nr_inactive_anon"));
        assert_eq!(dma.high_pages, 66);
        assert_eq!(zones[1].counters["numa_miss"], 12);
        assert_eq!(zones[1].headroom_over_low_pages(), 772917 - 11142);
    }

    #[test]
    fn zone_reclaim_incident_node_is_near_low() {
        // Node 1 Normal in the zone-reclaim incident write-up.
        let text = "Node 1, zone   Normal\n  pages free     174188\n        min      131132\n        low      163915\n        high     196698\n";
        let zone = &parse(text).unwrap()[0];
        assert_eq!(zone.headroom_over_low_pages(), 10273);
    }

    #[test]
    fn malformed() {
        assert!(parse("").is_err());
        assert!(parse("pages free 3\n").is_err());
        assert!(parse("Node x, zone DMA\n").is_err());
        assert!(parse("Node 0, zone DMA\n  pages free\n").is_err());
        assert!(parse("Node 0, zone DMA\n  pages free 1\n  protection: (0, x)\n").is_err());
    }

    #[test]
    fn a_watermark_that_is_not_a_number_is_malformed() {
        let text = "Node 0, zone   Normal\n  pages free     1100\n        min      lots\n";
        assert!(parse(text).unwrap_err().0.contains("min is not a page count"));
    }

    proptest! {
        #[test]
        fn never_panics(text in "(Node [0-9], zone [A-Za-z]{1,6}\n)?(  pages free [0-9]{0,5}\n)?[ a-z:()0-9,]{0,60}\n?") {
            let _ = parse(&text);
        }
    }

    /// Found while writing the `zoneinfo` fuzz harness, which calls this on
    /// every parsed zone (fuzz/regressions/zoneinfo/headroom-overflow): a
    /// low mark of 2^63 made the subtraction overflow (a panic in debug
    /// builds, a positive headroom in release ones).
    #[test]
    fn headroom_of_absurd_marks_clamps() {
        let zones = parse("Node 0, zone Normal\npages free 0\nlow 9223372036854775808\n").unwrap();
        assert_eq!(zones[0].headroom_over_low_pages(), i64::MIN);
        let zones = parse("Node 0, zone Normal\npages free 18446744073709551615\nlow 0\n").unwrap();
        assert_eq!(zones[0].headroom_over_low_pages(), i64::MAX);
    }
}
