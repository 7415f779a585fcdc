//! `seed-packs [--catalog CATALOG.json] [--file PACKS.json] [--create-table]`: checks the
//! catalogue (leagues and teams) and every pack of the files, and that each pack's `leagueId` and
//! `teamId` name the catalogue (the file's, or the table's for an entry not in it); creates the
//! table when asked (with the key schema and index of `template.yaml`); then writes the
//! catalogue's entries, then the packs. Nothing is written when a check fails.
//!
//! The catalogue is loaded by this tool rather than a sibling because a pack may only name what
//! the catalogue holds: one run checks both files against each other before it writes either,
//! and an operator keeps one command (and one table setup) for both.
//! `--quests QUESTS.json` (with `--file`) checks the operator's quests against those packs and
//! the catalogue (known packs, items, rarities and leagues; a goal's league resolved to the packs
//! of the file in it) with the rest, and writes them after the packs.
//! `--products PRODUCTS.json` checks the store's products (Cash bundles and cosmetics) with the
//! rest and writes them last; they name no pack, so the flag may come alone.
//! `seed-packs --books PACK_ID ...`: checks each pack's books (remaining + held + sold = supply).
//! The table is `TABLE_NAME`; the endpoint and region come from the AWS SDK's standard variables.
//!
//! Seeding never undoes what buyers did (`domain::packs::seed::plan_reseed`): a pack whose sale
//! has started keeps its `remaining`, and a change to what its buyers pay for is refused, with
//! nothing written for that pack, the other packs written, and a non-zero exit.

use std::process::ExitCode;

use api::config::{Env, table_name};
use domain::catalog::{Catalog, parse_catalog};
use domain::ids::{LeagueId, PackId, TeamId};
use domain::packs::Pack;
use domain::packs::seed::SeedWrite;
use domain::packs::seed::parse_seed;
use domain::products::Product;
use domain::products::seed::parse_products;
use domain::quests::seed::{parse_quests, resolve};
use domain::timestamp::Timestamp;
use store::catalog::{GetLeague, GetTeam, seed_catalog};
use store::packs::{GetPack, ReadSupply, seed};
use store::products::SeedProducts;
use store::quests::SeedQuests;
use store::{DynamoStore, schema};

const USAGE: &str =
    "usage: seed-packs [--catalog CATALOG.json] [--file PACKS.json [--quests QUESTS.json]] [--products PRODUCTS.json] [--create-table]
       seed-packs --books PACK_ID [PACK_ID ...]
  --catalog           the leagues and teams (infra/seed/catalog.json), written before the packs
  --file              the packs; each pack's leagueId and teamId must name the catalogue
  --quests            the quests (infra/seed/quests.json); they may name only the file's packs
  --products          the products (infra/seed/products.json): Cash bundles and cosmetics
  --books             check each pack's books: the units left in its shares, held by reserved
                      purchases and sold, counted apart, add up to its totalSupply (exit 1 if not)
  TABLE_NAME          the table to write to (required)
  AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB, ...  the AWS SDK's standard settings";

enum Args {
    Seed {
        catalog: Option<String>,
        file: Option<String>,
        quests: Option<String>,
        products: Option<String>,
        create_table: bool,
    },
    Books(Vec<String>),
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut file, mut catalog, mut create_table, mut books) = (None, None, false, Vec::new());
    let (mut quests, mut products) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--file" => file = Some(args.next().ok_or("--file needs a path")?),
            "--catalog" => catalog = Some(args.next().ok_or("--catalog needs a path")?),
            "--quests" => quests = Some(args.next().ok_or("--quests needs a path")?),
            "--products" => products = Some(args.next().ok_or("--products needs a path")?),
            "--create-table" => create_table = true,
            "--books" => books.extend(args.by_ref()),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if !books.is_empty() {
        return Ok(Args::Books(books));
    }
    if file.is_none() && catalog.is_none() && products.is_none() {
        return Err("--catalog, --file, --products or --books is required".into());
    }
    if quests.is_some() && file.is_none() {
        return Err("--quests needs --file: quests name the packs of that file".into());
    }
    Ok(Args::Seed {
        catalog,
        file,
        quests,
        products,
        create_table,
    })
}

