//! `cash-credit --user SUB --amount MINOR_UNITS --currency ISO4217 --reference UNIQUE`: credits a
//! user's Cash balance, with its ledger entry, in one DynamoDB transaction. The table is
//! `TABLE_NAME`; the endpoint, region and credentials come from the AWS SDK's standard variables.
//!
//! A reference credits once: the same command again changes nothing (and says so), and the same
//! reference with another user, amount or currency is refused. So after a failure whose outcome
//! is unknown (a timeout), running the same command again is always safe.
//!
//! Exit status: 0 credited or already credited; 1 refused (reference reused) or the store or
//! configuration failed; 2 bad or missing arguments (nothing is read or written).

use std::process::ExitCode;

use shared::cash::{Credit, parse_credit};
use shared::config::{Env, table_name};
use shared::store::DynamoStore;
use shared::store::cash::{CreditCash, CreditCashError, CreditOutcome};
use shared::timestamp::Timestamp;

const USAGE: &str =
    "usage: cash-credit --user SUB --amount MINOR_UNITS --currency CODE --reference UNIQUE
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
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Command, String> {
    let [mut user, mut amount, mut currency, mut reference] = [None, None, None, None];
    while let Some(arg) = args.next() {
        let slot = match arg.as_str() {
            "--user" => &mut user,
            "--amount" => &mut amount,
            "--currency" => &mut currency,
            "--reference" => &mut reference,
            "-h" | "--help" => return Ok(Command::Help),
            other => return Err(format!("unknown argument {other}")),
        };
        if slot.is_some() {
            return Err(format!("{arg} given twice"));
        }
        *slot = Some(args.next().ok_or(format!("{arg} needs a value"))?);
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

async fn run(credit: &Credit) -> Result<String, String> {
    let table = table_name(&Env).map_err(|e| format!("{e}; nothing was written"))?;
    let store = DynamoStore::new(shared::aws::dynamodb_client().await, table);
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

#[tokio::main]
async fn main() -> ExitCode {
    let credit = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Credit(credit)) => credit,
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
    match run(&credit).await {
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
