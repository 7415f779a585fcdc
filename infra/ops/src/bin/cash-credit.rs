//! `cash-credit --user SUB --amount MINOR_UNITS --currency ISO4217 --reference UNIQUE`: credits a
//! user's Cash balance, with its ledger entry, in one DynamoDB transaction. The table is
//! `TABLE_NAME`; the endpoint, region and credentials come from the AWS SDK's standard variables.
//!
//! A reference credits once: the same command again changes nothing (and says so), and the same
//! reference with another user, amount or currency is refused. So after a failure whose outcome
//! is unknown (a timeout), running the same command again is always safe.
//!
//! `cash-credit --settle-top-up TOP_UP_ID`: settles a paid top-up Stripe's webhook could not credit
//! (the alarms on `TopUpsUnmatched` / `TopUpsUncredited`; docs/operations.md): completes the
//! pending top-up and credits its amount to its fan, in the one transaction the webhook itself
//! uses (the credit entry `CREDIT#topup:<id>` only while unused, the balance, the top-up only
//! while not completed), so a top-up is credited once however it is settled: the same command
//! again, or a late delivery of Stripe's event, changes nothing. A failed or expired top-up is
//! refused (Stripe took no money for it).
//!
//! Exit status: 0 credited (or settled) or already credited (or completed); 1 refused (reference
//! reused, a top-up unknown, failed or expired) or the store or configuration failed; 2 bad or
//! missing arguments (nothing is read or written).

use std::process::ExitCode;

use api::config::{Env, table_name};
use domain::cash::{Credit, parse_credit};
use domain::ids::TopUpId;
use domain::timestamp::Timestamp;
use domain::topups::TopUpStatus;
use store::DynamoStore;
use store::cash::{CreditCash, CreditCashError, CreditOutcome};
use store::topups::{CompletedTopUp, GetTopUp, SettleTopUp};

const USAGE: &str =
    "usage: cash-credit --user SUB --amount MINOR_UNITS --currency CODE --reference UNIQUE
       cash-credit --settle-top-up TOP_UP_ID
  --settle-top-up  completes a pending top-up Stripe was paid for and credits its amount, once
  --user       the user's id (the session token's `sub`)
  --amount     whole minor units (cents for USD), 1 to 1000000000000
  --currency   ISO 4217 code, three capital letters (USD)
  --reference  1-255 visible ASCII characters, unique per credit: the same reference credits once
  TABLE_NAME          the table to write to (required)
  AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB, ...  the AWS SDK's standard settings";

