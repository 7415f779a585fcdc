//! The profile's operations, run against both stores (DynamoStore on moto_server through the
//! one-request-at-a-time proxy, MemoryStore): the first read creates the profile from the token;
//! a display name is held by one fan without regard to case, claimed and freed in the patch's
//! one write; a favourite team must exist; a refused patch writes nothing; fans racing for one
//! name: exactly one gets it.

use std::sync::Arc;

use shared::ids::TeamId;
use shared::profile::Profile;
use shared::profile::patch::{ProfilePatch, ProfilePatchBody};
use shared::store::catalog::SeedCatalog;
use shared::store::profile::{PatchProfileError, ProfileStore};
use shared::timestamp::Timestamp;
use testkit::ids;
use testkit::profiles::team;

testkit::store_contract!(
    arc:
    the_first_read_creates_the_profile_from_the_token_once,
    a_patch_sets_clears_and_keeps_each_field,
    a_name_is_one_fans_without_regard_to_case_and_a_rename_frees_the_old_one,
    a_favourite_team_must_exist_and_a_refused_patch_writes_nothing,
    fans_racing_for_one_name_exactly_one_gets_it,
    one_fans_racing_renames_leave_one_name_held_and_the_other_free,
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

async fn fans_racing_for_one_name_exactly_one_gets_it(store: Arc<impl ProfileStore + 'static>) {
    let racers: Vec<_> = (0..6)
        .map(|n| {
            let store = store.clone();
            // Each claims the name in a case of their own.
            let name = if n % 2 == 0 { "Champ" } else { "champ" };
            tokio::spawn(async move {
                let fan = format!("racer-{n}");
                let json = format!(r#"{{"displayName": "{name}"}}"#);
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
                assert_eq!(name_of(&profile(&*store, &fan).await), None, "{fan}");
            }
            Err(other) => panic!("{fan}: {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    assert!(
        name_of(&profile(&*store, &winners[0]).await)
            .is_some_and(|name| name.eq_ignore_ascii_case("champ"))
    );
    assert_eq!(
        patched(&*store, "late", r#"{"displayName": "CHAMP"}"#).await,
        Err(PatchProfileError::NameTaken)
    );
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