/// Prints each pack's books; an error when one does not balance or cannot be read.
async fn check_books(pack_ids: &[String]) -> Result<(), String> {
    let table = table_name(&Env).map_err(|e| e.to_string())?;
    let store = DynamoStore::new(lambda::aws::dynamodb_client().await, table);
    let mut unbalanced = 0;
    for pack_id in pack_ids {
        let id = PackId::parse(pack_id.as_str()).map_err(|e| format!("pack {pack_id}: {e}"))?;
        let (Some(stored), Some(supply)) = (
            store.get_pack(&id).await.map_err(|e| e.to_string())?,
            store.read_supply(&id).await.map_err(|e| e.to_string())?,
        ) else {
            return Err(format!("pack {pack_id}: no such pack"));
        };
        let total = stored.pack.total_supply;
        let balanced = supply.accounted() == total;
        println!(
            "pack {pack_id}: remaining {} + held {} + sold {} = {} of totalSupply {total}: {}",
            supply.remaining(),
            supply.held,
            supply.sold,
            supply.accounted(),
            if balanced {
                "balanced"
            } else {
                "DOES NOT BALANCE"
            }
        );
        unbalanced += usize::from(!balanced);
    }
    match unbalanced {
        0 => Ok(()),
        n => Err(format!("{n} packs do not balance")),
    }
}

/// The catalogue entries `packs` may name: the file's, and those of the table it lacks.
async fn known_catalog<S: GetLeague + GetTeam>(
    store: &S,
    file: Option<&Catalog>,
    packs: &[Pack],
) -> Result<Catalog, String> {
    let mut known = file.cloned().unwrap_or(Catalog {
        leagues: Vec::new(),
        teams: Vec::new(),
    });
    for pack in packs {
        let league = pack
            .league_id
            .as_deref()
            .and_then(|id| LeagueId::parse(id).ok());
        if let Some(id) = league
            && known.league(&id).is_none()
            && let Some(league) = store.get_league(&id).await.map_err(|e| e.to_string())?
        {
            known.leagues.push(league);
        }
        let team = pack
            .team_id
            .as_deref()
            .and_then(|id| TeamId::parse(id).ok());
        if let Some(id) = team
            && known.team(&id).is_none()
            && let Some(team) = store.get_team(&id).await.map_err(|e| e.to_string())?
        {
            known.teams.push(team);
        }
    }
    Ok(known)
}

async fn run(args: Args) -> Result<(), String> {
    let (catalog_file, file, quests_file, products_file, create_table) = match args {
        Args::Seed {
            catalog,
            file,
            quests,
            products,
            create_table,
        } => (catalog, file, quests, products, create_table),
        Args::Books(pack_ids) => return check_books(&pack_ids).await,
    };
    let table = table_name(&Env).map_err(|e| e.to_string())?;
    let catalog = match &catalog_file {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
            Some(parse_catalog(&text).map_err(|e| format!("{path}: {e}; nothing was written"))?)
        }
        None => None,
    };
    let packs = match &file {
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
            parse_seed(&bytes).map_err(|e| format!("{path}: {e}; nothing was written"))?
        }
        None => Vec::new(),
    };
    let products = match &products_file {
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
            parse_products(&bytes).map_err(|e| format!("{path}: {e}; nothing was written"))?
        }
        None => Vec::new(),
    };
    let client = lambda::aws::dynamodb_client().await;
    if create_table {
        let created = schema::create_table(&client, &table).await?;
        println!(
            "table {table}: {}",
            if created { "created" } else { "already exists" }
        );
    }
    let store = DynamoStore::new(client, table.clone());
    let known = known_catalog(&store, catalog.as_ref(), &packs).await?;
    known.check_packs(&packs).map_err(|(pack, problem)| {
        format!(
            "{}: pack {pack}: {problem}; nothing was written",
            file.as_deref().unwrap_or_default()
        )
    })?;
    let quests = match &quests_file {
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
            let mut quests =
                parse_quests(&bytes).map_err(|e| format!("{path}: {e}; nothing was written"))?;
            resolve(&mut quests, &packs, &known)
                .map_err(|e| format!("{path}: {e}; nothing was written"))?;
            quests
        }
        None => Vec::new(),
    };
    if let Some(catalog) = &catalog {
        seed_catalog(&store, catalog).await?;
        println!(
            "catalogue: {} leagues and {} teams written to {table}",
            catalog.leagues.len(),
            catalog.teams.len()
        );
    }
    if file.is_none() {
        return write_products(&store, &products, &table).await;
    }
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
    if !quests.is_empty() {
        store
            .seed_quests(&quests)
            .await
            .map_err(|e| e.to_string())?;
        println!("{} quests written to {table}", quests.len());
    }
    write_products(&store, &products, &table).await
}

/// Writes the products (none: nothing to do).
async fn write_products(
    store: &DynamoStore,
    products: &[Product],
    table: &str,
) -> Result<(), String> {
    if products.is_empty() {
        return Ok(());
    }
    store
        .seed_products(products)
        .await
        .map_err(|e| e.to_string())?;
    println!("{} products written to {table}", products.len());
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
