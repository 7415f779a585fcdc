//! Completing a purchase: paying for a held unit from the fan's balance.

use super::holds::unpaid_key;
use super::{balance_in, cash_key, purchase_from_item, purchase_key, status_text};
use crate::StoreError;
use crate::dynamo::records::{CASH_VERSION, DebitRecord, SCHEMA_VERSION};
use crate::dynamo::records::{sale_ends_at, share_key};
use crate::dynamo::transaction::{Transaction, counter, put_new, update};
use crate::dynamo::{Attempts, DynamoStore, Item, key, number, s};
use crate::purchases::decide::{PayWrite, pay_write};
use crate::purchases::{CompleteError, CompletePurchase, Completed, GetPurchase};
use crate::schema::{
    ENTITY, GSI2_PK, GSI2_SK, PACK_SK, PURCHASE_STATUS, SHARE_SOLD, cash_pk, debit_sk, pack_pk,
};
use crate::schema::{GSI3_PK, GSI3_SK};
use crate::schema::{UNPAID_VERSION, unpaid_slot};
use domain::cash::ledger::debit_entry_id;
use domain::events::money::purchase_completed;
use domain::ids::{PackId, PurchaseId, UserId};
use domain::purchases::{CompleteRefusal, Completion, Purchase, PurchaseStatus, check_complete};
use domain::timestamp::{Timestamp, time_key};

/// The actions of a payment's transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PayAction {
    /// The purchase paid, if still payable.
    Purchase,
    /// The balance down by the price, from exactly the balance read.
    Cash,
    /// The debit written (its key free).
    Debit,
    /// The share's count of units sold.
    Sold,
    /// The purchase's slot among the fan's unpaid holds freed, if still this purchase's.
    Slot,
}

impl DynamoStore {
    /// The completion's transaction: `write`'s purchase paid, the balance down by the price
    /// from exactly the balance read, the debit written and, while `free_slot`, the hold's slot.
    fn pay_actions(
        &self,
        purchase: &Purchase,
        write: &PayWrite,
        free_slot: bool,
    ) -> Result<Transaction<PayAction>, StoreError> {
        let table = &self.table;
        let price = &purchase.price;
        let now = write.debit.at;
        let mut debit = key(cash_pk(&purchase.user_id), &debit_sk(&purchase.id));
        debit.extend(
            serde_dynamo::to_item::<_, Item>(DebitRecord::from(&write.debit))
                .map_err(|e| StoreError::internal_from("debit item", e))?,
        );
        debit.extend([
            (ENTITY.to_owned(), s("debit")),
            // The fan's ledger entry, written by the payment's own transaction.
            (GSI3_PK.to_owned(), s(cash_pk(&purchase.user_id))),
            (
                GSI3_SK.to_owned(),
                s(time_key(now, &debit_entry_id(purchase.id.as_str()))),
            ),
        ]);
        let purchase_paid = update(
            table,
            purchase_key(&purchase.user_id, &purchase.id),
            "SET #status = :completed, #completed = :now_text REMOVE #gsi2pk, #gsi2sk",
            &write.payable,
            &[
                ("#status", PURCHASE_STATUS),
                ("#completed", "completedAt"),
                ("#gsi2pk", GSI2_PK),
                ("#gsi2sk", GSI2_SK),
            ],
            vec![
                (":completed", status_text(PurchaseStatus::Completed)),
                (":now_text", s(now.to_string())),
            ],
        )?;
        let balance_debited = update(
            table,
            cash_key(&purchase.user_id),
            // A free pack paid from no balance creates the Cash item: it gets a version too.
            "SET #balance = if_not_exists(#balance, :zero) - :price, #sv = :sv",
            &write.balance_as_read,
            &[
                ("#balance", price.currency.as_str()),
                ("#sv", SCHEMA_VERSION),
            ],
            vec![
                (":sv", number(CASH_VERSION)),
                (":zero", number(0)),
                (":price", number(price.amount)),
            ],
        )?;
        let sold = counter(
            table,
            share_key(&purchase.pack_id, purchase.supply_shard),
            SHARE_SOLD,
            1,
        )?;
        let mut transaction = Transaction::new()
            .with(PayAction::Purchase, purchase_paid)
            .with(PayAction::Cash, balance_debited)
            .with(PayAction::Debit, put_new(table, debit)?)
            .with(PayAction::Sold, sold)
            .emit(purchase_completed(&write.paid), now);
        // Paid: no longer one of the fan's unpaid holds, if its slot is still this purchase's.
        if let Some((slot, holds)) = write.slot.as_ref().filter(|_| free_slot) {
            let slot_name = unpaid_slot(*slot);
            let slot_freed = update(
                table,
                unpaid_key(&purchase.user_id),
                "REMOVE #slot SET #v = #v + :one",
                holds,
                &[("#slot", slot_name.as_str()), ("#v", UNPAID_VERSION)],
                vec![(":one", number(1))],
            )?;
            transaction.push(PayAction::Slot, slot_freed);
        }
        Ok(transaction)
    }
}

