//! `GET /api/me/export?cursor=`: every item the API holds about the caller (GDPR Article 20), a
//! page at a time. The data is cut into sections, each the items of one aggregate; a page is
//! one section's, from ONE bounded read (a Query of one of the fan's partitions, at most
//! [`EXPORT_PAGE`] items, or one GetItem), so that no request grows with the fan's history
//! however long it is, and 10,000 purchases come out as 100 pages. The cursor names the section
//! and the position inside it, signed and bound to the caller as every list's is.

use std::borrow::Cow;
use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use crate::http::error::ApiError;
use crate::http::extract::{Fan, QueryParams};
use crate::http::paging::{MeCursor, cursor, next_cursor, next_cursor_schema};
use crate::http::response::json_response;
use crate::openapi::responses as doc;
use crate::openapi::schemas::truthy;
use crate::state::MeState;
use crate::views::cash::{EntryJson, TopUpJson};
use crate::views::events::EventJson;
use crate::views::locker_room::LockerRoomJson;
use crate::views::products::OrderJson;
use crate::views::purchase::PurchaseJson;
use crate::views::quests::RewardJson;
use crate::views::queue::EntryJson as QueueEntryJson;
use crate::views::wallets::WalletJson;
use domain::cash::Money;
use domain::cash::ledger::LedgerQuery;
use domain::events::Subject;
use domain::links::{WEB3_PROVIDER, Web3Link};
use domain::profile::Profile;
use domain::purchases::mine::{MyPurchasesQuery, Page, is_list_key};
use domain::sessions::Revocations;
use domain::timestamp::Timestamp;
use store::cash::{GetBalances, ListLedger};
use store::events::ListSubjectEvents;
use store::links::GetLink;
use store::locker_room::GetOwnLockerRoom;
use store::products::GetOrders;
use store::profile::FindProfile;
use store::purchases::ListMyPurchases;
use store::quests::ListClaims;
use store::queue::ListMyEntries;
use store::sessions::GetRevocations;
use store::topups::ListMyTopUps;
use store::wallets::ListWallets;

/// The most items a page of a section holds (a purchase is ~2 KB: far under a Query's 1 MB).
pub const EXPORT_PAGE: usize = 100;

/// Every read the export makes, each of the fan's own items.
pub trait ExportReads:
    FindProfile
    + GetLink
    + ListWallets
    + GetOwnLockerRoom
    + GetBalances
    + ListLedger
    + ListMyPurchases
    + ListMyTopUps
    + GetOrders
    + ListClaims
    + ListMyEntries
    + ListSubjectEvents
    + GetRevocations
{
}
impl<
    S: FindProfile
        + GetLink
        + ListWallets
        + GetOwnLockerRoom
        + GetBalances
        + ListLedger
        + ListMyPurchases
        + ListMyTopUps
        + GetOrders
        + ListClaims
        + ListMyEntries
        + ListSubjectEvents
        + GetRevocations,
> ExportReads for S
{
}

/// The sections, in the order the pages give them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "camelCase")]
#[strum(serialize_all = "camelCase")]
pub enum Section {
    Profile,
    Links,
    Wallets,
    LockerRoom,
    Balances,
    Ledger,
    Purchases,
    TopUps,
    Orders,
    Rewards,
    QueueEntries,
    Events,
    Sessions,
}

const SECTIONS: &[Section] = <Section as strum::VariantArray>::VARIANTS;

impl Section {
    fn name(self) -> &'static str {
        self.into()
    }

    fn next(self) -> Option<Self> {
        let at = SECTIONS.iter().position(|&s| s == self)?;
        SECTIONS.get(at + 1).copied()
    }
}

/// Where a page starts: a section, and inside it the key (or, for events, the sequence) the
/// page before ended on; `None` at the section's start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    section: Section,
    after: Option<String>,
}

impl Position {
    /// `<section>` or `<section>/<after>`.
    fn encode(&self) -> String {
        match &self.after {
            Some(after) => format!("{}/{after}", self.section.name()),
            None => self.section.name().to_owned(),
        }
    }

