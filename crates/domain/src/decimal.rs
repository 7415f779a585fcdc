//! Lengths of numbers written in decimal, for texts sized before they are written (a `String`
//! of exactly its length becomes a body or a header value with no second allocation).

/// The number of decimal digits of `value` (`0` has one).
pub fn decimal_len(value: u64) -> usize {
    value.checked_ilog10().map_or(1, |log| log as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_itoa_writes() {
        for value in [0, 9, 10, 99, 100, 12_345, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(decimal_len(value), itoa::Buffer::new().format(value).len());
        }
    }
}