impl DynamoStore {
    /// What a completion decides on, in one strongly consistent read: the purchase, the buyer's
    /// balances and when the pack's sale ends (its seed's reveal closes payments).
    async fn completion_state(
        &self,
        user_id: &UserId,
        pack_id: &PackId,
        purchase_id: &PurchaseId,
    ) -> Result<(Option<Purchase>, Option<Item>, Option<Timestamp>), StoreError> {
        let [purchase_item, cash_item, pack_item] = self
            .batch_get(
                [
                    purchase_key(user_id, purchase_id),
                    cash_key(user_id),
                    key(pack_pk(pack_id), PACK_SK),
                ],
                true,
            )
            .await?;
        let sale_ends_at = match &pack_item {
            Some(pack) => sale_ends_at(pack, "pack")?,
            None => None,
        };
        Ok((
            purchase_item.map(purchase_from_item).transpose()?,
            cash_item,
            sale_ends_at,
        ))
    }
}

impl CompletePurchase for DynamoStore {
    async fn complete_purchase(
        &self,
        user_id: &UserId,
        pack_id: &PackId,
        purchase_id: &PurchaseId,
        now: Timestamp,
    ) -> Result<Completed, CompleteError> {
        let (mut purchase, mut cash, sale_ends_at) =
            self.completion_state(user_id, pack_id, purchase_id).await?;
        let mut free_slot = true;
        let mut attempts = Attempts::new("complete");
        loop {
            let currency = purchase.as_ref().map_or("", |p| p.price.currency.as_str());
            let balance = balance_in(cash.as_ref(), currency)?;
            let completion =
                check_complete(purchase.as_ref(), pack_id, sale_ends_at, balance, now)?;
            let Some(current) = purchase.take() else {
                return Err(CompleteRefusal::NotFound.into());
            };
            match completion {
                Completion::Replay => {
                    return Ok(Completed::Repeated {
                        purchase: current,
                        balance,
                    });
                }
                Completion::Release => {
                    if self.release(&current, now).await? {
                        return Err(CompleteRefusal::Expired.into());
                    }
                    // Paid (or released by the sweep) since the read: decide on it as it is now.
                    (purchase, cash, _) =
                        self.completion_state(user_id, pack_id, purchase_id).await?;
                    attempts.again()?;
                    continue;
                }
                Completion::Pay => {}
            }
            let write = pay_write(&current, balance, now);
            let Some(reasons) = self
                .run(self.pay_actions(&current, &write, free_slot)?)
                .await?
            else {
                return Ok(Completed::Paid {
                    balance: write.balance,
                    purchase: write.paid,
                });
            };
            if reasons.failed(PayAction::Slot) {
                // The slot holds another hold now (this one ran out on another clock, and a
                // start took it): pay without freeing it.
                free_slot = false;
            }
            let purchase_reason = reasons.of(PayAction::Purchase);
            purchase = Some(match &purchase_reason.item {
                Some(item) if purchase_reason.condition_failed() => {
                    purchase_from_item(item.clone())?
                }
                _ => current,
            });
            if reasons.failed(PayAction::Cash) {
                cash = reasons.of(PayAction::Cash).item.clone();
            }
            if reasons.failed(PayAction::Debit) {
                // Only a completion of this very purchase writes its debit: read it again.
                purchase = self.get_purchase(user_id, purchase_id).await?;
            }
            attempts.after(reasons.all()).await?;
        }
    }
}
