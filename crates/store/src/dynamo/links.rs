//! Web3 links on DynamoDB: a link is one transaction of the link's update and its wallet's
//! (see [`UpsertLink`]).

use aws_sdk_dynamodb::types::AttributeValue;

use super::records::{
    LINK_VERSION, LinkRecord, SCHEMA_VERSION, WALLET_COUNT_VERSION, read_record, wallet_link_update,
};
use super::transaction::{Transaction, update, update_always};
use super::{Attempts, DynamoStore, Item, classify, key, number, s};
use crate::StoreError;
use crate::links::{GetLink, LinkError, UpsertLink};
use crate::schema::{ENTITY, PK, SK, WALLETS_COUNT, WALLETS_SK, link_sk, user_pk, wallet_sk};
use crate::wallet_conditions;
use domain::ids::UserId;
use domain::links::{LinkUpsert, Web3Link};
use domain::wallets::{WalletLimitReached, WalletWrite};

/// The actions of a link's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Link,
    Wallet,
    Count,
}

/// A link tries an add first (the wallet created, the count up by one under the cap): a first
/// link, and every link before the fan's wallets existed, is then one transaction. A wallet
/// found present sends it on to a refresh (the wallet's payload and `lastLinkedAt` set, the
/// count untouched), and one found absent meanwhile (removed at once) back to an add. The
/// count's condition failing on an add of a wallet not held is the cap: the cancelled
/// transaction wrote nothing, the link included.
impl UpsertLink for DynamoStore {
    async fn upsert_link(&self, link: &LinkUpsert<'_>) -> Result<WalletWrite, LinkError> {
        let mut write = WalletWrite::Add;
        let mut attempts = Attempts::new("link");
        loop {
            let Some(reasons) = self.run(self.link_transaction(link, write)?).await? else {
                return Ok(write);
            };
            if reasons.failed(Action::Wallet) {
                write = match write {
                    WalletWrite::Refresh => WalletWrite::Add,
                    WalletWrite::Add => WalletWrite::Refresh,
                };
            } else if reasons.failed(Action::Count) {
                return Err(WalletLimitReached.into());
            }
            attempts.after(reasons.all()).await?;
        }
    }
}

impl DynamoStore {
    /// The link's update, its wallet's (held for a refresh, new for an add) and for an add the
    /// fan's count of wallets up by one, under the cap.
    fn link_transaction(
        &self,
        link: &LinkUpsert<'_>,
        write: WalletWrite,
    ) -> Result<Transaction<Action>, StoreError> {
        let user_pk = user_pk(link.user_id);
        let email = link.email.map_or(AttributeValue::Null(true), s);
        let link_update = update_always(
            &self.table,
            key(user_pk.clone(), &link_sk(link.provider)),
            "SET #entity = :entity, #sv = :sv, userId = :user, email = :email, provider = :provider, payload = :payload, \
             updatedAt = :at, linkedAt = if_not_exists(linkedAt, :at)",
            &[("#entity", ENTITY), ("#sv", SCHEMA_VERSION)],
            vec![
                (":entity", s("link")),
                (":sv", number(LINK_VERSION)),
                (":user", s(link.user_id.as_str())),
                (":email", email),
                (":provider", s(link.provider)),
                (":payload", s(link.payload.get())),
                (":at", s(link.at.to_string())),
            ],
        )?;
        let record = wallet_link_update(&link.wallet_id, link.payload.get(), link.at);
        let (wallet_condition, count_condition) = wallet_conditions::link(write);
        let wallet = update(
            &self.table,
            key(user_pk.clone(), &wallet_sk(&link.wallet_id)),
            record.expression,
            &wallet_condition,
            &record.names,
            record.values,
        )?;
        let transaction = Transaction::new()
            .with(Action::Link, link_update)
            .with(Action::Wallet, wallet)
            .emit(link.events(write), link.at);
        Ok(match count_condition {
            None => transaction,
            Some(count_condition) => transaction.with(
                Action::Count,
                update(
                    &self.table,
                    key(user_pk, WALLETS_SK),
                    "SET #entity = :entity, #sv = :sv ADD #n :one",
                    &count_condition,
                    &[
                        ("#entity", ENTITY),
                        ("#sv", SCHEMA_VERSION),
                        ("#n", WALLETS_COUNT),
                    ],
                    vec![
                        (":entity", s("wallets")),
                        (":sv", number(WALLET_COUNT_VERSION)),
                        (":one", number(1)),
                    ],
                )?,
            ),
        })
    }
}

impl GetLink for DynamoStore {
    async fn get_link(
        &self,
        user_id: &UserId,
        provider: &str,
    ) -> Result<Option<Web3Link>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(PK, s(user_pk(user_id)))
            .key(SK, s(link_sk(provider)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        output.item.map(link_from_item).transpose()
    }
}

/// A link from its item, through its record.
pub(crate) fn link_from_item(item: Item) -> Result<Web3Link, StoreError> {
    read_record::<LinkRecord, _>(item, "link")
}
