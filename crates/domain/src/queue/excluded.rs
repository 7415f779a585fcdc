//! Why a fan was kept out of a line, counted by reason in the drop's report (`excluded`): a
//! refusal at the door writes no entry, so without its count it would leave no trace in the
//! line's record.

/// A reason, as the report names it (the error code the fan was answered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Exclusion {
    /// A first join the human check refused (403 `human_check_failed`).
    HumanCheckFailed,
}

impl Exclusion {
    /// Every reason: the report names each, counted or not.
    pub const ALL: [Exclusion; 1] = [Exclusion::HumanCheckFailed];

    pub fn as_str(self) -> &'static str {
        match self {
            Exclusion::HumanCheckFailed => "human_check_failed",
        }
    }
}

/// The counters a line's exclusions are spread over, one picked at random per refusal: at
/// 20,000 refusals a second each takes about 313 writes a second, under DynamoDB's 1,000 per
/// key.
pub const EXCLUSION_SHARDS: u32 = 64;