    /// What [`Self::encode`] wrote, its `after` of the section's kind; nothing else.
    fn parse(text: &str) -> Option<Self> {
        let (name, after) = match text.split_once('/') {
            Some((name, after)) => (name, Some(after)),
            None => (text, None),
        };
        let section = SECTIONS.iter().copied().find(|s| s.name() == name)?;
        let valid = |after: &str| match section {
            Section::Ledger
            | Section::Purchases
            | Section::TopUps
            | Section::Orders
            | Section::Rewards
            | Section::QueueEntries => is_list_key(after),
            Section::Events => sequence(after).is_some(),
            _ => false,
        };
        match after {
            Some(after) if !valid(after) => None,
            after => Some(Self {
                section,
                after: after.map(str::to_owned),
            }),
        }
    }

    /// Where the page after this one starts: further in the section when `more` names where,
    /// else at the next section's start (none after the last).
    fn then(self, more: Option<String>) -> Option<Self> {
        match more {
            Some(after) => Some(Self {
                section: self.section,
                after: Some(after),
            }),
            None => self.section.next().map(|section| Self {
                section,
                after: None,
            }),
        }
    }
}

/// An event sequence as a position writes it: a whole number of at most 20 digits.
fn sequence(text: &str) -> Option<u64> {
    (!text.is_empty() && text.len() <= 20 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// `?cursor=`, as sent.
pub struct ExportQuery {
    cursor: Option<String>,
}

impl<St: Send + Sync> FromRequestParts<St> for ExportQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        Ok(Self {
            cursor: QueryParams::of(parts).single("cursor")?,
        })
    }
}

/// An identity link (`POST /api/link/web3`) as stored: the payload as last sent.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = IdentityLink)]
struct LinkJson<'a> {
    /// Always `web3` today.
    provider: &'a str,
    /// The token's e-mail claim at the last link.
    #[schema(required)]
    email: Option<&'a str>,
    #[schema(schema_with = truthy)]
    payload: Box<RawValue>,
    linked_at: Timestamp,
    updated_at: Timestamp,
}

impl<'a> LinkJson<'a> {
    fn of(link: &'a Web3Link) -> Result<Self, ApiError> {
        Ok(Self {
            provider: &link.provider,
            email: link.email.as_deref(),
            payload: RawValue::from_string(link.payload.clone()).map_err(|e| {
                ApiError::Internal {
                    detail: format!("link: stored payload is not JSON: {e}"),
                }
            })?,
            linked_at: link.linked_at,
            updated_at: link.updated_at,
        })
    }
}

/// What was ended of the fan's sessions (docs/sessions.md).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = SessionRevocations)]
struct SessionsJson {
    /// Every token issued at or before this instant is refused (logout of `all` or `others`,
    /// an operator's revocation), but the one session kept.
    #[schema(required)]
    revoked_before: Option<Timestamp>,
    /// The session a logout of `others` kept (its `sid`, or the SHA-256 of its token).
    #[schema(required)]
    kept_session: Option<String>,
    /// Sessions ended one by one, each until its token expires.
    revoked_sessions: Vec<RevokedSession>,
    /// The account was deleted: every token of it is refused.
    deleted: bool,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RevokedSession {
    /// Its `sid`, or the SHA-256 of its token.
    session: String,
    until: Option<Timestamp>,
}

fn instant(seconds: i64) -> Option<Timestamp> {
    Timestamp::from_unix_nanos(i128::from(seconds) * 1_000_000_000)
}

impl SessionsJson {
    fn of(revocations: Revocations) -> Self {
        Self {
            revoked_before: revocations.before.and_then(instant),
            kept_session: revocations.kept,
            revoked_sessions: revocations
                .named
                .into_iter()
                .map(|(session, until)| RevokedSession {
                    session,
                    until: instant(until),
                })
                .collect(),
            deleted: revocations.deleted,
        }
    }
}

/// A page: `{"section": ..., "items": [...], "nextCursor": ...}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExportPageJson<T> {
    section: Section,
    items: Vec<T>,
    next_cursor: Option<String>,
}

/// The document's schema of a page: one object per section, its `section` a constant and its
/// `items` that section's schema, so that a typed client narrows `items` on `section`.
pub struct ExportPage;

