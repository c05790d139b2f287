//! What the payloads mean: addresses, the operation, events and the data
//! source, each read from the bits the architecture (or, for the data
//! source, Neoverse's technical reference manuals) gives them.

use numasleuth_model::perf::decoded::AccessKind;

/// An instruction address (the PC, or a branch target) and where it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstructionAddress {
    /// Bits 55:0 of the payload, sign-extended from bit 55 (the top byte
    /// holds the flags below, not address bits).
    pub address: u64,
    /// Bits 62:61: the exception level, 0 for user code.
    pub exception_level: u8,
    /// Bit 63: the non-secure state.
    pub non_secure: bool,
}

impl InstructionAddress {
    pub fn from_payload(payload: u64) -> Self {
        InstructionAddress {
            address: sign_extend_55(payload),
            exception_level: ((payload >> 61) & 0x3) as u8,
            non_secure: payload >> 63 == 1,
        }
    }
}

/// A data virtual address: the top byte may be a tag (top-byte-ignore,
/// memory tagging), so it is dropped and bit 55, which chooses the upper
/// or lower half of the address space, fills it, as the MMU reads it.
/// Linux's perf fills it only when bits 55:52 are all set; the two agree
/// for every address a 48- or 52-bit address space can hold.
pub fn data_virtual_address(payload: u64) -> u64 {
    sign_extend_55(payload)
}

/// A data physical address: bits 55:0 (the top byte holds the security
/// state and, where present, the memory attributes).
pub fn data_physical_address(payload: u64) -> u64 {
    payload & ADDRESS_BITS
}

const ADDRESS_BITS: u64 = (1 << 56) - 1;

fn sign_extend_55(payload: u64) -> u64 {
    let low = payload & ADDRESS_BITS;
    if low >> 55 == 1 {
        low | !ADDRESS_BITS
    } else {
        low
    }
}

/// What the sampled operation was, from the Operation Type packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    pub kind: OperationKind,
    /// It moved SIMD, floating-point, SVE or SME registers (or, for an
    /// "other" operation, computed on them).
    pub simd_fp: bool,
    /// The header's class (0 other, 1 load/store, 2 branch) and the
    /// payload byte, as recorded, for what the kinds above leave out.
    pub class: u8,
    pub payload: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationKind {
    Load,
    Store,
    /// An atomic (`cas`, `swp`, `ldadd`…) or exclusive (`ldxr`, `stxr`)
    /// access: one side of a read-modify-write of its line. `store`: the
    /// packet's store bit.
    AtomicOrExclusive {
        store: bool,
    },
    Branch {
        conditional: bool,
        indirect: bool,
    },
    Other,
}

/// Load/store subclass bits (payload bits 7:1), as the architecture
/// numbers them.
const LDST_EXTENDED_MASK: u8 = 0xe2;
const LDST_EXTENDED: u8 = 0x02;
const LDST_ATOMIC: u8 = 1 << 2;
const LDST_EXCLUSIVE: u8 = 1 << 3;
const LDST_SUBCLASS_MASK: u8 = 0xfe;
const LDST_SIMD_FP: u8 = 0x04;
const LDST_SVE_SME_MASK: u8 = 0x0a;
const LDST_SVE_SME: u8 = 0x08;
/// "Other" subclass: bit 3 with bits 7 and 0 clear is an SVE operation,
/// with bit 7 set an SME one; otherwise bits 2 and 1 say SIMD and FP.
const OTHER_VECTOR_MASK: u8 = 0x89;
const OTHER_SVE: u8 = 0x08;
const OTHER_SME: u8 = 0x88;
const OTHER_SIMD_OR_FP: u8 = 0x06;

impl Operation {
    /// The packet's class (the header's low two bits) and its one-byte
    /// payload (a wider payload's higher bytes are not defined).
    pub fn from_packet(class: u8, payload: u64) -> Self {
        let byte = (payload & 0xff) as u8;
        let (kind, simd_fp) = match class {
            1 => load_store(byte),
            2 => (
                OperationKind::Branch {
                    conditional: byte & 1 == 1,
                    indirect: byte & 2 == 2,
                },
                false,
            ),
            0 => (OperationKind::Other, other_on_vectors(byte)),
            // Class 3 is reserved: an operation of a kind not named yet.
            _ => (OperationKind::Other, false),
        };
        Operation {
            kind,
            simd_fp,
            class,
            payload: byte,
        }
    }

    /// How the tally counts it: `None` for an operation that touches no
    /// data memory.
    pub fn access_kind(self) -> Option<AccessKind> {
        match self.kind {
            OperationKind::Load => Some(AccessKind::Read),
            OperationKind::Store => Some(AccessKind::Write),
            OperationKind::AtomicOrExclusive { .. } => Some(AccessKind::ReadModifyWrite),
            OperationKind::Branch { .. } | OperationKind::Other => None,
        }
    }
}

