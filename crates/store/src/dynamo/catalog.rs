//! The catalogue on DynamoDB: one item per league and per team, each in its list's partition
//! of `GSI1` with its list key as sort key, so that a page is one Query in list order.

use std::collections::HashMap;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::records::{LeagueRecord, TeamRecord, read_record};
use super::{DynamoStore, Item, classify, key, s};
use crate::StoreError;
use crate::catalog::{
    CatalogPage, CatalogPageRequest, GetLeague, GetTeam, ListLeagues, ListTeams, SeedCatalog,
};
use crate::schema::{
    CATALOG_LEAGUES, CATALOG_TEAMS, ENTITY, GSI1, GSI1_PK, GSI1_SK, LEAGUE_SK, PK, SK, TEAM_SK,
    league_pk, team_pk,
};
use domain::catalog::order::{
    league_key, league_prefix, parse_league_key, parse_team_key, team_key,
};
use domain::catalog::{League, Team};
use domain::ids::{LeagueId, TeamId};

/// One kind of catalogue entry: where its items and its list live.
struct Entry {
    what: &'static str,
    sk: &'static str,
    list: &'static str,
    /// The partition key of the entry a list key names (a cursor's position).
    key_of: fn(&str) -> Option<String>,
}

const LEAGUES: Entry = Entry {
    what: "league",
    sk: LEAGUE_SK,
    list: CATALOG_LEAGUES,
    key_of: |position| parse_league_key(position).map(|id| league_pk(&id)),
};

const TEAMS: Entry = Entry {
    what: "team",
    sk: TEAM_SK,
    list: CATALOG_TEAMS,
    key_of: |position| parse_team_key(position).map(|(_, id)| team_pk(&id)),
};

impl DynamoStore {
    /// Puts `record` whole as `entry`'s item of partition `pk`, in its list at `list_key`.
    async fn put_entry<R: Serialize>(
        &self,
        entry: &Entry,
        pk: String,
        record: R,
        list_key: String,
    ) -> Result<(), StoreError> {
        let mut item: Item = serde_dynamo::to_item(record)
            .map_err(|e| StoreError::internal_from(format!("{} item", entry.what), e))?;
        item.extend(key(pk, entry.sk));
        item.insert(ENTITY.into(), s(entry.what));
        item.insert(GSI1_PK.into(), s(entry.list));
        item.insert(GSI1_SK.into(), s(list_key));
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| classify("PutItem", e))?;
        Ok(())
    }

    /// The entry of partition `pk` of `entry`'s kind, through its record `R`.
    async fn get_entry<R, T>(&self, entry: &Entry, pk: String) -> Result<Option<T>, StoreError>
    where
        R: DeserializeOwned,
        T: TryFrom<R, Error = StoreError>,
    {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, entry.sk)))
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        output
            .item
            .map(|item| read_record::<R, T>(item, entry.what))
            .transpose()
    }

    /// A page of `entry`'s list (of the keys starting with `prefix`, when given): one Query of
    /// one more than asked, to know whether another page follows.
    async fn list_entries<R, T>(
        &self,
        entry: &Entry,
        request: &CatalogPageRequest,
        prefix: Option<String>,
    ) -> Result<CatalogPage<T>, StoreError>
    where
        R: DeserializeOwned,
        T: TryFrom<R, Error = StoreError>,
    {
        let exclusive_start = match &request.after {
            None => None,
            Some(position) => {
                let pk = (entry.key_of)(position).ok_or_else(|| {
                    StoreError::internal(format!("{} list: a position that is no key", entry.what))
                })?;
                Some(HashMap::from([
                    (GSI1_PK.to_owned(), s(entry.list)),
                    (GSI1_SK.to_owned(), s(position.as_str())),
                    (PK.to_owned(), s(pk)),
                    (SK.to_owned(), s(entry.sk)),
                ]))
            }
        };
        let mut names = HashMap::from([("#pk".to_owned(), GSI1_PK.to_owned())]);
        let mut values = HashMap::from([(":list".to_owned(), s(entry.list))]);
        let condition = match prefix {
            Some(prefix) => {
                names.insert("#sk".into(), GSI1_SK.into());
                values.insert(":prefix".into(), s(prefix));
                "#pk = :list AND begins_with(#sk, :prefix)"
            }
            None => "#pk = :list",
        };
        let output = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(GSI1)
            .key_condition_expression(condition)
            .set_expression_attribute_names(Some(names))
            .set_expression_attribute_values(Some(values))
            .limit(i32::try_from(request.limit + 1).unwrap_or(i32::MAX))
            .set_exclusive_start_key(exclusive_start)
            .send()
            .await
            .map_err(|e| classify("Query", e))?;
        let items = output.items.unwrap_or_default();
        let more = items.len() > request.limit;
        let mut entries = Vec::with_capacity(request.limit);
        let mut last_key = None;
        for mut item in items.into_iter().take(request.limit) {
            last_key = item.remove(GSI1_SK);
            entries.push(read_record::<R, T>(item, entry.what)?);
        }
        let next = more
            .then(|| last_key.and_then(|key| key.as_s().ok().cloned()))
            .flatten();
        Ok(CatalogPage { entries, next })
    }
}

impl SeedCatalog for DynamoStore {
    async fn put_league(&self, league: &League) -> Result<(), StoreError> {
        self.put_entry(
            &LEAGUES,
            league_pk(&league.id),
            LeagueRecord::from(league),
            league_key(league),
        )
        .await
    }

    async fn put_team(&self, team: &Team) -> Result<(), StoreError> {
        self.put_entry(
            &TEAMS,
            team_pk(&team.id),
            TeamRecord::from(team),
            team_key(team),
        )
        .await
    }
}

impl GetLeague for DynamoStore {
    async fn get_league(&self, id: &LeagueId) -> Result<Option<League>, StoreError> {
        self.get_entry::<LeagueRecord, _>(&LEAGUES, league_pk(id))
            .await
    }
}

impl GetTeam for DynamoStore {
    async fn get_team(&self, id: &TeamId) -> Result<Option<Team>, StoreError> {
        self.get_entry::<TeamRecord, _>(&TEAMS, team_pk(id)).await
    }
}

impl ListLeagues for DynamoStore {
    async fn list_leagues(
        &self,
        request: &CatalogPageRequest,
    ) -> Result<CatalogPage<League>, StoreError> {
        self.list_entries::<LeagueRecord, _>(&LEAGUES, request, None)
            .await
    }
}

impl ListTeams for DynamoStore {
    async fn list_teams(
        &self,
        request: &CatalogPageRequest,
    ) -> Result<CatalogPage<Team>, StoreError> {
        let prefix = request
            .league
            .as_ref()
            .map(|league| league_prefix(league.as_str()));
        self.list_entries::<TeamRecord, _>(&TEAMS, request, prefix)
            .await
    }
}
