//! Lowercase hex for bytes in JSON (serde `with` modules), as the queue's public record and
//! drand's relays write them. Decoding accepts either case.

/// A `[u8; 32]` as exactly 64 hex digits.
pub mod bytes32 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8; 32], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&hex::encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<[u8; 32], D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        let mut bytes = [0; 32];
        hex::decode_to_slice(text.as_bytes(), &mut bytes).map_err(serde::de::Error::custom)?;
        Ok(bytes)
    }
}

/// A `Vec<u8>` as hex digits, any even number of them.
pub mod bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&hex::encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        hex::decode(text.as_bytes()).map_err(serde::de::Error::custom)
    }
}
