//! `app-config`: the app's configuration (`GET /api/config`: minimum app versions, feature flags,
//! maintenance), set without a deploy. The table is `TABLE_NAME`; the endpoint, region and
//! credentials come from the AWS SDK's standard variables.
//!
//! Every change names the revision it was made from (`show` prints it): a change from an older
//! revision is refused, so two operators never overwrite each other. A change reaches every
//! instance within `CONFIG_MAX_AGE_SECONDS` (5 s): the tool says so, and waits that long before
//! it reports a maintenance switch done, so that "on" means every write is refused from then.
//!
//! Exit status: 0 done (or shown); 1 refused (a stale revision, an invalid configuration) or the
//! store or configuration failed; 2 bad or missing arguments (nothing is read or written).

use std::process::ExitCode;
use std::time::Duration;

use api::config::{Env, table_name};
use domain::app_config::{AppConfig, CONFIG_MAX_AGE_SECONDS};
use domain::timestamp::Timestamp;
use store::DynamoStore;
use store::app_config::{GetAppConfig, PutAppConfig, PutAppConfigError, StoredAppConfig};

const USAGE: &str = "usage: app-config show
       app-config set FILE --revision N
       app-config maintenance on|off --revision N
  show         prints the configuration (JSON) and its revision (0: never set)
  set          replaces it with FILE's (JSON, as `show` prints its `config`), checked
  maintenance  switches maintenance: while on, every write answers 503 `maintenance`
  --revision   the revision the change is made from (`show` prints it)
  TABLE_NAME          the table (required)
  AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB, ...  the AWS SDK's standard settings";

enum Command {
    Help,
    Show,
    Set { file: String, revision: u64 },
    Maintenance { on: bool, revision: u64 },
}

fn parse_args(args: &[String]) -> Result<Command, String> {
    let revision = |rest: &[String]| -> Result<u64, String> {
        match rest {
            [flag, n] if flag == "--revision" => n
                .parse()
                .map_err(|_| format!("--revision {n}: not a revision")),
            _ => Err("the change needs --revision N (from `app-config show`)".into()),
        }
    };
    match args {
        [] => Err("a command is needed".into()),
        [help] if help == "-h" || help == "--help" => Ok(Command::Help),
        [show] if show == "show" => Ok(Command::Show),
        [set, file, rest @ ..] if set == "set" => Ok(Command::Set {
            file: file.clone(),
            revision: revision(rest)?,
        }),
        [switch, state, rest @ ..] if switch == "maintenance" => {
            let on = match state.as_str() {
                "on" => true,
                "off" => false,
                other => return Err(format!("maintenance {other}: on or off")),
            };
            Ok(Command::Maintenance {
                on,
                revision: revision(rest)?,
            })
        }
        [other, ..] => Err(format!("unknown command {other}")),
    }
}

async fn store() -> Result<DynamoStore, String> {
    let table = table_name(&Env).map_err(|e| format!("{e}; nothing was written"))?;
    Ok(DynamoStore::new(
        lambda::aws::dynamodb_client().await,
        table,
    ))
}

/// The stored configuration as `show` prints it.
fn shown(stored: Option<&StoredAppConfig>) -> String {
    let (config, revision, updated_at) = match stored {
        Some(stored) => (
            stored.config.clone(),
            stored.revision,
            Some(stored.updated_at.to_string()),
        ),
        None => (AppConfig::default(), 0, None),
    };
    let shown = serde_json::json!({
        "revision": revision,
        "updatedAt": updated_at,
        "config": config,
    });
    serde_json::to_string_pretty(&shown).expect("a configuration serialises")
}

async fn show() -> Result<String, String> {
    let stored = store()
        .await?
        .app_config()
        .await
        .map_err(|e| e.to_string())?;
    Ok(shown(stored.as_ref()))
}

/// Writes `config` from `revision`; `settle`: wait until every instance has read it.
async fn write(config: &AppConfig, revision: u64, settle: bool) -> Result<String, String> {
    let store = store().await?;
    match store
        .put_app_config(config, revision, Timestamp::now())
        .await
    {
        Ok(stored) => {
            if settle {
                tokio::time::sleep(Duration::from_secs(CONFIG_MAX_AGE_SECONDS)).await;
            }
            let when = if settle {
                "every instance has it now".to_owned()
            } else {
                format!("every instance has it within {CONFIG_MAX_AGE_SECONDS} s")
            };
            Ok(format!(
                "{}\nwritten at revision {}: {when}",
                shown(Some(&stored)),
                stored.revision
            ))
        }
        Err(PutAppConfigError::Conflict { current }) => Err(format!(
            "the configuration is at revision {current}, not {revision}: someone changed it; \
             nothing was written (run `app-config show`, then change it from there)"
        )),
        Err(PutAppConfigError::Store(error)) => Err(format!(
            "{error}\nthe change may or may not have been made: run `app-config show`"
        )),
    }
}

async fn run(command: Command) -> Result<String, String> {
    match command {
        Command::Help => Ok(USAGE.to_owned()),
        Command::Show => show().await,
        Command::Set { file, revision } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("{file}: {e}; nothing was written"))?;
            let config =
                AppConfig::parse(&text).map_err(|e| format!("{file}: {e}; nothing was written"))?;
            write(&config, revision, false).await
        }
        Command::Maintenance { on, revision } => {
            let stored = store()
                .await?
                .app_config()
                .await
                .map_err(|e| e.to_string())?;
            let mut config = stored.map(|stored| stored.config).unwrap_or_default();
            config.maintenance.active = on;
            write(&config, revision, on).await
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match parse_args(&args) {
        Ok(command) => command,
        Err(error) => {
            eprintln!("app-config: {error}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(command).await {
        Ok(said) => {
            println!("{said}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("app-config: {error}");
            ExitCode::FAILURE
        }
    }
}
