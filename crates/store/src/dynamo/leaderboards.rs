//! The leaderboards on DynamoDB (docs/leaderboards.md). A fan's score on a board is their own
//! item (`FAN#<userId>` / `SCORE#<board>`), added to by each opening's transaction without a
//! read; its `GSI4` entry sits in one of the board's [`BOARD_SHARDS`] partitions (the fan's
//! shard), so no key takes every opening. A board's top is the merge of every shard's top; a
//! rank is a count of the entries above, shard by shard.

use std::collections::VecDeque;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{Select, TransactWriteItem};
use tokio::task::JoinSet;

use crate::StoreError;
use crate::dynamo::records::{
    SCHEMA_VERSION, SCORE_VERSION, ShowRecord, StoredShow, rank_key_of, read_record,
    score_from_item, score_items,
};
use crate::dynamo::transaction::update_always;
use crate::dynamo::{DynamoStore, Item, classify, key, number, s};
use crate::leaderboards::{GetStanding, ReadBoard, SeedScores};
use crate::schema::{
    ENTITY, GSI4, GSI4_PK, GSI4_SK, SCORE_BASE, SHOW_SK, board_sample_pk, board_shard_pk, fan_pk,
    sample_sk, score_sk,
};
use domain::ids::UserId;
use domain::leaderboards::{
    BOARD_SHARDS, Board, BoardEntry, EXACT_RANK_LIMIT, MAX_BOARD_ENTRIES, MAX_WALKED, Rank,
    SCORE_UNIT, Score, Standing, is_sampled, reached_part, shard_of,
};
use domain::timestamp::Timestamp;

/// The entries of a shard's page, whatever the limit asked. A shard reads its next page only
/// once its page was walked whole, so a read of at most [`MAX_WALKED`] fans makes at most
/// `BOARD_SHARDS` first pages and `MAX_WALKED / BOARD_PAGE - 1` more Queries
/// (docs/design.md, What one request costs).
const BOARD_PAGE: i32 = 100;

/// The fans whose faces one BatchGetItem reads (DynamoDB's most keys in one): an unnamed fan
/// walked past costs a hundredth of a request, whatever the limit asked.
const FACE_BATCH: usize = 100;

/// The additions of one opening worth `points` to its fan's score on each of `boards` (and to
/// their sample copies, for a sampled fan), each one update that reads nothing: the score part
/// of the rank key grows by `points`, and the rank key is set from it with `now` as the instant
/// the new score was reached. Nothing when the opening scores nothing.
pub(crate) fn score_updates(
    table: &str,
    user_id: &UserId,
    boards: &[Board],
    points: u64,
    now: Timestamp,
) -> Result<Vec<TransactWriteItem>, StoreError> {
    if points == 0 {
        return Ok(Vec::new());
    }
    let base = u128::from(points) * SCORE_UNIT;
    let mut updates = Vec::new();
    for board in boards {
        let mut copies = vec![(score_sk(board), board_shard_pk(board, shard_of(user_id)))];
        if is_sampled(user_id) {
            copies.push((sample_sk(board), board_sample_pk(board)));
        }
        for (sk, partition) in copies {
            updates.push(update_always(
                table,
                key(fan_pk(user_id), &sk),
                "SET #entity = :entity, #sv = :sv, #pk4 = :pk4, \
                 #base = if_not_exists(#base, :zero) + :base, \
                 #sk4 = if_not_exists(#base, :zero) + :key",
                &[
                    ("#entity", ENTITY),
                    ("#sv", SCHEMA_VERSION),
                    ("#pk4", GSI4_PK),
                    ("#base", SCORE_BASE),
                    ("#sk4", GSI4_SK),
                ],
                vec![
                    (":entity", s("score")),
                    (":sv", number(SCORE_VERSION)),
                    (":pk4", s(partition)),
                    (":zero", number(0)),
                    (":base", number(base)),
                    (":key", number(base + reached_part(now))),
                ],
            )?);
        }
    }
    Ok(updates)
}

/// One page of [`BOARD_PAGE`] entries of a `GSI4` partition, highest rank key first, from
/// `start`.
async fn index_page(
    client: Client,
    table: String,
    partition: String,
    start: Option<Item>,
) -> Result<(Vec<Item>, Option<Item>), StoreError> {
    let output = client
        .query()
        .table_name(table)
        .index_name(GSI4)
        .key_condition_expression("#pk = :pk")
        .expression_attribute_names("#pk", GSI4_PK)
        .expression_attribute_values(":pk", s(partition))
        .scan_index_forward(false)
        .limit(BOARD_PAGE)
        .set_exclusive_start_key(start)
        .send()
        .await
        .map_err(|e| classify("Query", e))?;
    Ok((
        output.items.unwrap_or_default(),
        output.last_evaluated_key.filter(|key| !key.is_empty()),
    ))
}

