use serde_json::{Value, json};

use super::*;

const SHIPPED: &str = include_str!("../../../../infra/seed/catalog.json");
const SHIPPED_PACKS: &[u8] = include_bytes!("../../../../infra/seed/packs.json");

fn sample() -> Value {
    json!({
        "leagues": [
            {"id": "nba", "name": "NBA", "sport": "basketball",
             "logoUrl": "https://cdn.fan-api.example/leagues/nba.png"},
            {"id": "nfl", "name": "NFL", "sport": "american-football",
             "logoUrl": "https://cdn.fan-api.example/leagues/nfl.png"}
        ],
        "teams": [
            {"id": "nba-lac", "leagueId": "nba", "name": "Clippers", "city": "Los Angeles",
             "abbreviation": "LAC", "logoUrl": "https://cdn.fan-api.example/teams/nba-lac.png",
             "primaryColor": "#C8102E"},
            {"id": "nfl-lac", "leagueId": "nfl", "name": "Chargers", "city": "Los Angeles",
             "abbreviation": "LAC", "logoUrl": "https://cdn.fan-api.example/teams/nfl-lac.png",
             "primaryColor": "#0080c6"}
        ]
    })
}

fn parse(value: &Value) -> Result<Catalog, CatalogError> {
    parse_catalog(&value.to_string())
}

fn rule_of(value: &Value) -> (String, &'static str, Rule) {
    match parse(value) {
        Err(CatalogError::Entry { at, field, rule }) => (at, field, rule),
        other => panic!("expected an entry error, got {other:?}"),
    }
}

#[test]
fn a_sample_parses_and_one_abbreviation_may_serve_two_leagues() {
    let catalog = parse(&sample()).unwrap();
    assert_eq!(catalog.teams.len(), 2);
    let team = catalog.team(&TeamId::parse("nfl-lac").unwrap()).unwrap();
    assert_eq!(team.name, "Chargers");
    assert!(catalog.league(&LeagueId::parse("nba").unwrap()).is_some());
    assert!(catalog.league(&LeagueId::parse("mlb").unwrap()).is_none());
    let round_trip: Value = serde_json::to_value(&catalog).unwrap();
    assert_eq!(round_trip, sample());
}

#[test]
fn each_rule_names_its_entry_and_field() {
    type Edit = fn(&mut Value);
    let cases: [(Edit, &str, &str, Rule); 17] = [
        (
            |v| v["leagues"][1]["id"] = json!("nba"),
            "leagues[1] (nba)",
            "id",
            Rule::RepeatedId,
        ),
        (
            |v| v["leagues"][0]["name"] = json!("  "),
            "leagues[0] (nba)",
            "name",
            Rule::Blank,
        ),
        (
            |v| v["leagues"][0]["sport"] = json!("Basket ball"),
            "leagues[0] (nba)",
            "sport",
            Rule::NotSport,
        ),
        (
            |v| v["leagues"][0]["logoUrl"] = json!("http://x.example/a.png"),
            "leagues[0] (nba)",
            "logoUrl",
            Rule::NotHttpsUrl,
        ),
        (
            |v| v["teams"][1]["id"] = json!("nba-lac"),
            "teams[1] (nba-lac)",
            "id",
            Rule::RepeatedId,
        ),
        (
            |v| v["teams"][1]["leagueId"] = json!("mlb"),
            "teams[1] (nfl-lac)",
            "leagueId",
            Rule::UnknownLeague,
        ),
        (
            |v| v["teams"][1]["id"] = json!("lac"),
            "teams[1] (lac)",
            "id",
            Rule::NotUnderLeague,
        ),
        (
            |v| v["teams"][1]["id"] = json!("nfl-"),
            "teams[1] (nfl-)",
            "id",
            Rule::NotUnderLeague,
        ),
        (
            |v| v["teams"][0]["name"] = json!("x".repeat(61)),
            "teams[0] (nba-lac)",
            "name",
            Rule::TooLong(60),
        ),
        (
            |v| v["teams"][0]["city"] = json!(""),
            "teams[0] (nba-lac)",
            "city",
            Rule::Blank,
        ),
        (
            |v| v["teams"][0]["abbreviation"] = json!("Lac"),
            "teams[0] (nba-lac)",
            "abbreviation",
            Rule::NotAbbreviation,
        ),
        (
            |v| v["teams"][0]["logoUrl"] = json!("/teams/a.png"),
            "teams[0] (nba-lac)",
            "logoUrl",
            Rule::NotHttpsUrl,
        ),
        (
            // Accepted once normalised, but the file must say what is served.
            |v| v["teams"][0]["logoUrl"] = json!("HTTPS://cdn.example/a.png?\"><b>"),
            "teams[0] (nba-lac)",
            "logoUrl",
            Rule::NotHttpsUrl,
        ),
        (
            |v| v["leagues"][1]["logoUrl"] = json!("https://10.0.0.1/nfl.png"),
            "leagues[1] (nfl)",
            "logoUrl",
            Rule::NotHttpsUrl,
        ),
        (
            |v| v["teams"][1]["name"] = json!("Char\u{202e}gers"),
            "teams[1] (nfl-lac)",
            "name",
            Rule::Hidden,
        ),
        (
            |v| v["teams"][0]["primaryColor"] = json!("#C8102"),
            "teams[0] (nba-lac)",
            "primaryColor",
            Rule::NotColor,
        ),
        (
            |v| {
                let mut twin = v["teams"][0].clone();
                twin["id"] = json!("nba-lac2");
                v["teams"].as_array_mut().unwrap().push(twin);
            },
            "teams[2] (nba-lac2)",
            "abbreviation",
            Rule::RepeatedAbbreviation,
        ),
    ];
    for (edit, at, field, rule) in cases {
        let mut value = sample();
        edit(&mut value);
        assert_eq!(rule_of(&value), (at.to_owned(), field, rule));
    }
    let error = rule_of(&{
        let mut v = sample();
        v["teams"][0]["primaryColor"] = json!("red");
        v
    });
    let message = CatalogError::Entry {
        at: error.0,
        field: error.1,
        rule: error.2,
    }
    .to_string();
    assert_eq!(
        message,
        "teams[0] (nba-lac): primaryColor must be #RRGGBB (six hexadecimal digits)"
    );
}