/// Each section with its item's schema (the same as the fan's own route answers, named).
macro_rules! section_schemas {
    ($($section:literal => $item:ty),* $(,)?) => {
        fn section_items() -> Vec<(&'static str, Cow<'static, str>)> {
            vec![$(($section, <$item as ToSchema>::name())),*]
        }

        fn item_schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
            $(
                schemas.push((<$item as ToSchema>::name().into(), <$item as PartialSchema>::schema()));
                <$item as ToSchema>::schemas(schemas);
            )*
        }
    };
}

section_schemas! {
    "profile" => Profile,
    "links" => LinkJson<'static>,
    "wallets" => WalletJson<'static>,
    "lockerRoom" => LockerRoomJson<'static>,
    "balances" => Money,
    "ledger" => EntryJson<'static>,
    "purchases" => PurchaseJson<'static>,
    "topUps" => TopUpJson<'static>,
    "orders" => OrderJson<'static>,
    "rewards" => RewardJson<'static>,
    "queueEntries" => QueueEntryJson,
    "events" => EventJson,
    "sessions" => SessionsJson,
}

impl PartialSchema for ExportPage {
    fn schema() -> RefOr<Schema> {
        let mut pages = OneOfBuilder::new().description(Some(
            "A page of one section of the caller's data: its `items` are of that section's schema.",
        ));
        for (section, item) in section_items() {
            pages = pages.item(
                ObjectBuilder::new()
                    .property(
                        "section",
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .enum_values(Some([section])),
                    )
                    .required("section")
                    .property(
                        "items",
                        ArrayBuilder::new().items(Ref::from_schema_name(item)),
                    )
                    .required("items")
                    .property("nextCursor", next_cursor_schema())
                    .required("nextCursor"),
            );
        }
        pages.into()
    }
}

impl ToSchema for ExportPage {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        item_schemas(schemas);
    }
}

/// One page of `section`.
fn page<T: Serialize>(section: Section, items: Vec<T>, next_cursor: Option<String>) -> Response {
    json_response(
        StatusCode::OK,
        &ExportPageJson {
            section,
            items,
            next_cursor,
        },
    )
}

/// A page of a listed section: `found`'s entries as `view` shows each.
fn listed<'a, T, J: Serialize>(
    section: Section,
    found: &'a Page<T>,
    view: impl Fn(&'a T) -> J,
    next_cursor: Option<String>,
) -> Response {
    page(
        section,
        found.entries.iter().map(view).collect(),
        next_cursor,
    )
}