/// What the command line asks for.
enum Command {
    Help,
    Credit(Credit),
    SettleTopUp(TopUpId),
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Command, String> {
    let [
        mut user,
        mut amount,
        mut currency,
        mut reference,
        mut top_up,
    ] = [None, None, None, None, None];
    while let Some(arg) = args.next() {
        let slot = match arg.as_str() {
            "--user" => &mut user,
            "--amount" => &mut amount,
            "--currency" => &mut currency,
            "--reference" => &mut reference,
            "--settle-top-up" => &mut top_up,
            "-h" | "--help" => return Ok(Command::Help),
            other => return Err(format!("unknown argument {other}")),
        };
        if slot.is_some() {
            return Err(format!("{arg} given twice"));
        }
        *slot = Some(args.next().ok_or(format!("{arg} needs a value"))?);
    }
    if let Some(top_up) = top_up {
        if [&user, &amount, &currency, &reference]
            .iter()
            .any(|given| given.is_some())
        {
            return Err(
                "--settle-top-up takes no other argument: the top-up says who, what and \
                        its reference"
                    .into(),
            );
        }
        return TopUpId::parse(&top_up)
            .map(Command::SettleTopUp)
            .map_err(|e| format!("--settle-top-up: {e}; nothing was written"));
    }
    let required = |value: Option<String>, name: &str| value.ok_or(format!("{name} is required"));
    let (user, amount, currency, reference) = (
        required(user, "--user")?,
        required(amount, "--amount")?,
        required(currency, "--currency")?,
        required(reference, "--reference")?,
    );
    parse_credit(&user, &amount, &currency, &reference)
        .map(Command::Credit)
        .map_err(|e| format!("{e}; nothing was written"))
}

async fn store() -> Result<DynamoStore, String> {
    let table = table_name(&Env).map_err(|e| format!("{e}; nothing was written"))?;
    Ok(DynamoStore::new(
        lambda::aws::dynamodb_client().await,
        table,
    ))
}

async fn run(credit: &Credit) -> Result<String, String> {
    let store = store().await?;
    let (user, amount, currency, reference) = (
        &credit.user_id,
        credit.amount.amount,
        &credit.amount.currency,
        &credit.reference,
    );
    match store.credit_cash(credit, Timestamp::now()).await {
        Ok(CreditOutcome::Credited { balance }) => Ok(format!(
            "credited {amount} {currency} to {user}; balance now {balance} {currency} (reference {reference})"
        )),
        Ok(CreditOutcome::AlreadyCredited) => Ok(format!(
            "already credited (reference {reference}): nothing changed"
        )),
        Err(CreditCashError::ReferenceReused) => Err(format!(
            "reference {reference} was already used for another credit (another user, amount or \
             currency): nothing changed; use a new reference for a new credit"
        )),
        Err(CreditCashError::BalanceFull) => Err(format!(
            "{user}'s {currency} balance would pass the largest amount: nothing was credited"
        )),
        Err(CreditCashError::Store(error)) => Err(format!(
            "{error}\nthe credit may or may not have been made: run the same command again (the \
             same reference credits at most once)"
        )),
    }
}

/// Settles top-up `id` by hand: completes it and credits its stored amount, once.
async fn settle(id: &TopUpId) -> Result<String, String> {
    let store = store().await?;
    let top_up = store
        .get_top_up(id)
        .await
        .map_err(|e| format!("{e}\nnothing was written: run the same command again"))?
        .ok_or_else(|| format!("no top-up {id}: nothing was written"))?;
    let (user, amount, currency) = (
        &top_up.user_id,
        top_up.amount.amount,
        &top_up.amount.currency,
    );
    match top_up.status {
        TopUpStatus::Completed => {
            return Ok(format!(
                "top-up {id} is completed already (credited {amount} {currency} to {user}): \
                 nothing changed"
            ));
        }
        TopUpStatus::Failed | TopUpStatus::Expired => {
            return Err(format!(
                "top-up {id} is {}: Stripe took no payment for it; nothing changed",
                top_up.status.as_str()
            ));
        }
        TopUpStatus::Pending if top_up.checkout.is_none() => {
            return Err(format!(
                "top-up {id} never had a Checkout Session: nothing was paid; nothing changed"
            ));
        }
        TopUpStatus::Pending => {}
    }
    match store.complete_top_up(&top_up, Timestamp::now()).await {
        Ok(CompletedTopUp::Credited { balance }) => Ok(format!(
            "settled top-up {id}: credited {amount} {currency} to {user}; balance now {balance} \
             {currency}"
        )),
        Ok(CompletedTopUp::AlreadyCompleted) => Ok(format!(
            "top-up {id} was completed meanwhile (credited once): nothing changed"
        )),
        Err(CreditCashError::ReferenceReused) => Err(format!(
            "top-up {id}'s reference holds another credit (another user, amount or currency): \
             nothing changed; credit the fan with a new --reference and keep this top-up's id in it"
        )),
        Err(CreditCashError::BalanceFull) => Err(format!(
            "{user}'s {currency} balance would pass the largest amount: nothing was credited"
        )),
        Err(CreditCashError::Store(error)) => Err(format!(
            "{error}\nthe top-up may or may not have been settled: run the same command again \
             (it credits at most once)"
        )),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let done = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Credit(credit)) => run(&credit).await,
        Ok(Command::SettleTopUp(id)) => settle(&id).await,
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(problem) => {
            eprintln!("cash-credit: {problem}");
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match done {
        Ok(done) => {
            println!("{done}");
            ExitCode::SUCCESS
        }
        Err(problem) => {
            eprintln!("cash-credit: {problem}");
            ExitCode::FAILURE
        }
    }
}
