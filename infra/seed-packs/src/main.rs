//! `seed-packs --file PACKS.json [--create-table]`: checks every pack of the file, creates the
//! table when asked (with the key schema and index of `template.yaml`), then writes the packs.
//! The table is `TABLE_NAME`; the endpoint and region come from the AWS SDK's standard variables.
//!
//! Seeding never undoes what buyers did (`shared::packs::seed::plan_reseed`): a pack whose sale
//! has started keeps its `remaining`, and a change to what its buyers pay for is refused, with
//! nothing written for that pack, the other packs written, and a non-zero exit.

use std::process::ExitCode;

use shared::config::{Env, table_name};
use shared::packs::seed::SeedWrite;
use shared::packs::seed::parse_seed;
use shared::store::packs::seed;
use shared::store::{DynamoStore, schema};
use shared::timestamp::Timestamp;

const USAGE: &str = "usage: seed-packs --file PACKS.json [--create-table]
  TABLE_NAME          the table to write to (required)
  AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB, ...  the AWS SDK's standard settings";

struct Args {
    file: String,
    create_table: bool,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut file, mut create_table) = (None, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--file" => file = Some(args.next().ok_or("--file needs a path")?),
            "--create-table" => create_table = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Args {
        file: file.ok_or("--file is required")?,
        create_table,
    })
}

async fn run(args: Args) -> Result<(), String> {
    let table = table_name(&Env).map_err(|e| e.to_string())?;
    let bytes = std::fs::read(&args.file).map_err(|e| format!("{}: {e}", args.file))?;
    let packs =
        parse_seed(&bytes).map_err(|e| format!("{}: {e}; nothing was written", args.file))?;
    let client = shared::aws::dynamodb_client().await;
    if args.create_table {
        let created = schema::create_table(&client, &table).await?;
        println!(
            "table {table}: {}",
            if created { "created" } else { "already exists" }
        );
    }
    let store = DynamoStore::new(client, table.clone());
    let mut refused = 0;
    for pack in &packs {
        match seed(&store, pack, Timestamp::now()).await {
            Ok(write) => println!(
                "pack {}: {}",
                pack.id,
                match write {
                    SeedWrite::Create => "created",
                    SeedWrite::Replace => "replaced (its sale starts in more than 5 minutes)",
                    SeedWrite::Update => "updated (on sale: remaining kept)",
                }
            ),
            Err(problem) => {
                eprintln!("seed-packs: pack {}: {problem}", pack.id);
                refused += 1;
            }
        }
    }
    println!(
        "{} of {} packs written to {table}",
        packs.len() - refused,
        packs.len()
    );
    if refused > 0 {
        return Err(format!("{refused} packs not written (see above)"));
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        // `--help` asked for the usage: it is the answer, not a failure.
        Err(problem) if problem.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(problem) => {
            eprintln!("seed-packs: {problem}");
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("seed-packs: {problem}");
            ExitCode::FAILURE
        }
    }
}
