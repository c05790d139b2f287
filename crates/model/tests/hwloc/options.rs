//! `NAME.test`: the `lstopo` options and environment behind `NAME.console`.
//! Kept on its own because it is the gatekeeper for new knobs: anything it
//! does not know is an error, so that an option that changes which NUMA
//! nodes or PUs `lstopo` shows is looked at before the comparison trusts it.

/// The `lstopo` options and `HWLOC_*` variables that change which NUMA nodes
/// and PUs it shows. Anything in a `.test` file not known here is an error,
/// so a new knob is looked at rather than silently ignored.
#[derive(Debug, Default, Clone)]
pub(crate) struct Knobs {
    /// `--whole-system`, `--disallowed` or `HWLOC_ALLOW=all`: show CPUs and
    /// nodes outside our cgroup too.
    pub(crate) whole_system: bool,
    /// `HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES`; unset means hwloc's default.
    pub(crate) keep_gpu_nodes: Option<bool>,
    /// `HWLOC_DEBUG_ALLOW_OVERLAPPING_NODE_CPUSETS` non-zero.
    pub(crate) allow_overlapping_nodes: bool,
}

pub(crate) fn parse_test(text: &str) -> Result<Knobs, String> {
    let mut knobs = Knobs::default();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!("unknown line `{line}`"));
        };
        let value = value.trim();
        match key.trim() {
            "source" | "target" => {}
            "options" => {
                let mut words = value.split_whitespace();
                while let Some(word) = words.next() {
                    match word {
                        "--whole-system" | "--disallowed" => knobs.whole_system = true,
                        // Output to stdout, verbosity, index style, caches and
                        // I/O devices: none adds or removes a NUMA node or PU.
                        "-" | "-v" | "--verbose" | "-p" | "--physical" | "-l" | "--logical" | "--no-icaches"
                        | "--whole-io" | "--no-io" => {}
                        // Type filters cannot drop NUMA nodes or PUs: hwloc
                        // refuses to filter either.
                        "--filter" => {
                            words.next().ok_or("--filter without a value")?;
                        }
                        other => {
                            return Err(format!(
                                "unknown lstopo option `{other}`: does it change NUMA nodes or PUs?"
                            ))
                        }
                    }
                }
            }
            "env" => {
                if value.starts_with("export ") {
                    continue;
                }
                let (name, setting) = value.split_once('=').ok_or_else(|| format!("env line `{value}`"))?;
                let setting = setting.trim().trim_matches('"');
                let number = || setting.parse::<i64>().unwrap_or(0);
                match name.trim() {
                    "HWLOC_ALLOW" => knobs.whole_system |= setting == "all",
                    "HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES" => knobs.keep_gpu_nodes = Some(number() != 0),
                    "HWLOC_DEBUG_ALLOW_OVERLAPPING_NODE_CPUSETS" => knobs.allow_overlapping_nodes = number() != 0,
                    // PCI locality, error messages and CPU kinds: no effect on
                    // NUMA nodes or PUs.
                    "HWLOC_PCI_LOCALITY" | "HWLOC_SHOW_ERRORS" | "HWLOC_CPUKINDS" => {}
                    other => return Err(format!("unknown variable `{other}`: does it change NUMA nodes or PUs?")),
                }
            }
            other => return Err(format!("unknown key `{other}`")),
        }
    }
    Ok(knobs)
}