#[test]
fn abbreviations_are_two_to_four_capitals_or_digits() {
    for good in ["GB", "LAL", "BKN", "NY2", "ABCD"] {
        assert!(is_abbreviation(good), "{good}");
    }
    for bad in ["", "G", "ABCDE", "la", "L-A", "LÄ"] {
        assert!(!is_abbreviation(bad), "{bad}");
    }
    for good in ["#C8102E", "#0080c6", "#000000"] {
        assert!(is_color(good), "{good}");
    }
    for bad in ["C8102E", "#C8102", "#C8102EE", "#G8102E", "#c8102é"] {
        assert!(!is_color(bad), "{bad}");
    }
}

#[test]
fn the_shape_is_checked_ids_included() {
    for edit in [
        (|v: &mut Value| v["teams"][0]["nickname"] = json!("x")) as fn(&mut Value),
        |v| {
            v.as_object_mut()
                .unwrap()
                .remove("teams")
                .map(drop)
                .unwrap()
        },
        |v| v["teams"][0]["id"] = json!("nba lac"),
        |v| v["leagues"][0]["logoUrl"] = Value::Null,
    ] {
        let mut value = sample();
        edit(&mut value);
        assert!(
            matches!(parse(&value), Err(CatalogError::Shape(_))),
            "{value}"
        );
    }
    let Err(CatalogError::Shape(message)) = parse_catalog(r#"{"leagues": [{"id": "a b"}]}"#) else {
        panic!()
    };
    assert!(message.contains("leagues[0].id"), "{message}");
}

#[test]
fn pack_refs_must_name_the_catalogue_and_agree() {
    let catalog = parse(&sample()).unwrap();
    let league = |id| LeagueId::parse(id).unwrap();
    let team = |id| TeamId::parse(id).unwrap();
    assert_eq!(catalog.check_pack_refs(None, None), Ok(()));
    assert_eq!(catalog.check_pack_refs(Some(&league("nba")), None), Ok(()));
    assert_eq!(
        catalog.check_pack_refs(Some(&league("nba")), Some(&team("nba-lac"))),
        Ok(())
    );
    assert_eq!(
        catalog.check_pack_refs(None, Some(&team("nfl-lac"))),
        Ok(())
    );
    assert_eq!(
        catalog.check_pack_refs(Some(&league("mlb")), None),
        Err(PackRefError::UnknownLeague)
    );
    assert_eq!(
        catalog.check_pack_refs(Some(&league("nba")), Some(&team("nba-xyz"))),
        Err(PackRefError::UnknownTeam)
    );
    assert_eq!(
        catalog.check_pack_refs(Some(&league("nba")), Some(&team("nfl-lac"))),
        Err(PackRefError::TeamOfAnotherLeague)
    );
}

#[test]
fn the_shipped_catalogue_holds_the_real_leagues_and_every_shipped_pack_fits_it() {
    let catalog = parse_catalog(SHIPPED).unwrap();
    let count = |league: &str| {
        catalog
            .teams
            .iter()
            .filter(|team| team.league_id.as_str() == league)
            .count()
    };
    assert_eq!(count("nba"), 30);
    assert_eq!(count("nfl"), 32);
    assert_eq!(count("premier-league"), 20);
    for team in &catalog.teams {
        assert_eq!(
            team.id.as_str(),
            format!("{}-{}", team.league_id, team.abbreviation.to_lowercase()),
            "the shipped ids follow the convention"
        );
    }
    let packs = crate::packs::seed::parse_seed(SHIPPED_PACKS).unwrap();
    assert_eq!(catalog.check_packs(&packs), Ok(()));
    assert!(packs.iter().any(|pack| pack.team_id.is_some()));
}

#[test]
fn check_packs_names_the_first_pack_that_does_not_fit() {
    let catalog = parse(&sample()).unwrap();
    let pack = |id: &str, league: Option<&str>, team: Option<&str>| {
        let mut pack = crate::packs::fixtures::sample_pack(id);
        pack.league_id = league.map(Into::into);
        pack.team_id = team.map(Into::into);
        pack
    };
    let fits = pack("fits", Some("nba"), Some("nba-lac"));
    assert_eq!(catalog.check_packs(std::slice::from_ref(&fits)), Ok(()));
    for (bad, problem) in [
        (pack("b", Some("mlb"), None), PackRefError::UnknownLeague),
        (pack("b", None, Some("nba-xyz")), PackRefError::UnknownTeam),
        (
            pack("b", Some("nba"), Some("nfl-lac")),
            PackRefError::TeamOfAnotherLeague,
        ),
    ] {
        let packs = [fits.clone(), bad, pack("c", Some("mlb"), None)];
        assert_eq!(catalog.check_packs(&packs), Err(("b", problem)));
    }
}
