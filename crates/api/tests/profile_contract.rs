//! The profile's operations, run against both stores (DynamoStore on moto_server through the
//! one-request-at-a-time proxy, MemoryStore): the first read creates the profile from the token;
//! a display name is held by one fan without regard to case, claimed and freed in the patch's
//! one write; a favourite team must exist; a refused patch writes nothing; fans racing for one
//! name, or for names that look alike (`Hollow`, `HoIlow`, `H0llow`): exactly one gets it; an
//! avatar is kept in its normal form, never as sent.

use std::sync::Arc;

use domain::ids::TeamId;
use domain::profile::Profile;
use domain::profile::patch::{ProfilePatch, ProfilePatchBody};
use domain::timestamp::Timestamp;
use store::catalog::SeedCatalog;
use store::profile::{PatchProfileError, ProfileStore};
use testkit::ids;
use testkit::profiles::team;

testkit::store_contract!(
    arc:
    the_first_read_creates_the_profile_from_the_token_once,
    a_patch_sets_clears_and_keeps_each_field,
    a_name_is_one_fans_without_regard_to_case_and_a_rename_frees_the_old_one,
    a_favourite_team_must_exist_and_a_refused_patch_writes_nothing,
    fans_racing_for_one_name_exactly_one_gets_it,
    fans_racing_for_look_alike_names_exactly_one_gets_one,
    one_fans_racing_renames_leave_one_name_held_and_the_other_free,
    an_avatar_is_kept_in_its_normal_form_never_as_sent,
);

fn patch(json: &str) -> ProfilePatch {
    serde_json::from_str::<ProfilePatchBody>(json)
        .unwrap()
        .check()
        .unwrap()
}

async fn patched(
    store: &impl ProfileStore,
    fan: &str,
    json: &str,
) -> Result<Profile, PatchProfileError> {
    store
        .patch_profile(&ids::user(fan), None, &patch(json), Timestamp::now())
        .await
}

async fn profile(store: &impl ProfileStore, fan: &str) -> Profile {
    store
        .get_profile(&ids::user(fan), None, Timestamp::now())
        .await
        .unwrap()
}

fn name_of(profile: &Profile) -> Option<&str> {
    profile.display_name.as_ref().map(|name| name.as_str())
}

