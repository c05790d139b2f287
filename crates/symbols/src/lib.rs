//! ELF sections and symbols of binaries and shared objects, and where they
//! sit in a running process.
//!
//! `inspect` needs to know which pages of a process are `.bss` of which
//! binary, `lines` which symbols share a cache line, and `move`/`watch`
//! the run-time address of a symbol. All of that is the same three steps:
//! read an object's section and program headers ([`image`]), read its
//! symbols ([`symbols`]), and place it in a process with its load bias
//! ([`placement`], [`process`]). Files are opened through the injectable
//! root, preferring `/proc/PID/map_files` and `/proc/PID/root` on a live
//! system so containers and deleted binaries work. The reverse question,
//! which function and source line an instruction address belongs to
//! (`watch`), is [`code`] with [`debuginfo`].

pub mod captured;
pub mod code;
pub mod debuginfo;
pub mod demangle;
pub mod error;
pub mod image;
pub mod limits;
pub mod mapped;
pub mod open;
pub mod placement;
pub mod process;
pub mod suggest;
pub mod symbols;

pub use code::{locate_all, CodeLocation};
pub use error::SymbolError;
pub use image::{ElfImage, LoadSegment, Section, SectionClass};
pub use mapped::MappedObjects;
pub use placement::{PlacedObject, SectionSpan};
pub use process::{ObjectPlacer, ProcessObjects, SectionLocation, SymbolLocation};
pub use symbols::{Symbol, SymbolKind};