/// The entries of one shard read so far, and where its next page starts.
struct ShardPages {
    partition: String,
    read: VecDeque<(u128, UserId, Score)>,
    next: Option<Item>,
    more: bool,
}

impl ShardPages {
    fn take_page(&mut self, (items, next): (Vec<Item>, Option<Item>)) -> Result<(), StoreError> {
        for item in &items {
            let (user_id, score) = score_from_item(item)?;
            self.read.push_back((score.rank_key(), user_id, score));
        }
        self.more = next.is_some();
        self.next = next;
        Ok(())
    }
}

/// Counts the entries of `partition` whose rank key compares to `key` as `comparison` (`>` or
/// `<`), from `start`, stopping once `cap` are counted; returns the count and where it stopped
/// (`None`: the partition is counted to its end).
async fn count_entries(
    client: Client,
    table: String,
    partition: String,
    comparison: &'static str,
    key: u128,
    mut start: Option<Item>,
    cap: u64,
) -> Result<(u64, Option<Item>), StoreError> {
    let mut counted = 0u64;
    loop {
        let output = client
            .query()
            .table_name(&table)
            .index_name(GSI4)
            .key_condition_expression(format!("#pk = :pk AND #sk {comparison} :key"))
            .expression_attribute_names("#pk", GSI4_PK)
            .expression_attribute_names("#sk", GSI4_SK)
            .expression_attribute_values(":pk", s(partition.clone()))
            .expression_attribute_values(":key", number(key))
            .select(Select::Count)
            .limit(i32::try_from(cap - counted).unwrap_or(i32::MAX))
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| classify("Query", e))?;
        counted += u64::try_from(output.count).unwrap_or(0);
        start = output.last_evaluated_key.filter(|key| !key.is_empty());
        if start.is_none() || counted >= cap {
            return Ok((counted, start));
        }
    }
}

impl DynamoStore {
    /// The display names and avatars of `fans` (their public faces, one BatchGetItem).
    async fn faces(&self, fans: &[UserId]) -> Result<Vec<Option<StoredShow>>, StoreError> {
        let keys: Vec<Item> = fans
            .iter()
            .map(|user_id| key(fan_pk(user_id), SHOW_SK))
            .collect();
        let mut faces = Vec::with_capacity(fans.len());
        for chunk in keys.chunks(100) {
            for show in self.batch_get_slice(chunk, false).await? {
                faces.push(
                    show.map(|item| read_record::<ShowRecord, StoredShow>(item, "show"))
                        .transpose()?,
                );
            }
        }
        Ok(faces)
    }

    /// Every shard of `board` with its first page, read at once: the board's top is among them.
    async fn first_pages(&self, board: &Board) -> Result<Vec<ShardPages>, StoreError> {
        let mut shards: Vec<ShardPages> = (0..BOARD_SHARDS)
            .map(|shard| ShardPages {
                partition: board_shard_pk(board, shard),
                read: VecDeque::new(),
                next: None,
                more: true,
            })
            .collect();
        let mut pages = JoinSet::new();
        for (index, shard) in shards.iter().enumerate() {
            let page = index_page(
                self.client.clone(),
                self.table.clone(),
                shard.partition.clone(),
                None,
            );
            pages.spawn(async move { (index, page.await) });
        }
        for (index, page) in pages.join_all().await {
            shards[index].take_page(page?)?;
        }
        Ok(shards)
    }

    /// The board's next `wanted` fans in its order (fewer at its end), merged from `shards`: a
    /// shard walked to the end of its page, with more, reads its next page first (its next
    /// entry may be the board's next), so a shard reads on only after a whole page was walked.
    async fn next_fans(
        &self,
        shards: &mut [ShardPages],
        wanted: usize,
    ) -> Result<Vec<(UserId, Score)>, StoreError> {
        let mut fans = Vec::with_capacity(wanted);
        while fans.len() < wanted {
            for shard in shards
                .iter_mut()
                .filter(|shard| shard.read.is_empty() && shard.more)
            {
                let page = index_page(
                    self.client.clone(),
                    self.table.clone(),
                    shard.partition.clone(),
                    shard.next.take(),
                )
                .await?;
                shard.take_page(page)?;
            }
            let Some(best) = shards
                .iter_mut()
                .filter(|shard| !shard.read.is_empty())
                .max_by_key(|shard| shard.read.front().map(|(key, ..)| *key))
            else {
                break;
            };
            fans.extend(
                best.read
                    .pop_front()
                    .map(|(_, user_id, score)| (user_id, score)),
            );
        }
        Ok(fans)
    }