async fn the_first_read_creates_the_profile_from_the_token_once(store: Arc<impl ProfileStore>) {
    let first_at = Timestamp::parse("2026-11-26T00:00:00Z").unwrap();
    let first = store
        .get_profile(&ids::user("auth0|fan"), Some("fan@example.com"), first_at)
        .await
        .unwrap();
    assert_eq!(
        first,
        Profile::new(
            ids::user("auth0|fan"),
            Some("fan@example.com".into()),
            first_at
        )
    );
    let again = store
        .get_profile(
            &ids::user("auth0|fan"),
            Some("new@example.com"),
            Timestamp::now(),
        )
        .await
        .unwrap();
    assert_eq!(again, first, "created once, then read");
    // A patch before any read creates the profile as the read would.
    let at = Timestamp::now();
    let named = store
        .patch_profile(
            &ids::user("fan-2"),
            Some("two@example.com"),
            &patch(r#"{"displayName": "Two"}"#),
            at,
        )
        .await
        .unwrap();
    assert_eq!(named.email.as_deref(), Some("two@example.com"));
    assert_eq!(name_of(&named), Some("Two"));
    assert_eq!(profile(&*store, "fan-2").await, named);
    // An empty patch creates it too, and changes nothing after.
    let empty = patched(&*store, "fan-3", "{}").await.unwrap();
    assert_eq!(profile(&*store, "fan-3").await, empty);
}

async fn a_patch_sets_clears_and_keeps_each_field(store: Arc<impl ProfileStore + SeedCatalog>) {
    store.put_team(&team("nba-lal")).await.unwrap();
    let set = patched(
        &*store,
        "fan-1",
        r#"{"displayName": "Zoe.B", "avatarUrl": "https://a.example/z.png", "favoriteTeamId": "nba-lal"}"#,
    )
    .await
    .unwrap();
    assert_eq!(name_of(&set), Some("Zoe.B"));
    assert_eq!(
        set.avatar_url.as_ref().map(|url| url.as_str()),
        Some("https://a.example/z.png")
    );
    assert_eq!(
        set.favorite_team_id.as_ref().map(|id| id.as_str()),
        Some("nba-lal")
    );
    assert_eq!(profile(&*store, "fan-1").await, set);
    let cleared = patched(
        &*store,
        "fan-1",
        r#"{"avatarUrl": null, "favoriteTeamId": null}"#,
    )
    .await
    .unwrap();
    assert_eq!(name_of(&cleared), Some("Zoe.B"), "kept");
    assert_eq!((cleared.avatar_url, cleared.favorite_team_id), (None, None));
    assert_eq!(profile(&*store, "fan-1").await.avatar_url, None);
}

async fn a_name_is_one_fans_without_regard_to_case_and_a_rename_frees_the_old_one(
    store: Arc<impl ProfileStore>,
) {
    patched(&*store, "fan-1", r#"{"displayName": "Alice"}"#)
        .await
        .unwrap();
    for other_case in ["Alice", "alice", "ALICE"] {
        let json = format!(r#"{{"displayName": "{other_case}"}}"#);
        assert_eq!(
            patched(&*store, "fan-2", &json).await,
            Err(PatchProfileError::NameTaken),
            "{other_case}"
        );
    }
    assert_eq!(name_of(&profile(&*store, "fan-2").await), None);
    // A change of case is the fan's own name: kept, nothing freed.
    let recased = patched(&*store, "fan-1", r#"{"displayName": "ALICE"}"#)
        .await
        .unwrap();
    assert_eq!(name_of(&recased), Some("ALICE"));
    assert_eq!(
        patched(&*store, "fan-2", r#"{"displayName": "alice"}"#).await,
        Err(PatchProfileError::NameTaken)
    );
    // A rename frees the old name in the same write.
    patched(&*store, "fan-1", r#"{"displayName": "Bob"}"#)
        .await
        .unwrap();
    let taken = patched(&*store, "fan-2", r#"{"displayName": "alice"}"#)
        .await
        .unwrap();
    assert_eq!(name_of(&taken), Some("alice"));
    assert_eq!(
        patched(&*store, "fan-1", r#"{"displayName": "Alice"}"#).await,
        Err(PatchProfileError::NameTaken)
    );
    // Clearing a name frees it.
    patched(&*store, "fan-2", r#"{"displayName": null}"#)
        .await
        .unwrap();
    assert_eq!(name_of(&profile(&*store, "fan-2").await), None);
    let back = patched(&*store, "fan-1", r#"{"displayName": "alice"}"#)
        .await
        .unwrap();
    assert_eq!(name_of(&back), Some("alice"));
    // ... and Bob with it.
    patched(&*store, "fan-3", r#"{"displayName": "bob"}"#)
        .await
        .unwrap();
}

async fn a_favourite_team_must_exist_and_a_refused_patch_writes_nothing(
    store: Arc<impl ProfileStore + SeedCatalog>,
) {
    let before = patched(&*store, "fan-1", r#"{"displayName": "Keeper"}"#)
        .await
        .unwrap();
    assert_eq!(
        patched(
            &*store,
            "fan-1",
            r#"{"displayName": "Other", "favoriteTeamId": "nba-nope"}"#
        )
        .await,
        Err(PatchProfileError::TeamNotFound)
    );
    assert_eq!(profile(&*store, "fan-1").await, before, "nothing written");
    // The name the refused patch named is still free, and the old one still held.
    patched(&*store, "fan-2", r#"{"displayName": "other"}"#)
        .await
        .unwrap();
    assert_eq!(
        patched(&*store, "fan-2", r#"{"displayName": "keeper"}"#).await,
        Err(PatchProfileError::NameTaken)
    );
    store.put_team(&team("nba-lal")).await.unwrap();
    let picked = patched(&*store, "fan-1", r#"{"favoriteTeamId": "nba-lal"}"#)
        .await
        .unwrap();
    assert_eq!(
        picked.favorite_team_id,
        Some(TeamId::parse("nba-lal").unwrap())
    );
    // A taken name refuses the whole patch, the team with it.
    assert_eq!(
        patched(
            &*store,
            "fan-2",
            r#"{"displayName": "Keeper", "favoriteTeamId": "nba-lal"}"#
        )
        .await,
        Err(PatchProfileError::NameTaken)
    );
    assert_eq!(profile(&*store, "fan-2").await.favorite_team_id, None);
}

/// Fan `racer-<n>` claims `names[n]`, all at once; answers the one fan who got a name and the
/// name they got (every other was refused as taken and holds none).
async fn race(
    store: &Arc<impl ProfileStore + 'static>,
    names: &[&'static str],
) -> (String, String) {
    let racers: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(n, name)| {
            let store = store.clone();
            let json = format!(r#"{{"displayName": "{name}"}}"#);
            tokio::spawn(async move {
                let fan = format!("racer-{n}");
                (fan.clone(), patched(&*store, &fan, &json).await)
            })
        })
        .collect();
    let mut winners = Vec::new();
    for racer in racers {
        let (fan, result) = racer.await.unwrap();
        match result {
            Ok(_) => winners.push(fan),
            Err(PatchProfileError::NameTaken) => {
                assert_eq!(name_of(&profile(&**store, &fan).await), None, "{fan}");
            }
            Err(other) => panic!("{fan}: {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    let winner = winners.remove(0);
    let held = name_of(&profile(&**store, &winner).await)
        .unwrap()
        .to_owned();
    (winner, held)
}

async fn fans_racing_for_one_name_exactly_one_gets_it(store: Arc<impl ProfileStore + 'static>) {
    // Each claims the name in a case of their own.
    let (_, held) = race(
        &store,
        &["Champ", "champ", "Champ", "champ", "Champ", "champ"],
    )
    .await;
    assert!(held.eq_ignore_ascii_case("champ"), "{held}");
    assert_eq!(
        patched(&*store, "late", r#"{"displayName": "CHAMP"}"#).await,
        Err(PatchProfileError::NameTaken)
    );
}

async fn fans_racing_for_look_alike_names_exactly_one_gets_one(
    store: Arc<impl ProfileStore + 'static>,
) {
    let alike = [
        "Hollow.96917",
        "HoIlow.96917",
        "H0llow.96917",
        "Hollow_96917",
        "Hollow-96917",
        "HOLL0W96917",
    ];
    let (winner, held) = race(&store, &alike).await;
    // The winner keeps their own spelling.
    let n: usize = winner.trim_start_matches("racer-").parse().unwrap();
    assert_eq!(held, alike[n]);
    for name in alike.iter().chain(&["ho1low.96917", "hol.low96917"]) {
        assert_eq!(
            patched(&*store, "late", &format!(r#"{{"displayName": "{name}"}}"#)).await,
            Err(PatchProfileError::NameTaken),
            "{name}"
        );
    }
    // The winner may move to another look-alike of their own name; nothing is freed.
    let moved = patched(&*store, &winner, r#"{"displayName": "HOLLOW.96917"}"#)
        .await
        .unwrap();
    assert_eq!(name_of(&moved), Some("HOLLOW.96917"));
    assert_eq!(
        patched(&*store, "late", r#"{"displayName": "Hollow.96917"}"#).await,
        Err(PatchProfileError::NameTaken)
    );
    // A name that only starts alike is another name.
    patched(&*store, "late", r#"{"displayName": "Hallow.96917"}"#)
        .await
        .unwrap();
}

async fn an_avatar_is_kept_in_its_normal_form_never_as_sent(store: Arc<impl ProfileStore>) {
    let set = patched(
        &*store,
        "fan-1",
        r#"{"avatarUrl": " HTTPS:cdn.example/a.png?\"><img src=x onerror=alert(1)>"}"#,
    )
    .await
    .unwrap();
    let normal = "https://cdn.example/a.png?%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E";
    assert_eq!(
        set.avatar_url.as_ref().map(|url| url.as_str()),
        Some(normal)
    );
    assert_eq!(profile(&*store, "fan-1").await, set);
}

async fn one_fans_racing_renames_leave_one_name_held_and_the_other_free(
    store: Arc<impl ProfileStore + 'static>,
) {
    let renames: Vec<_> = ["First", "Second", "Third"]
        .into_iter()
        .map(|name| {
            let store = store.clone();
            tokio::spawn(async move {
                let json = format!(r#"{{"displayName": "{name}"}}"#);
                patched(&*store, "fan-1", &json).await.unwrap()
            })
        })
        .collect();
    for rename in renames {
        rename.await.unwrap();
    }
    let kept = profile(&*store, "fan-1").await;
    let kept = name_of(&kept).unwrap().to_owned();
    for name in ["First", "Second", "Third"] {
        let result = patched(&*store, "fan-2", &format!(r#"{{"displayName": "{name}"}}"#)).await;
        if name == kept {
            assert_eq!(result, Err(PatchProfileError::NameTaken), "{name}");
        } else {
            assert!(result.is_ok(), "{name} was left held: {result:?}");
        }
    }
}
