//! The catalogue in memory: entries by id; a list is their list keys, sorted, as the index
//! keeps them (a renamed entry moves with its key).

use super::MemoryStore;
use crate::StoreError;
use crate::catalog::{
    CatalogPage, CatalogPageRequest, GetLeague, GetTeam, ListLeagues, ListTeams, SeedCatalog,
};
use domain::catalog::order::{league_key, league_prefix, team_key};
use domain::catalog::{League, Team};
use domain::ids::{LeagueId, TeamId};

/// The page of `entries` (each with its list key) after `request.after`, of the keys starting
/// with `prefix`, in key order.
fn page<'a, T: Clone + 'a>(
    entries: impl Iterator<Item = (String, &'a T)>,
    request: &CatalogPageRequest,
    prefix: &str,
) -> CatalogPage<T> {
    let mut keyed: Vec<(String, &T)> = entries
        .filter(|(key, _)| key.starts_with(prefix))
        .filter(|(key, _)| request.after.as_ref().is_none_or(|after| key > after))
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let more = keyed.len() > request.limit;
    keyed.truncate(request.limit);
    CatalogPage {
        next: more
            .then(|| keyed.last().map(|(key, _)| key.clone()))
            .flatten(),
        entries: keyed.into_iter().map(|(_, entry)| entry.clone()).collect(),
    }
}

impl SeedCatalog for MemoryStore {
    async fn put_league(&self, league: &League) -> Result<(), StoreError> {
        self.write()
            .leagues
            .insert(league.id.clone(), league.clone());
        Ok(())
    }

    async fn put_team(&self, team: &Team) -> Result<(), StoreError> {
        self.write().teams.insert(team.id.clone(), team.clone());
        Ok(())
    }
}

impl GetLeague for MemoryStore {
    async fn get_league(&self, id: &LeagueId) -> Result<Option<League>, StoreError> {
        Ok(self.read().leagues.get(id).cloned())
    }
}

impl GetTeam for MemoryStore {
    async fn get_team(&self, id: &TeamId) -> Result<Option<Team>, StoreError> {
        Ok(self.read().teams.get(id).cloned())
    }
}

impl ListLeagues for MemoryStore {
    async fn list_leagues(
        &self,
        request: &CatalogPageRequest,
    ) -> Result<CatalogPage<League>, StoreError> {
        let tables = self.read();
        let entries = tables.leagues.values().map(|l| (league_key(l), l));
        Ok(page(entries, request, ""))
    }
}

impl ListTeams for MemoryStore {
    async fn list_teams(
        &self,
        request: &CatalogPageRequest,
    ) -> Result<CatalogPage<Team>, StoreError> {
        let tables = self.read();
        let prefix = request
            .league
            .as_ref()
            .map_or_else(String::new, |league| league_prefix(league.as_str()));
        let entries = tables.teams.values().map(|t| (team_key(t), t));
        Ok(page(entries, request, &prefix))
    }
}