/// `GET /api/me/export?cursor=`.
#[utoipa::path(
    get,
    path = "/api/me/export",
    operation_id = "exportMyData",
    tag = "Me",
    summary = "Export every item the API holds about the signed-in user",
    description = "A copy of the caller's data (GDPR Article 20), a page at a time: call without \
`cursor`, then with each page's `nextCursor` (same token) until it is null. Each page is one \
section's: `profile`, `links`, `wallets`, `lockerRoom`, `balances`, `ledger`, `purchases`, \
`topUps`, `rewards`, `queueEntries`, `events`, `sessions`, in that order; a section may take \
several pages (at most 100 items each) or come out empty. Each item is as the caller's own \
route answers it (docs/api.md lists them field by field). A cursor of another user, or not \
this API's, is a 400 `invalid_cursor`.",
    security(("sessionToken" = [])),
    params(MeCursor),
    responses(
        (status = 200, description = "A page of the caller's data.", body = ExportPage),
        (status = 400, response = doc::BadRequest),
        doc::SignedIn,
    ),
)]
pub async fn export_me<S: ExportReads>(
    State(state): State<Arc<MeState<S>>>,
    Fan(identity): Fan,
    query: ExportQuery,
) -> Result<Response, ApiError> {
    let user_id = &identity.user_id;
    let scope = ["export", user_id.as_str()];
    let at = cursor(
        &state.cursors,
        query.cursor.as_deref(),
        &scope,
        Position::parse,
    )?
    .unwrap_or(Position {
        section: SECTIONS[0],
        after: None,
    });
    let store = &state.store;
    let after = at.after.as_deref();
    let section = at.section;
    let next = |more: Option<String>| {
        let next = at.clone().then(more).map(|position| position.encode());
        next_cursor(&state.cursors, &scope, next.as_deref())
    };
    Ok(match section {
        Section::Profile => {
            let profile = store.find_profile(user_id).await?;
            page(section, profile.into_iter().collect(), next(None))
        }
        Section::Links => {
            let link = store.get_link(user_id, WEB3_PROVIDER).await?;
            let items = link.iter().map(LinkJson::of).collect::<Result<_, _>>()?;
            page::<LinkJson>(section, items, next(None))
        }
        Section::Wallets => {
            let wallets = store.list_wallets(user_id).await?;
            let items = wallets
                .iter()
                .map(WalletJson::of)
                .collect::<Result<_, _>>()?;
            page::<WalletJson>(section, items, next(None))
        }
        Section::LockerRoom => {
            let room = store.own_locker_room(user_id).await?;
            page(section, vec![LockerRoomJson::of(&room)], next(None))
        }
        Section::Balances => {
            let balances = store.get_balances(user_id).await?;
            page(section, balances, next(None))
        }
        Section::Ledger => {
            let found = store
                .list_ledger(&LedgerQuery {
                    user_id: user_id.clone(),
                    currency: None,
                    limit: EXPORT_PAGE,
                    after: at.after.clone(),
                })
                .await?;
            listed(section, &found, EntryJson::of, next(found.next.clone()))
        }
        Section::Purchases => {
            let now = Timestamp::now();
            let found = store
                .list_my_purchases(&MyPurchasesQuery {
                    user_id: user_id.clone(),
                    status: None,
                    pack_id: None,
                    limit: EXPORT_PAGE,
                    after: at.after.clone(),
                    now,
                })
                .await?;
            let view = |purchase| PurchaseJson::at(purchase, now);
            listed(section, &found, view, next(found.next.clone()))
        }
        Section::TopUps => {
            let found = store.list_my_top_ups(user_id, EXPORT_PAGE, after).await?;
            listed(section, &found, TopUpJson::of, next(found.next.clone()))
        }
        Section::Orders => {
            let found = store.list_orders(user_id, EXPORT_PAGE, after).await?;
            listed(section, &found, OrderJson::of, next(found.next.clone()))
        }
        Section::Rewards => {
            let found = store.list_claims(user_id, EXPORT_PAGE, after).await?;
            listed(section, &found, RewardJson::of, next(found.next.clone()))
        }
        Section::QueueEntries => {
            let now = Timestamp::now();
            let found = store.list_my_entries(user_id, EXPORT_PAGE, after).await?;
            let view = |entry| QueueEntryJson::of(entry, None, now);
            listed(section, &found, view, next(found.next.clone()))
        }
        Section::Events => {
            let from = after.and_then(sequence).unwrap_or(0);
            let events = store
                .subject_events(&Subject::fan(user_id), from, EXPORT_PAGE)
                .await?;
            // A full page may have more after it: the next page starts after its last.
            let more = (events.len() == EXPORT_PAGE)
                .then(|| events.last().map(|event| event.sequence.to_string()))
                .flatten();
            let items = events
                .iter()
                .map(|event| RawValue::from_string(event.body.clone()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ApiError::Internal {
                    detail: format!("event: stored body is not JSON: {e}"),
                })?;
            page(section, items, next(more))
        }
        Section::Sessions => {
            let revocations = store.revocations(user_id).await?;
            page(section, vec![SessionsJson::of(revocations)], next(None))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_and_refuse_what_no_page_wrote() {
        let key =
            domain::timestamp::time_key(Timestamp::parse("2026-06-01T12:00:00Z").unwrap(), "p1");
        for position in [
            Position {
                section: Section::Profile,
                after: None,
            },
            Position {
                section: Section::Purchases,
                after: Some(key.clone()),
            },
            Position {
                section: Section::Events,
                after: Some("42".into()),
            },
        ] {
            assert_eq!(Position::parse(&position.encode()), Some(position));
        }
        for bad in [
            "",
            "nothing",
            "profile/x",
            &format!("wallets/{key}"),
            "purchases/0001#p1",
            "events/x",
            "events/",
            "Purchases",
        ] {
            assert!(Position::parse(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn the_sections_follow_one_another_to_the_last() {
        let mut at = Some(Position {
            section: SECTIONS[0],
            after: None,
        });
        let mut seen = Vec::new();
        while let Some(position) = at {
            seen.push(position.section);
            at = position.then(None);
        }
        assert_eq!(seen, SECTIONS);
    }
}
