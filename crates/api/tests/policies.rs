//! Each function's IAM policy: exactly the DynamoDB actions it uses, on only the key prefixes it
//! reads or writes (`dynamodb:LeadingKeys`), and no server seed (`DRAW#`), money or top-up within
//! reach but of the functions that must reach one. Least privilege is reviewed, not generated:
//! these policies are written once, by hand, in template.yaml; a snapshot of them
//! (`policies/functions.yaml`) shows a change of one in the diff. Each checker takes the file's
//! text and returns the problems, so the tests also prove, on altered copies of the real file,
//! that a policy reaching further is caught.

use crate::support;

use std::collections::BTreeSet;

use serde_norway::Value;
use support::{altered, assert_none, read};

mod snapshot;

fn text(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

/// The key prefixes only some functions may reach, those functions, and those that may only
/// read them: a pack's draw inputs (its server seed, `DRAW#`), money (balances and debits,
/// `CASH#`, which a Cash order debits too; credit entries, `CREDIT#`) and Cash top-ups (`TOPUP#`).
const GUARDED: [(&str, &[&str], &[&str]); 12] = [
    // The app configuration: written by the operators' `app-config` only; every function that
    // serves requests reads it (its version gate and maintenance).
    (
        store::app_config::CONFIG_PREFIX,
        &[],
        &[
            "list-packs",
            "get-pack",
            "web3-link",
            "start-purchase",
            "get-purchase",
            "complete-purchase",
            "open-pack",
            "me-purchases",
            "me-cash",
            "quests",
            "quest-claims",
            "me-wallets",
            "cash-top-ups",
            "stripe-webhook",
            "me-profile",
            "locker-rooms",
            "queue",
            "leaderboards",
            "dashboard",
            "catalog",
            "misc",
            "events",
            "auth",
            "webhook-endpoints",
            "account",
            "account-deletion",
            "products",
            "product-orders",
        ],
    ),
    (
        store::schema::DRAW_PREFIX,
        &["get-pack", "open-pack"],
        &["release-holds"],
    ),
    (
        store::schema::CASH_PREFIX,
        &[
            "complete-purchase",
            "stripe-webhook",
            "quest-claims",
            "account-deletion",
            "account-erasure",
            "product-orders",
        ],
        &["start-purchase", "me-cash", "dashboard", "account"],
    ),
    // A deleted account's money is re-keyed to its pseudonym (docs/account-deletion.md).
    (
        "CREDIT#",
        &["stripe-webhook", "account-deletion", "account-erasure"],
        &[],
    ),
    (
        store::schema::TOPUP_PREFIX,
        &[
            "cash-top-ups",
            "stripe-webhook",
            "account-deletion",
            "account-erasure",
            "product-orders",
        ],
        &[],
    ),
    // Who holds a display name, and what the public sees of a fan: written only by the fan's
    // own profile.
    // The public locker rooms read both; the openings add to the stats.
    (
        store::schema::NAME_PREFIX,
        &["me-profile", "account-deletion", "account-erasure"],
        &["locker-rooms"],
    ),
    (
        store::schema::FAN_PREFIX,
        &[
            "me-profile",
            "open-pack",
            "account-deletion",
            "account-erasure",
        ],
        &["locker-rooms", "leaderboards", "dashboard", "account"],
    ),
    // A waiting room's secret seed: the keeper's draw reveals it (seed-packs writes it).
    (store::schema::QSEED_PREFIX, &["queue-keeper"], &[]),
    // Spent human-check tokens: the doors that verify one (a queue's join, a humanCheck start).
    (
        store::schema::HUMAN_PREFIX,
        &["queue", "start-purchase"],
        &[],
    ),
    // The rate limits' counters in the table: the functions with a start or a join route, the
    // classes counted across instances (reads and other writes are counted in memory).
    (
        store::schema::RATE_PREFIX,
        &["start-purchase", "queue"],
        &[],
    ),
    // Webhook endpoints hold their signing secrets: the operators' routes write them, the
    // sender changes a streak on one, the dispatcher reads them; deliveries (attempts and
    // answers) are the sender's, read by the operators' routes (issue 46).
    (
        "WHEP#",
        &["webhook-sender", "webhook-endpoints"],
        &["events-dispatcher"],
    ),
    (
        store::schema::DELIVERY_PREFIX,
        &["webhook-sender"],
        &["webhook-endpoints"],
    ),
];

/// The one non-DynamoDB statement a policy may hold: sending to the webhook deliveries queue,
/// by the functions that queue deliveries (the operators' tests, retries and replays too).
const QUEUE_SENDERS: [&str; 3] = ["events-dispatcher", "webhook-sender", "webhook-endpoints"];

/// Patterns narrower than a whole prefix, each within a [`GUARDED`] one, and the functions that
/// may use them: the claim of a quest writes credit entries, but only quests' (the references of
/// [`domain::quests::credit_reference`]), never a top-up's or an operator's.
const NARROWED: [(&str, &[&str]); 1] = [("CREDIT#quest:*", &["quest-claims"])];

/// The key prefixes some functions may not reach at all, even to read: a fan's own items
/// (`USER#`: e-mail, links, purchases) are out of reach of the public locker rooms, which read
/// the `FAN#` copies instead.
const PRIVATE: [(&str, &[&str]); 1] = [(store::schema::USER_PREFIX, &["locker-rooms"])];

/// The actions that read (or condition on) an item and never change it.
const READ_ACTIONS: [&str; 4] = [
    "dynamodb:BatchGetItem",
    "dynamodb:GetItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:Query",
];

/// The indexes functions may query; no draw item is in any (GSI1: listed packs, GSI2: holds
/// and opened purchases, GSI3: the fan's purchases and ledger, GSI4: the boards, GSI5: events by
/// time).
const INDEX_RESOURCES: [&str; 5] = [
    "${Table.Arn}/index/GSI1",
    "${Table.Arn}/index/GSI2",
    "${Table.Arn}/index/GSI3",
    "${Table.Arn}/index/GSI4",
    "${Table.Arn}/index/GSI5",
];

/// The indexes that hold guarded keys (GSI3: ledger entries under `CASH#<userId>`): a Query of
/// one must be held to its key prefixes (`dynamodb:LeadingKeys`, the index's partition key).
const GUARDED_INDEXES: [&str; 1] = ["${Table.Arn}/index/GSI3"];

/// The IAM actions of the DynamoDB calls the store makes (a `TransactWriteItems` is authorised
/// per contained action: `UpdateItem`, `PutItem`, `DeleteItem`, `ConditionCheckItem`; there is no
/// IAM action of that name).
const DYNAMODB_ACTIONS: [&str; 8] = [
    "dynamodb:BatchGetItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:Query",
    "dynamodb:ConditionCheckItem",
];

/// Problems of the functions' policies: a statement that is not an `Allow` of listed DynamoDB
/// actions, on an index or on the table restricted (`ForAllValues:StringLike`
/// `dynamodb:LeadingKeys`) to literal key prefixes (`USER#*`); a [`GUARDED`] prefix in the
/// policy of a function not listed with it.
fn policy_problems(template_text: &str) -> Vec<String> {
    let template: Value = serde_norway::from_str(template_text).expect("template.yaml parses");
    let mut problems = Vec::new();
    for (_, resource) in template["Resources"].as_mapping().expect("Resources") {
        if resource["Type"].as_str() != Some("AWS::Serverless::Function") {
            continue;
        }
        let function = text(&resource["Metadata"]["BuildProperties"]["Binary"]).unwrap_or_default();
        let policies = resource["Properties"]["Policies"].as_sequence();
        for policy in policies.into_iter().flatten() {
            let Some(statements) = policy["Statement"].as_sequence() else {
                problems.push(format!("{function}: a policy that is not a statement list"));
                continue;
            };
            for statement in statements {
                problems.extend(statement_problems(&function, statement));
            }
        }
    }
    problems
}

fn statement_problems(function: &str, statement: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if statement["Effect"].as_str() != Some("Allow") {
        problems.push(format!("{function}: a statement that is not an Allow"));
    }
    if statement["Action"].as_str() == Some("sqs:SendMessage") {
        let queue = serde_norway::from_str::<Value>("!GetAtt WebhookDeliveries.Arn").unwrap();
        if !QUEUE_SENDERS.contains(&function) || statement["Resource"] != queue {
            problems.push(format!(
                "{function}: sqs:SendMessage beyond the deliveries queue"
            ));
        }
        return problems;
    }
    let actions: Vec<String> = match &statement["Action"] {
        Value::String(action) => vec![action.clone()],
        Value::Sequence(actions) => actions.iter().filter_map(text).collect(),
        other => {
            problems.push(format!("{function}: Action {other:?}"));
            Vec::new()
        }
    };
    for action in &actions {
        if !DYNAMODB_ACTIONS.contains(&action.as_str()) {
            problems.push(format!(
                "{function}: action {action} is not one the store uses"
            ));
        }
    }
    let resource = &statement["Resource"];
    let yaml = |text: &str| serde_norway::from_str::<Value>(text).unwrap();
    let on_table = *resource == yaml("!GetAtt Table.Arn");
    let is = |index: &&str| *resource == yaml(&format!("!Sub \"{index}\""));
    let on_index = INDEX_RESOURCES.iter().any(is);
    if on_index {
        if actions.iter().any(|a| a != "dynamodb:Query") {
            problems.push(format!(
                "{function}: only Query on an index, not {actions:?}"
            ));
        }
        // An index of unguarded keys may be queried whole; one with guarded keys, or a query
        // held to prefixes anyway, is checked as the table is.
        if statement["Condition"].is_null() && !GUARDED_INDEXES.iter().any(is) {
            return problems;
        }
    }
    if !on_table && !on_index {
        problems.push(format!(
            "{function}: resource {resource:?} is neither the table nor an index"
        ));
        return problems;
    }
    let condition = &statement["Condition"];
    let Some(prefixes) = condition["ForAllValues:StringLike"]["dynamodb:LeadingKeys"].as_sequence()
    else {
        problems.push(format!(
            "{function}: {actions:?} on {resource:?} without ForAllValues:StringLike dynamodb:LeadingKeys"
        ));
        return problems;
    };
    if condition.as_mapping().map(|c| c.len()) != Some(1)
        || condition["ForAllValues:StringLike"]
            .as_mapping()
            .map(|c| c.len())
            != Some(1)
    {
        problems.push(format!(
            "{function}: a condition beside dynamodb:LeadingKeys"
        ));
    }
    for prefix in prefixes {
        let prefix = text(prefix).unwrap_or_default();
        if let Some((_, allowed)) = NARROWED.iter().find(|(narrowed, _)| *narrowed == prefix) {
            if !allowed.contains(&function) {
                problems.push(format!("{function}: may reach {prefix} keys"));
            }
            continue;
        }
        // `<LITERAL>#*`, the literal without wildcards: any other pattern may match `DRAW#...`.
        let literal = prefix.strip_suffix("#*").unwrap_or("*");
        if literal.is_empty() || literal.contains(['*', '?', '#']) {
            problems.push(format!(
                "{function}: key pattern {prefix:?} is not a literal prefix `NAME#*`"
            ));
        } else if let Some((private, _)) = PRIVATE.iter().find(|(private, kept_from)| {
            format!("{literal}#") == *private && kept_from.contains(&function)
        }) {
            problems.push(format!("{function}: may reach {private} keys ({prefix})"));
        } else if let Some((guarded, _, _)) = GUARDED.iter().find(|(guarded, allowed, readers)| {
            let reads_only = actions.iter().all(|a| READ_ACTIONS.contains(&a.as_str()));
            format!("{literal}#") == *guarded
                && !allowed.contains(&function)
                && !(reads_only && readers.contains(&function))
        }) {
            problems.push(format!("{function}: may reach {guarded} keys ({prefix})"));
        }
    }
    problems
}

#[test]
fn no_function_may_reach_what_it_does_not_use() {
    assert_none(policy_problems(&read("template.yaml")));
}

#[test]
fn a_policy_that_reaches_further_is_caught() {
    let template = read("template.yaml");
    let start = "  StartPurchaseFunction:";
    let (before, after) = template.split_at(template.find(start).unwrap());
    for (from, to) in [
        // The server seeds, or money, within reach of the start.
        (
            "                    - \"USER#*\"\n",
            "                    - \"USER#*\"\n                    - \"DRAW#*\"\n",
        ),
        (
            "                    - \"USER#*\"\n",
            "                    - \"USER#*\"\n                    - \"CASH#*\"\n",
        ),
        // Any key.
        (
            "                    - \"USER#*\"\n",
            "                    - \"*\"\n",
        ),
        (
            "                    - \"USER#*\"\n",
            "                    - \"D*\"\n",
        ),
        // No key condition at all.
        (
            "              Condition:\n                ForAllValues:StringLike:\n                  dynamodb:LeadingKeys:\n                    - \"USER#*\"\n",
            "",
        ),
        // Every action; and one that is no IAM action.
        ("Action: dynamodb:PutItem", "Action: dynamodb:*"),
        (
            "Action: dynamodb:PutItem",
            "Action: dynamodb:TransactWriteItems",
        ),
        // Another resource.
        (
            "Resource: !Sub \"${Table.Arn}/index/GSI2\"",
            "Resource: \"*\"",
        ),
    ] {
        let altered = format!("{before}{}", altered(after, from, to));
        assert!(
            !policy_problems(&altered).is_empty(),
            "{from:?} -> {to:?} went unnoticed"
        );
    }
}

/// The queue function reaching its line's secret seed, or a pack's, is caught.
#[test]
fn the_queues_policy_cannot_reach_the_seeds() {
    let template = read("template.yaml");
    let queue = "                    - \"QUEUE#*\"\n";
    for seed in ["QSEED#*", "DRAW#*"] {
        let wider = format!("{queue}                    - \"{seed}\"\n");
        assert!(
            caught_in(&template, "  QueueFunction:", queue, &wider),
            "queue reaching {seed} went unnoticed"
        );
    }
}

/// Display names and the public face stay out of reach of every other function, and money out
/// of the profile's (the exact policy, team checks only, is pinned above).
#[test]
fn the_profiles_policy_cannot_reach_further() {
    let template = read("template.yaml");
    let team = "                    - \"TEAM#*\"\n";
    let money = format!("{team}                    - \"CASH#*\"\n");
    assert!(
        caught_in(&template, "  MeProfileFunction:", team, &money),
        "me-profile reaching CASH# went unnoticed"
    );
    // The public function reaching a fan's e-mail, links or purchases, or writing.
    let fan = "                    - \"FAN#*\"\n";
    let user = "                    - \"USER#*\"\n";
    assert!(
        caught_in(
            &template,
            "  LockerRoomsFunction:",
            fan,
            &format!("{fan}{user}")
        ),
        "locker-rooms reaching USER# went unnoticed"
    );
    for guarded in ["NAME#*", "FAN#*"] {
        let wider = format!("{user}                    - \"{guarded}\"\n");
        assert!(
            caught_in(&template, "  StartPurchaseFunction:", user, &wider),
            "start-purchase reaching {guarded} went unnoticed"
        );
    }
}

/// The wallets' function reaching money or seeds, or another action, is caught.
#[test]
fn the_wallets_policy_cannot_reach_further() {
    let template = read("template.yaml");
    let user = "                    - \"USER#*\"\n";
    for extra in ["CASH#*", "DRAW#*"] {
        let wider = format!("{user}                    - \"{extra}\"\n");
        assert!(
            caught_in(&template, "  MeWalletsFunction:", user, &wider),
            "me-wallets reaching {extra} went unnoticed"
        );
    }
    assert!(caught_in(
        &template,
        "  MeWalletsFunction:",
        "- dynamodb:DeleteItem",
        "- dynamodb:*"
    ));
}

#[test]
fn the_webhook_functions_reach_only_their_keys_and_queue() {
    let template = read("template.yaml");
    let dispatcher = "  EventsDispatcherFunction:";
    let sender = "  WebhookSenderFunction:";
    // The dispatcher only reads the endpoints (their secrets included).
    assert!(caught_in(
        &template,
        dispatcher,
        "Action: dynamodb:Query",
        "Action: dynamodb:UpdateItem"
    ));
    assert!(caught_in(
        &template,
        dispatcher,
        "\"WHEP#*\"",
        "\"WHDLV#*\""
    ));
    // The sender reaches no guarded key (money, seeds, top-ups).
    for wider in ["CASH#*", "DRAW#*", "TOPUP#*"] {
        assert!(
            caught_in(&template, sender, "\"WHDLV#*\"", &format!("\"{wider}\"")),
            "the sender reaching {wider} went unnoticed"
        );
    }
    // Each sends to the deliveries queue and no other.
    for function in [dispatcher, sender] {
        assert!(caught_in(
            &template,
            function,
            "Resource: !GetAtt WebhookDeliveries.Arn",
            "Resource: \"*\""
        ));
    }
    assert!(caught_in(
        &template,
        "  MeWalletsFunction:",
        "            - Effect: Allow\n",
        "            - Effect: Allow\n              Action: sqs:SendMessage\n              Resource: !GetAtt WebhookDeliveries.Arn\n            - Effect: Allow\n"
    ));
}

/// Whether the policy checks catch `template` with `from` made `to` in the part that begins
/// with `resource` (a function's resource name, as `  MeCashFunction:`).
fn caught_in(template: &str, resource: &str, from: &str, to: &str) -> bool {
    !policy_problems(&altered_in(template, resource, from, to)).is_empty()
}

/// `template` with `from` made `to` in the part that begins with `resource`.
fn altered_in(template: &str, resource: &str, from: &str, to: &str) -> String {
    let (before, after) = template.split_at(template.find(resource).unwrap());
    format!("{before}{}", altered(after, from, to))
}

#[test]
fn the_fans_cash_reads_cannot_reach_further() {
    let template = read("template.yaml");
    for (from, to) in [
        // A write to money.
        ("Action: dynamodb:GetItem", "Action: dynamodb:UpdateItem"),
        // The ledger's index queried whole (every fan's purchases and ledger).
        (
            "              Resource: !Sub \"${Table.Arn}/index/GSI3\"\n              Condition:\n                ForAllValues:StringLike:\n                  dynamodb:LeadingKeys:\n                    - \"CASH#*\"\n",
            "              Resource: !Sub \"${Table.Arn}/index/GSI3\"\n",
        ),
    ] {
        assert!(
            caught_in(&template, "  MeCashFunction:", from, to),
            "{from:?} -> {to:?} went unnoticed"
        );
    }
    // The purchases' function reading the ledger through the index.
    let (user, cash) = (
        "                    - \"USER#*\"\n",
        "                    - \"CASH#*\"\n",
    );
    assert!(
        caught_in(&template, "  MePurchasesFunction:", user, cash),
        "me-purchases reading CASH#"
    );
}

/// Money and top-ups stay out of reach of the top-up function, and top-ups out of reach of the
/// others: each alteration is caught.
#[test]
fn a_top_up_policy_that_reaches_further_is_caught() {
    let template = read("template.yaml");
    let topups = "                    - \"TOPUP#*\"\n";
    for extra in ["CASH#*", "CREDIT#*"] {
        let wider = format!("{topups}                    - \"{extra}\"\n");
        assert!(
            caught_in(&template, "  CashTopUpsFunction:", topups, &wider),
            "cash-top-ups reaching {extra} went unnoticed"
        );
    }
    // A purchase function reaching top-ups.
    let user = "                    - \"USER#*\"\n";
    assert!(caught_in(
        &template,
        "  StartPurchaseFunction:",
        user,
        &format!("{user}{topups}")
    ));
}

fn fan_id() -> domain::ids::UserId {
    domain::ids::UserId::parse("u").unwrap()
}

/// The claim function writes quest credits only, and only it does: a wider credit pattern, or
/// the quests' pattern in another function, is caught.
#[test]
fn quest_credits_stay_the_claims_and_only_the_claims() {
    let template = read("template.yaml");
    let quests = "                    - \"CREDIT#quest:*\"\n";
    assert!(
        caught_in(
            &template,
            "  QuestClaimsFunction:",
            quests,
            "                    - \"CREDIT#*\"\n"
        ),
        "quest-claims writing every credit went unnoticed"
    );
    let user = "                    - \"REWARDS#*\"\n";
    for wider in ["CASH#*", "CREDIT#quest:*", "CREDIT#*"] {
        assert!(
            caught_in(
                &template,
                "  QuestsFunction:",
                user,
                &format!("{user}                    - \"{wider}\"\n")
            ),
            "quests reaching {wider} went unnoticed"
        );
    }
}
