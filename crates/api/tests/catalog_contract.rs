//! The catalogue's storage contract, run against both stores (DynamoStore on moto_server, and
//! MemoryStore): leagues and teams read back by id and a page at a time in list order, a
//! re-seeded entry moves in its list rather than repeating; and the packs of a league or a team,
//! listed in the packs' order from their own index entries.

use domain::catalog::order::{cmp_leagues, cmp_teams};
use domain::catalog::{League, Team, parse_catalog};
use domain::ids::{LeagueId, TeamId};
use domain::packs::listing::{ListingKey, PackFilter, PageRequest};
use domain::packs::{Pack, PackStatus};
use domain::timestamp::Timestamp;
use store::Store;
use store::catalog::{CatalogPage, CatalogPageRequest, seed_catalog};
use testkit::packs::{active, ending, with_status};

testkit::store_contract!(
    by_ref:
    the_catalogue_reads_back_by_id_and_in_list_order,
    pages_walk_each_list_without_gaps_or_repeats,
    an_entry_seeded_again_moves_in_its_list_and_never_repeats,
    a_league_or_team_lists_exactly_its_active_packs_in_order,
    a_filtered_list_pages_through_its_packs_alone,
    a_pack_that_changes_league_team_or_status_moves_between_lists,
);

fn league(id: &str, name: &str) -> League {
    League {
        id: LeagueId::parse(id).unwrap(),
        name: name.into(),
        sport: "basketball".into(),
        logo_url: format!("https://cdn.fan-api.example/leagues/{id}.png"),
    }
}

fn team(league: &str, own: &str, name: &str) -> Team {
    Team {
        id: TeamId::parse(format!("{league}-{own}")).unwrap(),
        league_id: LeagueId::parse(league).unwrap(),
        name: name.into(),
        city: "City".into(),
        abbreviation: own.to_uppercase(),
        logo_url: format!("https://cdn.fan-api.example/teams/{league}-{own}.png"),
        primary_color: "#123456".into(),
    }
}

/// The shipped catalogue (7 leagues, 82 teams), written as seed-packs writes it.
async fn seed_shipped(store: &impl Store) -> domain::catalog::Catalog {
    let text = include_str!("../../../infra/seed/catalog.json");
    let catalog = parse_catalog(text).expect("the shipped catalogue parses");
    seed_catalog(store, &catalog).await.unwrap();
    catalog
}

fn request(limit: usize, after: Option<String>, league: Option<&str>) -> CatalogPageRequest {
    CatalogPageRequest {
        limit,
        after,
        league: league.map(|id| LeagueId::parse(id).unwrap()),
    }
}

/// Every entry of a list, page after page of `limit`, checking that only the last page has no
/// `next`.
async fn walk<T, F, Fut>(limit: usize, league: Option<&str>, page: F) -> Vec<T>
where
    F: Fn(CatalogPageRequest) -> Fut,
    Fut: std::future::Future<Output = CatalogPage<T>>,
{
    let (mut all, mut after) = (Vec::new(), None);
    loop {
        let got = page(request(limit, after.take(), league)).await;
        assert!(got.entries.len() <= limit);
        all.extend(got.entries);
        match got.next {
            Some(next) => after = Some(next),
            None => return all,
        }
    }
}

async fn the_catalogue_reads_back_by_id_and_in_list_order(store: &impl Store) {
    let catalog = seed_shipped(store).await;
    let leagues = store.list_leagues(&request(100, None, None)).await.unwrap();
    let mut expected = catalog.leagues.clone();
    expected.sort_by(cmp_leagues);
    assert_eq!(leagues.entries, expected);
    assert_eq!(leagues.next, None);
    assert_eq!(
        leagues.entries[0].id.as_str(),
        "fifa-world-cup",
        "FIFA World Cup first: by name, not id"
    );

    let teams = store.list_teams(&request(100, None, None)).await.unwrap();
    let mut expected = catalog.teams.clone();
    expected.sort_by(cmp_teams);
    assert_eq!(teams.entries, expected);
    let nba = store
        .list_teams(&request(100, None, Some("nba")))
        .await
        .unwrap();
    assert_eq!(nba.entries.len(), 30);
    assert!(nba.entries.iter().all(|t| t.league_id.as_str() == "nba"));
    assert_eq!(nba.entries[0].name, "76ers", "by name: digits first");
    for empty in ["mlb", "nope", "nb"] {
        let none = store
            .list_teams(&request(100, None, Some(empty)))
            .await
            .unwrap();
        assert!(none.entries.is_empty() && none.next.is_none(), "{empty}");
    }

    let lakers = TeamId::parse("nba-lal").unwrap();
    assert_eq!(
        store.get_team(&lakers).await.unwrap().as_ref(),
        catalog.team(&lakers)
    );
    let nfl = LeagueId::parse("nfl").unwrap();
    assert_eq!(
        store.get_league(&nfl).await.unwrap().as_ref(),
        catalog.league(&nfl)
    );
    assert_eq!(
        store
            .get_team(&TeamId::parse("nba-zzz").unwrap())
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .get_league(&LeagueId::parse("nba-lal").unwrap())
            .await
            .unwrap(),
        None,
        "a team's id names no league"
    );
}

