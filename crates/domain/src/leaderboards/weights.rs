//! What each rarity adds to a collector score. The weights are configuration
//! (`SCORE_WEIGHTS`, read once per cold start); the defaults cover the rarities the packs use
//! (`common`, `rare`, `epic`, `legendary`). A rarity without a weight adds nothing.
//!
//! Scores are kept by each opening's write, so a weight changed after openings applies to the
//! later ones only: a change of weights goes with a recomputation of the boards (docs).

use std::collections::BTreeMap;

use crate::purchases::OpenedItem;

/// The weights by rarity name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoreWeights(BTreeMap<String, u64>);

/// The defaults: common 1, rare 10, epic 50, legendary 250.
pub const DEFAULT_WEIGHTS: [(&str, u64); 4] = [
    ("common", 1),
    ("rare", 10),
    ("epic", 50),
    ("legendary", 250),
];

/// The largest weight accepted: a score stays far below [`super::SCORE_UNIT`]'s limit.
pub const MAX_WEIGHT: u64 = 1_000_000;

impl Default for ScoreWeights {
    fn default() -> Self {
        Self(
            DEFAULT_WEIGHTS
                .iter()
                .map(|&(rarity, weight)| (rarity.to_owned(), weight))
                .collect(),
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "score weights are `rarity=weight` pairs separated by commas, each weight 0-{MAX_WEIGHT}: {0}"
)]
pub struct InvalidWeights(String);

impl ScoreWeights {
    /// `common=1,rare=10,...`: the rarities named replace the defaults' weights, the others
    /// keep theirs.
    pub fn parse(text: &str) -> Result<Self, InvalidWeights> {
        let mut weights = Self::default();
        for pair in text
            .split(',')
            .map(str::trim)
            .filter(|pair| !pair.is_empty())
        {
            let bad = || InvalidWeights(format!("`{pair}`"));
            let (rarity, weight) = pair.split_once('=').ok_or_else(bad)?;
            let rarity = rarity.trim();
            let weight: u64 = weight.trim().parse().map_err(|_| bad())?;
            if rarity.is_empty() || rarity.len() > 32 || weight > MAX_WEIGHT {
                return Err(bad());
            }
            weights.0.insert(rarity.to_owned(), weight);
        }
        Ok(weights)
    }

    pub fn of(&self, rarity: &str) -> u64 {
        self.0.get(rarity).copied().unwrap_or(0)
    }

    /// What an opening of `items` adds to its fan's score.
    pub fn score_of(&self, items: &[OpenedItem]) -> u64 {
        items.iter().map(|item| self.of(&item.rarity)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(rarity: &str) -> OpenedItem {
        OpenedItem {
            slot: 0,
            item_id: "card".into(),
            name: "Card".into(),
            rarity: rarity.into(),
            image_url: None,
        }
    }

    #[test]
    fn an_opening_scores_its_items_weights() {
        let weights = ScoreWeights::default();
        let items = ["common", "common", "rare", "epic", "legendary", "mythic"].map(item);
        assert_eq!(weights.score_of(&items), 1 + 1 + 10 + 50 + 250);
        let custom = ScoreWeights::parse(" rare=20 , mythic=1000").unwrap();
        assert_eq!(custom.score_of(&items), 1 + 1 + 20 + 50 + 250 + 1000);
        assert_eq!(ScoreWeights::parse("").unwrap(), weights);
        for bad in ["rare", "rare=x", "=3", "rare=-1", "rare=1000001"] {
            assert!(ScoreWeights::parse(bad).is_err(), "{bad:?}");
        }
    }
}
