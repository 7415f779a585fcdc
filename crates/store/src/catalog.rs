//! The operations on the catalogue: leagues and teams, read by id or a page at a time in list
//! order ([`domain::catalog::order`]), and written by the operator's seeding.

use std::future::Future;

use crate::StoreError;
use domain::catalog::{Catalog, League, Team};
use domain::ids::{LeagueId, TeamId};

/// What a client asked of a catalogue list: at most `limit` entries after the list key
/// `after` (a position a cursor carried), of one league's teams when `league` is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogPageRequest {
    pub limit: usize,
    pub after: Option<String>,
    /// Teams only: the league whose teams are listed.
    pub league: Option<LeagueId>,
}

/// A page of a catalogue list; `next` (the last entry's list key) is set when more follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogPage<T> {
    pub entries: Vec<T>,
    pub next: Option<String>,
}

/// A league, or `None`.
pub trait GetLeague: Send + Sync {
    fn get_league(
        &self,
        id: &LeagueId,
    ) -> impl Future<Output = Result<Option<League>, StoreError>> + Send;
}

/// A team, or `None`.
pub trait GetTeam: Send + Sync {
    fn get_team(
        &self,
        id: &TeamId,
    ) -> impl Future<Output = Result<Option<Team>, StoreError>> + Send;
}

/// A page of the leagues, by name (`request.league` is not read).
pub trait ListLeagues: Send + Sync {
    fn list_leagues(
        &self,
        request: &CatalogPageRequest,
    ) -> impl Future<Output = Result<CatalogPage<League>, StoreError>> + Send;
}

/// A page of the teams, by league then name; of one league when `request.league` is set.
pub trait ListTeams: Send + Sync {
    fn list_teams(
        &self,
        request: &CatalogPageRequest,
    ) -> impl Future<Output = Result<CatalogPage<Team>, StoreError>> + Send;
}

/// Writes one entry of a catalogue file, whole (created or replaced, its list entry moved with
/// it): seeding the same file again changes nothing; an entry not in the file is left as it is
/// (a pack may name it).
pub trait SeedCatalog: Send + Sync {
    fn put_league(&self, league: &League) -> impl Future<Output = Result<(), StoreError>> + Send;
    fn put_team(&self, team: &Team) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Every catalogue operation.
pub trait CatalogStore: GetLeague + GetTeam + ListLeagues + ListTeams + SeedCatalog {}
impl<S: GetLeague + GetTeam + ListLeagues + ListTeams + SeedCatalog> CatalogStore for S {}

/// Writes every entry of `catalog`, leagues first (the same file again writes the same items).
/// Returns the entry that could not be written, with why.
pub async fn seed_catalog<S: SeedCatalog>(store: &S, catalog: &Catalog) -> Result<(), String> {
    for league in &catalog.leagues {
        store
            .put_league(league)
            .await
            .map_err(|e| format!("league {}: {e}", league.id))?;
    }
    for team in &catalog.teams {
        store
            .put_team(team)
            .await
            .map_err(|e| format!("team {}: {e}", team.id))?;
    }
    Ok(())
}
