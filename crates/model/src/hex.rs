//! Addresses in JSON documents: a hex string (`"0x55d4c5e01040"`), as
//! every document has written them, so a reader never meets a 64-bit
//! number a JSON parser may round.

use serde::{Serialize, Serializer};

/// For `#[serde(serialize_with = "numasleuth_model::hex::serialize")]`.
pub fn serialize<S: Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&Hex(*value))
}

/// For a list: `#[serde(serialize_with = "numasleuth_model::hex::serialize_all")]`.
pub fn serialize_all<S: Serializer>(values: &[u64], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(values.iter().map(|v| Hex(*v)))
}

/// An address that serializes, and displays, as its hex string: for
/// hand-written `Serialize` impls and document fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hex(pub u64);

impl std::fmt::Display for Hex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl Serialize for Hex {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize(&self.0, serializer)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_address_is_a_hex_string() {
        assert_eq!(
            serde_json::to_string(&super::Hex(0x55d4_c5e0_1040)).unwrap(),
            "\"0x55d4c5e01040\""
        );
        assert_eq!(serde_json::to_string(&super::Hex(0)).unwrap(), "\"0x0\"");
        assert_eq!(super::Hex(0x2a).to_string(), "0x2a");
        let mut list = serde_json::Serializer::new(Vec::new());
        super::serialize_all(&[0x1000, 0x2a], &mut list).unwrap();
        assert_eq!(String::from_utf8(list.into_inner()).unwrap(), r#"["0x1000","0x2a"]"#);
    }
}