async fn pages_walk_each_list_without_gaps_or_repeats(store: &impl Store) {
    let catalog = seed_shipped(store).await;
    for limit in [1, 7, 30, 82] {
        let teams = walk(limit, None, |r| async move {
            store.list_teams(&r).await.unwrap()
        })
        .await;
        let mut expected = catalog.teams.clone();
        expected.sort_by(cmp_teams);
        assert_eq!(teams, expected, "limit {limit}");
        let nfl = walk(limit, Some("nfl"), |r| async move {
            store.list_teams(&r).await.unwrap()
        })
        .await;
        assert_eq!(nfl.len(), 32, "limit {limit}");
        assert!(nfl.is_sorted_by(|a, b| cmp_teams(a, b).is_lt()));
        let leagues = walk(limit, None, |r| async move {
            store.list_leagues(&r).await.unwrap()
        })
        .await;
        assert_eq!(leagues.len(), 7, "limit {limit}");
    }
    // A full last page says no more follow.
    let first = store.list_leagues(&request(7, None, None)).await.unwrap();
    assert_eq!((first.entries.len(), first.next), (7, None));
}

async fn an_entry_seeded_again_moves_in_its_list_and_never_repeats(store: &impl Store) {
    for entry in [league("b", "Bravo"), league("a", "Alpha")] {
        store.put_league(&entry).await.unwrap();
    }
    let teams = [
        team("a", "x", "Xylophones"),
        team("a", "m", "Mid"),
        team("b", "y", "Yaks"),
    ];
    for entry in &teams {
        store.put_team(entry).await.unwrap();
        store.put_team(entry).await.unwrap();
    }
    let ids = |page: CatalogPage<Team>| -> Vec<String> {
        page.entries.iter().map(|t| t.id.to_string()).collect()
    };
    let all = store.list_teams(&request(10, None, None)).await.unwrap();
    assert_eq!(ids(all), ["a-m", "a-x", "b-y"]);

    // Renamed: the same item, at its new place.
    let mut renamed = teams[0].clone();
    renamed.name = "Aardvarks".into();
    store.put_team(&renamed).await.unwrap();
    let all = store.list_teams(&request(10, None, None)).await.unwrap();
    assert_eq!(ids(all.clone()), ["a-x", "a-m", "b-y"]);
    assert_eq!(all.entries[0], renamed);
    assert_eq!(
        store.get_team(&renamed.id).await.unwrap(),
        Some(renamed.clone())
    );
    let mut league_renamed = league("b", "Aaa");
    league_renamed.sport = "ice-hockey".into();
    store.put_league(&league_renamed).await.unwrap();
    let leagues = store.list_leagues(&request(10, None, None)).await.unwrap();
    assert_eq!(leagues.entries, [league_renamed, league("a", "Alpha")]);
}

fn in_league(mut pack: Pack, league: Option<&str>, team: Option<&str>) -> Pack {
    pack.league_id = league.map(Into::into);
    pack.team_id = team.map(Into::into);
    pack
}

fn filter(league: Option<&str>, team: Option<&str>) -> PackFilter {
    PackFilter {
        league: league.map(|id| LeagueId::parse(id).unwrap()),
        team: team.map(|id| TeamId::parse(id).unwrap()),
    }
}

async fn page_of(
    store: &impl Store,
    filter: PackFilter,
    limit: usize,
    after: Option<ListingKey>,
) -> domain::packs::listing::Page {
    store
        .list_active_packs(&PageRequest {
            now: Timestamp::now(),
            limit,
            after,
            filter,
        })
        .await
        .unwrap()
}

fn ids_of(page: &domain::packs::listing::Page) -> Vec<String> {
    page.packs.iter().map(|p| p.to_pack().unwrap().id).collect()
}

