//! The one hash of the project: stable across builds and machines, so a restarted or upgraded
//! operator compares what an earlier one wrote (applied-hash annotations, revisions).

/// 64-bit FNV-1a (the offset basis and prime of the FNV specification, draft-eastlake-fnv).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(PRIME)
    })
}

/// [`fnv1a`] of `value`'s compact JSON text (serde_json orders object keys, as built here without
/// its `preserve_order` feature), so the same value hashes alike however it was built.
pub fn json(value: &serde_json::Value) -> u64 {
    fnv1a(value.to_string().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_the_same_in_every_build() {
        // FNV-1a 64's published test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        // Over the JSON text with its keys in order, whatever order they were built in.
        let built = serde_json::json!({"b": 1, "a": [true]});
        assert_eq!(json(&built), fnv1a(br#"{"a":[true],"b":1}"#));
    }
}
