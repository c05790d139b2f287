//! Host-side handling of a guest's numasleuth output: the live `topo --json`,
//! the snapshot carried out base64-encoded, its offline replay with
//! `--root`, and turning it into a fixture tree.
//!
//! Why replay: `snapshot` must capture every file `topo` reads. Replaying
//! the capture on the host and getting the same answer as live in the guest
//! proves exactly that, on a real multi-node kernel.

use std::fs;
use std::path::Path;
use std::process::Command;

use base64::Engine;
use serde_json::Value;

use crate::env::HostEnv;

/// Fields that legitimately change between the live run and the replay.
pub fn is_volatile_key(key: &str) -> bool {
    // `provenance` says live vs snapshot and when: different by design.
    key == "memory_free_bytes" || key.contains("timestamp") || key == "provenance"
}

/// Removes volatile fields at any depth.
pub fn strip_volatile(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|k, _| !is_volatile_key(k));
            map.values_mut().for_each(strip_volatile);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_volatile),
        _ => {}
    }
}

/// Paths where `a` and `b` differ, as "path: a != b" lines, so a failure
/// says what differs instead of dumping two documents.
pub fn diff(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff_into("$", a, b, &mut out);
    out
}

fn diff_into(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                match y.get(k) {
                    Some(vb) => diff_into(&format!("{path}.{k}"), va, vb, out),
                    None => out.push(format!("{path}.{k}: {va} != (missing)")),
                }
            }
            for (k, vb) in y {
                if !x.contains_key(k) {
                    out.push(format!("{path}.{k}: (missing) != {vb}"));
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                diff_into(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        _ if a != b => out.push(format!("{path}: {a} != {b}")),
        _ => {}
    }
}

/// Decodes busybox `base64` output (wrapped at 76 columns).
pub fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| format!("snapshot base64: {e}"))
}

/// Runs the host copy of the static binary on a snapshot:
/// `numasleuth --root SNAPSHOT topo --json`.
pub fn replay(host: &HostEnv, snapshot: &Path) -> Result<Value, String> {
    let out = Command::new(&host.static_bin)
        .arg("--root")
        .arg(snapshot)
        .args(["topo", "--json"])
        .output()
        .map_err(|e| format!("running {}: {e}", host.static_bin.display()))?;
    if !out.status.success() {
        return Err(format!(
            "host replay `numasleuth --root {} topo --json` failed ({}): {}",
            snapshot.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "host replay printed invalid JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Replaces `dest` with the unpacked snapshot. Uses the host's `tar`, which
/// every machine that can run qemu has.
pub fn unpack_fixture(snapshot: &Path, dest: &Path) -> Result<(), String> {
    if dest.exists() {
        fs::remove_dir_all(dest).map_err(|e| format!("removing {}: {e}", dest.display()))?;
    }
    fs::create_dir_all(dest).map_err(|e| format!("creating {}: {e}", dest.display()))?;
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(snapshot)
        .arg("-C")
        .arg(dest)
        // A snapshot holds no special files we want as such; plain modes.
        .arg("--no-same-owner")
        .status()
        .map_err(|e| format!("running tar: {e}"))?;
    if !status.success() {
        return Err(format!("tar -xzf {} failed ({status})", snapshot.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn volatile_fields_go_at_any_depth() {
        let mut v = json!({"nodes": [{"id": 0, "memory_free_bytes": 5, "memory_total_bytes": 9}],
                           "capture_timestamp_ns": 1, "x": {"timestamp": 2, "y": 3}});
        strip_volatile(&mut v);
        assert_eq!(v, json!({"nodes": [{"id": 0, "memory_total_bytes": 9}], "x": {"y": 3}}));
    }

    #[test]
    fn diff_names_paths() {
        let a = json!({"nodes": [{"cpus": [0, 1]}], "w": []});
        let b = json!({"nodes": [{"cpus": [0, 2]}], "v": 1, "w": []});
        let d = diff(&a, &b);
        assert_eq!(d, vec!["$.nodes[0].cpus[1]: 1 != 2", "$.v: (missing) != 1"]);
        assert!(diff(&a, &a).is_empty());
    }

    #[test]
    fn base64_with_line_breaks() {
        assert_eq!(decode_base64("aGVs\nbG8=\n").unwrap(), b"hello");
        assert!(decode_base64("!!").is_err());
    }
}