/// Packs of two leagues and three teams, on every side of the activeness rule.
fn league_packs() -> Vec<Pack> {
    vec![
        in_league(active("nba-newest", 60), Some("nba"), None),
        in_league(active("lakers-old", 7200), Some("nba"), Some("nba-lal")),
        in_league(active("lakers-new", 120), Some("nba"), Some("nba-lal")),
        in_league(active("celtics", 3600), Some("nba"), Some("nba-bos")),
        in_league(active("teamless-lakers", 3000), None, Some("nba-lal")),
        in_league(active("chargers", 600), Some("nfl"), Some("nfl-lac")),
        in_league(active("no-league", 30), None, None),
        in_league(
            ending(active("lakers-ended", 9000), -1),
            Some("nba"),
            Some("nba-lal"),
        ),
        in_league(active("lakers-future", -3600), Some("nba"), Some("nba-lal")),
        in_league(
            with_status(active("lakers-draft", 100), PackStatus::Draft),
            Some("nba"),
            Some("nba-lal"),
        ),
    ]
}

async fn a_league_or_team_lists_exactly_its_active_packs_in_order(store: &impl Store) {
    for pack in league_packs() {
        testkit::packs::save(store, &pack).await;
    }
    for (league, team, expected) in [
        (
            Some("nba"),
            None,
            &["nba-newest", "lakers-new", "celtics", "lakers-old"][..],
        ),
        (
            None,
            Some("nba-lal"),
            &["lakers-new", "teamless-lakers", "lakers-old"][..],
        ),
        (
            Some("nba"),
            Some("nba-lal"),
            &["lakers-new", "lakers-old"][..],
        ),
        (Some("nfl"), None, &["chargers"][..]),
        (Some("nfl"), Some("nba-lal"), &[][..]),
        (Some("mlb"), None, &[][..]),
        (None, Some("nba-zzz"), &[][..]),
    ] {
        let page = page_of(store, filter(league, team), 50, None).await;
        assert_eq!(ids_of(&page), expected, "{league:?} {team:?}");
        assert_eq!(page.next, None);
    }
    let all = page_of(store, PackFilter::default(), 50, None).await;
    assert_eq!(all.packs.len(), 7, "every active pack, filters aside");
}

async fn a_filtered_list_pages_through_its_packs_alone(store: &impl Store) {
    for pack in league_packs() {
        testkit::packs::save(store, &pack).await;
    }
    for (league, team, expected) in [
        (
            Some("nba"),
            None,
            vec!["nba-newest", "lakers-new", "celtics", "lakers-old"],
        ),
        (
            None,
            Some("nba-lal"),
            vec!["lakers-new", "teamless-lakers", "lakers-old"],
        ),
        (
            Some("nba"),
            Some("nba-lal"),
            vec!["lakers-new", "lakers-old"],
        ),
    ] {
        for limit in [1, 2, 3] {
            let (mut seen, mut after) = (Vec::new(), None);
            loop {
                let page = page_of(store, filter(league, team), limit, after.take()).await;
                assert!(page.packs.len() <= limit);
                seen.extend(ids_of(&page));
                match page.next {
                    Some(next) => after = Some(next),
                    None => break,
                }
            }
            assert_eq!(seen, expected, "{league:?} {team:?} limit {limit}");
        }
    }
}

async fn a_pack_that_changes_league_team_or_status_moves_between_lists(store: &impl Store) {
    let pack = in_league(active("mover", -3600), Some("nba"), Some("nba-lal"));
    testkit::packs::save(store, &pack).await;
    let lakers = || filter(None, Some("nba-lal"));
    assert!(ids_of(&page_of(store, lakers(), 50, None).await).is_empty());
    // Before its sale, a pack may change whole: another team and league, started.
    let moved = in_league(active("mover", 60), Some("nfl"), Some("nfl-lac"));
    testkit::packs::save(store, &moved).await;
    assert!(ids_of(&page_of(store, lakers(), 50, None).await).is_empty());
    assert!(ids_of(&page_of(store, filter(Some("nba"), None), 50, None).await).is_empty());
    assert_eq!(
        ids_of(&page_of(store, filter(None, Some("nfl-lac")), 50, None).await),
        ["mover"]
    );
    assert_eq!(
        ids_of(&page_of(store, filter(Some("nfl"), None), 50, None).await),
        ["mover"]
    );
    // Archived: out of every list.
    testkit::packs::save(store, &with_status(moved, PackStatus::Archived)).await;
    for filter in [filter(Some("nfl"), None), filter(None, Some("nfl-lac"))] {
        assert!(ids_of(&page_of(store, filter, 50, None).await).is_empty());
    }
}
