//! The policies' snapshot (`policies/functions.yaml`): every function's policy as the template
//! has it, rewritten on request, and the reasons each function may do what its policy allows.

use super::*;

/// The snapshot of every function's policy, by binary: what the template's policies are. The
/// policy test rewrites it on request ([`UPDATE`]), so that a reviewer reads a change of what a
/// function may reach in its diff and nobody types a policy twice.
const SNAPSHOT: &str = "crates/api/tests/policies/functions.yaml";
const UPDATE: &str = "UPDATE_SNAPSHOTS=1 cargo test -p api --test integration policies::";

/// The snapshot's text, of the template `template_text`.
fn policies_snapshot(template_text: &str) -> String {
    let template: Value = serde_norway::from_str(template_text).expect("template.yaml parses");
    let mut policies = serde_norway::Mapping::new();
    for (_, resource) in template["Resources"].as_mapping().expect("Resources") {
        if resource["Type"].as_str() == Some("AWS::Serverless::Function") {
            policies.insert(
                resource["Metadata"]["BuildProperties"]["Binary"].clone(),
                resource["Properties"]["Policies"].clone(),
            );
        }
    }
    let yaml = serde_norway::to_string(&policies).expect("the policies serialize");
    format!(
        "# Each function's IAM policy in template.yaml, by binary. A snapshot, not a source: the\n\
         # policies are written once, in template.yaml, and crates/api/tests/policies.rs checks this file\n\
         # is theirs; `{UPDATE}` rewrites it. A change here\n\
         # is a change of what a function may reach: review it with the reasons in that test.\n{yaml}"
    )
}

/// The functions whose policy differs between two snapshots (every one when one does not parse).
fn differing(committed: &str, snapshot: &str) -> Vec<String> {
    let parse = |text| serde_norway::from_str::<serde_norway::Mapping>(text).unwrap_or_default();
    let (committed, snapshot) = (parse(committed), parse(snapshot));
    let functions: BTreeSet<String> = committed
        .keys()
        .chain(snapshot.keys())
        .filter(|function| committed.get(*function) != snapshot.get(*function))
        .filter_map(text)
        .collect();
    functions.into_iter().collect()
}

#[test]
fn a_policy_changed_in_the_template_alone_is_caught() {
    let template = read("template.yaml");
    let snapshot = policies_snapshot(&template);
    assert_eq!(differing(&snapshot, &snapshot), Vec::<String>::new());
    let changed = altered_in(
        &template,
        "  MeWalletsFunction:",
        "- dynamodb:DeleteItem",
        "- dynamodb:PutItem",
    );
    assert_ne!(policies_snapshot(&changed), snapshot);
    assert_eq!(
        differing(&snapshot, &policies_snapshot(&changed)),
        ["me-wallets"]
    );
}

