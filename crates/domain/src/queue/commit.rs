//! What the keeper's close and draw compute (pure): the entrant set committed in pages with its
//! Merkle root, and the drawn order in pages. Both stores write what these return, so a line
//! closes and draws the same way on either.

use crate::ids::{EntryId, UserId};
use crate::queue::fairness::draw_order;
use crate::queue::merkle;
use crate::queue::state::{
    ENTRANTS_PAGE_SIZE, EntrantPage, EntrantsIndex, ORDER_PAGE_SIZE, OrderPage, OrderedEntry,
    QueueState, StoredStatus, round_for_commit,
};
use crate::timestamp::Timestamp;

/// A closed line's commitment: the sorted entry ids in pages, their index, how many, and their
/// root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commitment {
    pub pages: Vec<EntrantPage>,
    pub index: EntrantsIndex,
    pub entrants: u64,
    pub root: [u8; 32],
}

/// Commits `ids` (in any order; one entry per fan, so no id twice).
pub fn commit(mut ids: Vec<EntryId>) -> Commitment {
    ids.sort_unstable();
    let entrants = ids.len() as u64;
    let pages: Vec<EntrantPage> = ids
        .chunks(ENTRANTS_PAGE_SIZE)
        .zip(0u32..)
        .map(|(ids, page)| EntrantPage {
            page,
            ids: ids.to_vec(),
        })
        .collect();
    let index = EntrantsIndex {
        first_ids: pages.iter().map(|page| page.ids[0].clone()).collect(),
        page_roots: pages
            .iter()
            .map(|page| merkle::root(&page.strings()))
            .collect(),
    };
    Commitment {
        root: merkle::root_over(index.page_roots.clone()),
        pages,
        index,
        entrants,
    }
}

impl Commitment {
    /// The close at `at`: the commitment on `state`, its status `closed`, its round re-fixed if
    /// the commit came too late for the terms' one ([`round_for_commit`]).
    pub fn close(&self, state: &mut QueueState, at: Timestamp) {
        state.status = StoredStatus::Closed;
        state.entrants = Some(self.entrants);
        state.entrants_root = Some(self.root);
        state.entrant_pages = Some(u32::try_from(self.pages.len()).unwrap_or(u32::MAX));
        state.committed_at = Some(at);
        state.beacon_round = round_for_commit(state.beacon_round, at);
    }
}

/// The drawn order of `entries` ((entry id, user id), in any order) with the queue's `seed` and
/// the beacon's `randomness`: position 1 first.
pub fn order(
    seed: &[u8; 32],
    randomness: &[u8; 32],
    mut entries: Vec<(EntryId, UserId)>,
) -> Vec<OrderedEntry> {
    entries.sort_unstable();
    let ids: Vec<String> = entries
        .iter()
        .map(|(id, _)| id.as_str().to_owned())
        .collect();
    draw_order(seed, randomness, &ids)
        .into_iter()
        .map(|id| {
            let at = entries
                .binary_search_by(|(entry_id, _)| entry_id.as_str().cmp(id))
                .expect("every drawn id is an entry's");
            let (entry_id, user_id) = &entries[at];
            OrderedEntry {
                entry_id: entry_id.clone(),
                user_id: user_id.clone(),
            }
        })
        .collect()
}

/// `order` in pages of [`ORDER_PAGE_SIZE`].
pub fn order_pages(order: &[OrderedEntry]) -> Vec<OrderPage> {
    order
        .chunks(ORDER_PAGE_SIZE)
        .zip(0u32..)
        .map(|(entries, page)| OrderPage {
            page,
            entries: entries.to_vec(),
        })
        .collect()
}

/// The page of the order holding `position` (from 1), and the index in it.
pub fn order_page_of(position: u64) -> (u32, usize) {
    let index = position.saturating_sub(1);
    let size = ORDER_PAGE_SIZE as u64;
    (
        u32::try_from(index / size).unwrap_or(u32::MAX),
        (index % size) as usize,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u32) -> EntryId {
        EntryId::parse(format!("{n:032x}")).unwrap()
    }

    fn user(n: u32) -> UserId {
        UserId::parse(format!("fan-{n}")).unwrap()
    }

    #[test]
    fn the_commitment_pages_the_sorted_ids_under_their_root() {
        let ids: Vec<EntryId> = (0..4_500).rev().map(id).collect();
        let commitment = commit(ids);
        assert_eq!(commitment.entrants, 4_500);
        assert_eq!(
            commitment
                .pages
                .iter()
                .map(|p| p.ids.len())
                .collect::<Vec<_>>(),
            [2_048, 2_048, 404]
        );
        let all: Vec<String> = commitment
            .pages
            .iter()
            .flat_map(|p| p.ids.iter().map(|id| id.as_str().to_owned()))
            .collect();
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(all, sorted);
        assert_eq!(commitment.root, merkle::root(&sorted));
        // The index: each page's first id and root, and the page of any id.
        let index = &commitment.index;
        assert_eq!(index.page_roots.len(), 3);
        assert_eq!(index.page_roots[2], merkle::root(&sorted[4_096..]));
        assert_eq!(index.first_ids[1].as_str(), sorted[2_048]);
        assert_eq!(index.page_of(&id(0)), Some(0));
        assert_eq!(index.page_of(&id(2_047)), Some(0));
        assert_eq!(index.page_of(&id(2_048)), Some(1));
        assert_eq!(index.page_of(&id(4_499)), Some(2));
        assert_eq!(commit(Vec::new()).index.page_of(&id(1)), None);
    }

    #[test]
    fn the_order_follows_the_draw_whatever_order_entries_come_in() {
        let entries: Vec<(EntryId, UserId)> = (0..50).map(|n| (id(n), user(n))).collect();
        let mut reversed = entries.clone();
        reversed.reverse();
        let (seed, randomness) = ([1; 32], [2; 32]);
        let drawn = order(&seed, &randomness, entries.clone());
        assert_eq!(drawn, order(&seed, &randomness, reversed));
        let ids: Vec<String> = entries
            .iter()
            .map(|(id, _)| id.as_str().to_owned())
            .collect();
        let expected = draw_order(&seed, &randomness, &ids);
        for (entry, id) in drawn.iter().zip(expected) {
            assert_eq!(entry.entry_id.as_str(), id);
            let n = u32::from_str_radix(id, 16).unwrap();
            assert_eq!(entry.user_id, user(n), "each id keeps its fan");
        }
        assert_ne!(drawn, order(&seed, &[3; 32], entries), "the beacon matters");
    }

    #[test]
    fn positions_find_their_page() {
        assert_eq!(order_page_of(1), (0, 0));
        assert_eq!(
            order_page_of(ORDER_PAGE_SIZE as u64),
            (0, ORDER_PAGE_SIZE - 1)
        );
        assert_eq!(order_page_of(ORDER_PAGE_SIZE as u64 + 1), (1, 0));
        let drawn: Vec<OrderedEntry> = (0..2_500)
            .map(|n| OrderedEntry {
                entry_id: id(n),
                user_id: user(n),
            })
            .collect();
        let pages = order_pages(&drawn);
        assert_eq!(pages.len(), 3);
        assert_eq!(pages[2].entries[0], drawn[2_000]);
    }
}