    /// How many fans are ahead of the rank key `key` on `board`, counting up to
    /// [`EXACT_RANK_LIMIT`]: every shard at once up to its share of the limit, then the shards
    /// with more one after another up to what is left of it.
    async fn count_ahead(&self, board: &Board, key: u128) -> Result<u64, StoreError> {
        let share = EXACT_RANK_LIMIT / u64::from(BOARD_SHARDS);
        let mut counts = JoinSet::new();
        for shard in 0..BOARD_SHARDS {
            counts.spawn(count_entries(
                self.client.clone(),
                self.table.clone(),
                board_shard_pk(board, shard),
                ">",
                key,
                None,
                share,
            ));
        }
        let mut ahead = 0;
        let mut unfinished = Vec::new();
        for counted in counts.join_all().await {
            let (count, rest) = counted?;
            ahead += count;
            unfinished.extend(rest);
        }
        for start in unfinished {
            if ahead >= EXACT_RANK_LIMIT {
                break;
            }
            let partition = start
                .get(GSI4_PK)
                .and_then(|value| value.as_s().ok())
                .cloned()
                .ok_or_else(|| StoreError::internal("a count stopped without its partition"))?;
            let (count, _) = count_entries(
                self.client.clone(),
                self.table.clone(),
                partition,
                ">",
                key,
                Some(start),
                EXACT_RANK_LIMIT - ahead,
            )
            .await?;
            ahead += count;
        }
        Ok(ahead)
    }
}

impl ReadBoard for DynamoStore {
    async fn read_board(&self, board: &Board, limit: usize) -> Result<Vec<BoardEntry>, StoreError> {
        let limit = limit.clamp(1, MAX_BOARD_ENTRIES);
        let mut shards = self.first_pages(board).await?;
        let mut entries = Vec::new();
        let mut walked = 0;
        while entries.len() < limit && walked < MAX_WALKED {
            let fans = self
                .next_fans(&mut shards, FACE_BATCH.min(MAX_WALKED - walked))
                .await?;
            if fans.is_empty() {
                break;
            }
            let ids: Vec<UserId> = fans.iter().map(|(user_id, _)| user_id.clone()).collect();
            let faces = self.faces(&ids).await?;
            for ((_, score), face) in fans.into_iter().zip(faces) {
                walked += 1;
                let Some(room) = face.map(|face| face.room) else {
                    continue;
                };
                let Some(display_name) = room.display_name else {
                    continue;
                };
                entries.push(BoardEntry {
                    rank: walked as u64,
                    display_name,
                    avatar_url: room.avatar_url,
                    score: score.score,
                });
                if entries.len() == limit {
                    break;
                }
            }
        }
        Ok(entries)
    }
}

impl GetStanding for DynamoStore {
    async fn get_standing(
        &self,
        board: &Board,
        user_id: &UserId,
    ) -> Result<Option<Standing>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(fan_pk(user_id), &score_sk(board))))
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        let Some(item) = output.item else {
            return Ok(None);
        };
        let (_, score) = score_from_item(&item)?;
        let key = rank_key_of(&item)?;
        let rank = match Rank::exact(self.count_ahead(board, key).await?) {
            Some(rank) => rank,
            None => {
                let sample = || {
                    (
                        self.client.clone(),
                        self.table.clone(),
                        board_sample_pk(board),
                    )
                };
                let (client, table, partition) = sample();
                let ahead = count_entries(client, table, partition, ">", key, None, u64::MAX);
                let (client, table, partition) = sample();
                let behind = count_entries(client, table, partition, "<", key, None, u64::MAX);
                let (ahead, behind) = tokio::try_join!(ahead, behind)?;
                Rank::estimated(ahead.0, behind.0)
            }
        };
        Ok(Some(Standing { score, rank }))
    }
}

impl SeedScores for DynamoStore {
    async fn seed_scores(
        &self,
        board: &Board,
        scores: &[(UserId, Score)],
    ) -> Result<(), StoreError> {
        let items = scores
            .iter()
            .flat_map(|(user_id, score)| score_items(user_id, board, *score))
            .collect();
        self.put_all(items).await
    }
}