/// Each function may use only the DynamoDB actions it needs, on only what it reads or writes
/// (`dynamodb:LeadingKeys`); read `crates/store/src/dynamo/*.rs` for the calls:
/// - list-packs: `Query` of the listing index, of a league's packs (GSI2, `LEAGUE#`) and of a
///   team's (GSI3, `TEAM#`); `GetItem` of a filter's league or team (`LEAGUE#`, `TEAM#`);
/// - get-pack: `BatchGetItem` of pack and draw items (`PACK#`, `DRAW#`);
/// - the functions with a start or a join route (start-purchase, queue: `RATE#`): one
///   conditional `UpdateItem` of a window's counter per request and scope
///   (crates/api/src/http/limit.rs; reads and other writes are counted in memory).
/// - web3-link: a transaction of `UpdateItem`s of the user's link, wallet (created by a
///   conditional update) and count of wallets (`USER#`);
/// - me-wallets: `Query` of the user's wallet items, and a removal's transaction of a
///   `DeleteItem` (the wallet) and an `UpdateItem` (the count) (`USER#`);
/// - start-purchase: `BatchGetItem` of the pack, the buyer's count and the purchase, and of the
///   pack's shares; a transaction of `UpdateItem`s (a share, count) and a `PutItem` (purchase);
///   before answering sold out, a `Query` of the holds index and the releases' `UpdateItem`s
///   (purchase, share, count) and the summary's `UpdateItem`; at the buyer's limit, a `Query` of
///   their purchases (`USER#`); on a queued pack, `GetItem` of the fan's own entry and its
///   `UpdateItem` in the transaction (`QUEUE#`: IAM takes literal prefixes only); on a
///   `humanCheck` pack, the conditional `PutItem` of the spent token (`HUMAN#`);
/// - get-purchase: `GetItem` of the purchase (`USER#`) and of the pack's published seed
///   (`PACK#`);
/// - complete-purchase: `BatchGetItem` of the purchase (`USER#`), the balances (`CASH#`) and the
///   pack (`PACK#`, for its sale end); a transaction
///   of `UpdateItem`s (purchase, balances) and a `PutItem` (debit); `GetItem` of the purchase
///   after a lost race; the release of an expired hold (`UpdateItem`s, the pack's `PACK#`);
/// - release-holds: `Query` of the listing and holds indexes, the releases' `UpdateItem`s, the
///   shares' `BatchGetItem` and the summaries' `UpdateItem`s (`PACK#`); a revealed pack's draw
///   item (`DRAW#`, its seed) read once, to publish the seed on the pack's item;
/// - queue-keeper: `Query` of the pending queues (GSI1) and the entry index (GSI2); `GetItem` and
///   `BatchGetItem` of states, pages, entries (`QUEUE#`), the queue seed (`QSEED#`) and the pack
///   and its shares (`PACK#`, read only); `PutItem`, `BatchWriteItem` and `UpdateItem` of
///   `QUEUE#` only;
/// - open-pack: `BatchGetItem` of the purchase (`USER#`) and the pack's draw inputs (`DRAW#`),
///   then one transaction of `UpdateItem`s: the purchase and the fan's stats (`FAN#`);
/// - me-purchases: `Query` of the caller's `USER#` partitions of GSI3 (purchases) and GSI2
///   (opened purchases), and `BatchGetItem` of packs' public items (`PACK#`: a published seed);
/// - me-cash: `GetItem` of the caller's balances and `Query` of their `CASH#` partition of GSI3
///   (the ledger): reads only, no write to `CASH#`;
/// - cash-top-ups: `PutItem`, `UpdateItem` (its Checkout Session) and `GetItem` of top-ups
///   (`TOPUP#`) only, the fan's pending slots (`TOPUP#USER#<userId>`) included: the create's
///   transaction is the put and an update;
/// - stripe-webhook: `GetItem` of the top-up (`TOPUP#`), the balance (`CASH#`) and a credit entry
///   in the way (`CREDIT#`); the completion's transaction of a `PutItem` (the credit entry,
///   `CREDIT#`) and `UpdateItem`s (the balance, `CASH#`; the top-up, `TOPUP#`); the fan's
///   pending slots read and one freed (`TOPUP#`); a card order's `GetItem` (`USER#`), its
///   completion's `UpdateItem`s (the order, the cosmetic owned: `USER#`; a bundle's credit as a
///   top-up's) and its close's (the order, the fan's count: `USER#`; the stock: `PRODUCT#`);
/// - me-profile: `GetItem` and `PutItem` of the fan's profile (`USER#`); in the patch's
///   transaction, `PutItem` and `DeleteItem` of display names (`NAME#`), `UpdateItem` of the
///   fan's public face (`FAN#`) and `ConditionCheckItem` of the favourite team (`TEAM#`); for the
///   locker room, `BatchGetItem` of the fan's purchases (`USER#`), `UpdateItem` and `Query` of
///   their public face and stats (`FAN#`);
/// - locker-rooms (public): `GetItem` of a name's holder (`NAME#`) and `Query` of their public
///   face and stats (`FAN#`): reads only, nothing of `USER#`;
/// - queue: `BatchGetItem` of a pack item (`PACK#`) and its line's state (`QUEUE#`), of a
///   finished line's supply shares (`PACK#`: the report's units sold), and of entrant pages; the
///   join's conditional `PutItem` of the fan's entry and `GetItem` of an entry or an entrant page
///   (`QUEUE#`), an exclusion counter's `UpdateItem` (`QUEUE#`), and the conditional `PutItem` of
///   a spent human-check token (`HUMAN#`): never the queue's seed (`QSEED#`) nor `DRAW#`;
/// - catalog: `GetItem` of a league or team (`LEAGUE#`, `TEAM#`) and `Query` of the
///   catalogue's partitions of GSI1 (`CATALOG#`): reads only;
/// - leaderboards: `Query` of the boards' partitions of GSI4 (`BOARD#`), `GetItem` and
///   `BatchGetItem` of scores and public faces (`FAN#`), `GetItem` of a league or team (a 404):
///   reads only;
/// - dashboard: `GetItem` of the balances (`CASH#`), the global score (`FAN#`) and the fan's
///   queue entries (`QUEUE#`), `Query` of the
///   quests and the caller's claims (`QUEST#`, `USER#`), their items (GSI2 `USER#`), purchases
///   (GSI3 `USER#`), the listing (GSI1 `PACKS#`) and the global board (GSI4 `BOARD#`): reads
///   only;
/// - quest-claims: `GetItem` of the quest (`QUEST#`) and the fan's claim (`USER#`), `Query` of
///   the fan's opened purchases (GSI2 `USER#`); a Cash reward's transaction of `PutItem`s
///   (claim, key: `USER#`; credit entry: `CREDIT#quest:` only) and the balance's `UpdateItem`
///   (`CASH#`); a pack reward's `BatchGetItem` of the pack, its shares (`PACK#`) and the
///   buyer's count (`USER#`), then a transaction of `PutItem`s (claim, key, purchase: `USER#`)
///   and `UpdateItem`s (a share: `PACK#`; the buyer's nonce: `USER#`). No holds index, no
///   release: dead holds are the sweep's.
/// - misc: `GetItem` of the app configuration (`CONFIG#`), as every function serving requests
///   (its version gate and maintenance: one read per instance every few seconds): nothing else.
#[test]
fn each_function_has_only_its_dynamodb_permission() {
    let snapshot = policies_snapshot(&read("template.yaml"));
    let committed = read(SNAPSHOT);
    if committed != snapshot {
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            let path = format!("{}/../../{SNAPSHOT}", env!("CARGO_MANIFEST_DIR"));
            std::fs::write(&path, &snapshot).unwrap_or_else(|e| panic!("{path}: {e}"));
            eprintln!("wrote {SNAPSHOT}");
        } else {
            let functions = differing(&committed, &snapshot);
            let how = if functions.is_empty() {
                "the same policies, written otherwise".to_owned()
            } else {
                format!("those of {} differ", functions.join(", "))
            };
            panic!(
                "{SNAPSHOT} is not template.yaml's policies ({how}); review the change with the \
                 reasons above this test, then run `{UPDATE}` and commit the snapshot"
            );
        }
    }
    // The prefixes are the store's.
    assert_eq!(store::schema::DRAW_PREFIX, "DRAW#");
    assert_eq!(store::schema::pack_pk(&testkit::ids::pack("p")), "PACK#p");
    assert_eq!(store::schema::user_pk(&testkit::ids::user("u")), "USER#u");
    assert_eq!(store::schema::GSI2, "GSI2");
    assert_eq!(store::schema::GSI3, "GSI3");
    assert_eq!(store::schema::cash_pk(&testkit::ids::user("u")), "CASH#u");
    assert_eq!(
        store::schema::topup_pk(&testkit::ids::top_up("t")),
        "TOPUP#t"
    );
    assert_eq!(store::schema::credit_pk("r"), "CREDIT#r");
    // The quest credits' pattern (`CREDIT#quest:*`) is their references'.
    let quest = domain::ids::QuestId::parse("q").unwrap();
    assert_eq!(
        store::schema::credit_pk(&domain::quests::credit_reference(&quest, &fan_id())),
        "CREDIT#quest:q:u"
    );
    assert_eq!(store::schema::QUESTS_PK, "QUEST#ALL");
    assert_eq!(store::schema::rewards_pk(&fan_id()), "REWARDS#u");
    let name = domain::profile::name::DisplayName::parse("Zoe").unwrap();
    assert_eq!(store::schema::name_pk(&name.key()), "NAME#zoe");
    let fan = domain::ids::UserId::parse("u").unwrap();
    assert_eq!(store::schema::fan_pk(&fan), "FAN#u");
    let team = domain::ids::TeamId::parse("nba-lal").unwrap();
    assert_eq!(store::schema::team_pk(&team), "TEAM#nba-lal");
    let wallet = domain::ids::WalletId::parse("w").unwrap();
    assert_eq!(store::schema::wallet_sk(&wallet), "WALLET#w");
    let pack = testkit::ids::pack("p");
    assert_eq!(store::schema::queue_pk(&pack), "QUEUE#p");
    assert_eq!(store::schema::entry_pk(&pack, &fan), "QUEUE#p#USER#u");
    assert_eq!(store::schema::qseed_pk(&pack), "QSEED#p");
    assert!(store::app_config::CONFIG_PK.starts_with(store::app_config::CONFIG_PREFIX));
}