fn load_store(byte: u8) -> (OperationKind, bool) {
    let store = byte & 1 == 1;
    let plain = if store {
        OperationKind::Store
    } else {
        OperationKind::Load
    };
    if byte & LDST_EXTENDED_MASK == LDST_EXTENDED {
        // The extended subclass: atomic, exclusive, acquire/release. An
        // acquire or release alone is an ordinary load or store.
        if byte & (LDST_ATOMIC | LDST_EXCLUSIVE) != 0 {
            return (OperationKind::AtomicOrExclusive { store }, false);
        }
        return (plain, false);
    }
    let vector = byte & LDST_SUBCLASS_MASK == LDST_SIMD_FP || byte & LDST_SVE_SME_MASK == LDST_SVE_SME;
    (plain, vector)
}

fn other_on_vectors(byte: u8) -> bool {
    match byte & OTHER_VECTOR_MASK {
        OTHER_SVE | OTHER_SME => true,
        _ => byte & 0xf8 == 0 && byte & OTHER_SIMD_OR_FP != 0,
    }
}

/// The Events packet's bits, as recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Events {
    pub bits: u64,
    /// Bytes of payload the packet had (0: no Events packet): an event
    /// whose bit lies beyond them was not recorded either way.
    pub payload_bytes: u8,
}

/// The events the architecture names, by bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    ExceptionGenerated = 0,
    Retired = 1,
    L1dAccess = 2,
    L1dRefill = 3,
    TlbAccess = 4,
    TlbWalk = 5,
    NotTaken = 6,
    Mispredicted = 7,
    LlcAccess = 8,
    LlcRefill = 9,
    RemoteAccess = 10,
    Alignment = 11,
    Transactional = 16,
    PartialPredicate = 17,
    EmptyPredicate = 18,
    L2dAccess = 19,
    L2dRefill = 20,
    CacheDataModified = 21,
    RecentlyFetched = 22,
    DataSnooped = 23,
}

impl Events {
    pub fn has(self, event: Event) -> bool {
        (self.bits >> (event as u32)) & 1 == 1
    }
    /// The L1 data cache missed (an L1D refill).
    pub fn l1d_miss(self) -> bool {
        self.has(Event::L1dRefill)
    }
    /// The translation missed the TLB (a walk).
    pub fn tlb_miss(self) -> bool {
        self.has(Event::TlbWalk)
    }
    pub fn llc_miss(self) -> bool {
        self.has(Event::LlcRefill)
    }
    /// The data came from another socket or chip.
    pub fn remote_access(self) -> bool {
        self.has(Event::RemoteAccess)
    }
}

/// The Data Source packet's payload, as recorded: its meaning is
/// IMPLEMENTATION DEFINED, so it is kept raw and read as Neoverse's only
/// when asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataSource {
    pub raw: u64,
}

/// Where the data came from, coarsely, in Neoverse's encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SourceClass {
    L1,
    L2,
    /// Another core's cache, this or another cluster's, or the system
    /// level cache: the line was on the chip, not in this core.
    PeerOrLlc,
    Dram,
    /// Another chip (socket) answered.
    Remote,
}

impl DataSource {
    /// The class when the payload is read in the encoding the Neoverse
    /// N1, N2, V1 and V2 technical reference manuals give (and Linux's
    /// perf uses for them): 0x0 L1D, 0x8 L2, 0x9 a peer core, 0xa the
    /// local cluster, 0xb the system cache, 0xc a peer cluster, 0xd
    /// remote, 0xe DRAM. `None` for any other value. Whether this core
    /// uses the encoding is for the caller to know (its MIDR).
    pub fn neoverse_class(self) -> Option<SourceClass> {
        match self.raw {
            0x0 => Some(SourceClass::L1),
            0x8 => Some(SourceClass::L2),
            0x9..=0xc => Some(SourceClass::PeerOrLlc),
            0xd => Some(SourceClass::Remote),
            0xe => Some(SourceClass::Dram),
            _ => None,
        }
    }
}

/// A Context packet: the value of CONTEXTIDR_EL1 or CONTEXTIDR_EL2. It is
/// the PID (Linux's TID) of the running thread only when the kernel was
/// built with `CONFIG_PID_IN_CONTEXTIDR` (and the event was opened with
/// the right to trace it); otherwise no Context packet is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    pub value: u32,
    /// The header's index: 0 CONTEXTIDR_EL1, 1 CONTEXTIDR_EL2.
    pub register_index: u8,
}
