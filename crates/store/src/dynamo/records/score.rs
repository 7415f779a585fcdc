//! A fan's score on a board (`FAN#<userId>` / `SCORE#<board>`, and its sample copy) as a record.
//! Its attributes are numbers the opening adds to without reading them (`scoreBase` = score ×
//! 10^21, and `GSI4SK`, the rank key: the score and when it was reached), so they are read by
//! name: the rank key needs 128 bits, past what serde_dynamo carries.

use super::{SCHEMA_VERSION, check_version};
use crate::StoreError;
use crate::dynamo::{Item, key, number, s};
use crate::schema::{
    ENTITY, FAN_PREFIX, GSI4_PK, GSI4_SK, PK, SCORE_BASE, board_sample_pk, board_shard_pk, fan_pk,
    sample_sk, score_sk,
};
use domain::ids::UserId;
use domain::leaderboards::{Board, SCORE_UNIT, Score, is_sampled, of_rank_key, shard_of};

/// The version of the score items this release writes, and the newest it reads.
pub(crate) const SCORE_VERSION: u32 = 1;

/// The rank key of a score item (or of its index entry).
pub(crate) fn rank_key_of(item: &Item) -> Result<u128, StoreError> {
    item.get(GSI4_SK)
        .and_then(|value| value.as_n().ok())
        .and_then(|n| n.parse::<u128>().ok())
        .ok_or_else(|| StoreError::internal("score item: no rank key"))
}

/// The fan and score of a score item (or of its index entry, projected whole).
pub(crate) fn score_from_item(item: &Item) -> Result<(UserId, Score), StoreError> {
    check_version(item, "score", SCORE_VERSION)?;
    let corrupt = |what: &str| StoreError::internal(format!("score item: {what}"));
    let user_id = item
        .get(PK)
        .and_then(|value| value.as_s().ok())
        .and_then(|pk| pk.strip_prefix(FAN_PREFIX))
        .and_then(|id| UserId::parse(id).ok())
        .ok_or_else(|| corrupt("no `FAN#` key"))?;
    let (score, reached_at) =
        of_rank_key(rank_key_of(item)?).ok_or_else(|| corrupt("a rank key out of range"))?;
    Ok((user_id, Score { score, reached_at }))
}

/// The items of `user_id`'s `score` on `board` as the openings leave them: the score item in
/// the fan's shard of the board's index and, for a sampled fan, its copy in the board's sample.
pub(crate) fn score_items(user_id: &UserId, board: &Board, score: Score) -> Vec<Item> {
    let mut copies = vec![(score_sk(board), board_shard_pk(board, shard_of(user_id)))];
    if is_sampled(user_id) {
        copies.push((sample_sk(board), board_sample_pk(board)));
    }
    copies
        .into_iter()
        .map(|(sk, partition)| {
            let mut item = key(fan_pk(user_id), &sk);
            item.insert(ENTITY.into(), s("score"));
            item.insert(SCHEMA_VERSION.into(), number(SCORE_VERSION));
            item.insert(
                SCORE_BASE.into(),
                number(u128::from(score.score) * SCORE_UNIT),
            );
            item.insert(GSI4_PK.into(), s(partition));
            item.insert(GSI4_SK.into(), number(score.rank_key()));
            item
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use aws_sdk_dynamodb::types::AttributeValue;

    use super::*;
    use crate::dynamo::records::tests::{n, newer, refused, s};
    use domain::leaderboards::rank_key;
    use domain::timestamp::Timestamp;

    /// A score item as the opening writes it.
    fn score_item() -> Item {
        let at = Timestamp::parse("2026-11-25T21:04:00Z").unwrap();
        HashMap::from([
            ("PK".into(), s("FAN#auth0|zoe")),
            ("SK".into(), s("SCORE#league:nba")),
            (SCHEMA_VERSION.into(), n(1)),
            (
                "scoreBase".into(),
                AttributeValue::N((261u128 * 10u128.pow(21)).to_string()),
            ),
            (
                GSI4_SK.into(),
                AttributeValue::N(rank_key(261, at).to_string()),
            ),
            ("GSI4PK".into(), s("BOARD#league:nba#3")),
        ])
    }

    #[test]
    fn a_seeded_score_item_reads_back_as_its_score() {
        let at = Timestamp::parse("2026-11-25T21:04:00Z").unwrap();
        let score = Score {
            score: 261,
            reached_at: at,
        };
        let fan = UserId::parse("auth0|zoe").unwrap();
        let board = Board::parse("league:nba").unwrap();
        let items = score_items(&fan, &board, score);
        assert_eq!(score_from_item(&items[0]).unwrap(), (fan, score));
        let mut written = score_item();
        written.remove(GSI4_PK);
        let mut seeded = items[0].clone();
        seeded.remove(GSI4_PK);
        seeded.remove(ENTITY);
        assert_eq!(seeded, written, "as the opening writes it");
    }

    #[test]
    fn a_score_item_reads_as_its_fan_score_and_arrival() {
        let (user, score) = score_from_item(&score_item()).unwrap();
        assert_eq!(user.as_str(), "auth0|zoe");
        assert_eq!(score.score, 261);
        assert_eq!(score.reached_at.to_string(), "2026-11-25T21:04:00Z");
        refused(score_from_item(&newer(score_item())));
        let mut item = score_item();
        item.insert(GSI4_SK.into(), s("12"));
        assert!(
            score_from_item(&item).is_err(),
            "a rank key that is no number"
        );
    }
}
