//! numasleuth's QEMU test bed: boots real Linux kernels on multi-node
//! virtual machines and checks what numasleuth reads there.
//!
//! Why it exists: our own machines have one NUMA node, so unit tests and
//! fixture trees alone cannot show that numasleuth reads a live multi-node
//! kernel right. Each guest is a busybox initramfs with the static
//! numasleuth binary; its /init runs the commands and prints framed results
//! on the serial console, which the host parses and checks. The same runs
//! produce the `tests/fixtures/qemu-*` trees (`NUMASLEUTH_UPDATE_FIXTURES=1`).
//!
//! Flow: [`env`](mod@env) finds the kernel, busybox, qemu and binary; [`guests`]
//! describes the machines; [`initramfs`] (with [`cpio`]) builds the image;
//! [`guest`] boots it; [`console`] cuts the results out; [`facts`] and
//! [`topo`] interpret them; [`check`] ties a run to its shared checks.

pub mod check;
pub mod console;
pub mod cpio;
pub mod doc;
pub mod env;
pub mod facts;
pub mod guest;
pub mod guests;
pub mod initramfs;
pub mod lock;
pub mod program;
pub mod topo;
