//! `local-api --app-config FILE`: the app's configuration from a file, as an operator sets it
//! without a deploy (`app-config`, on the deployed table): read at start and again whenever the
//! file changes, and written through the same operation and condition as the tool's, so that
//! `GET /api/config`, the version gate and maintenance behave locally as deployed.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use domain::app_config::AppConfig;
use domain::timestamp::Timestamp;
use store::app_config::AppConfigStore;

/// How often the file is looked at.
const POLL: Duration = Duration::from_secs(1);

/// Writes `path`'s configuration into `store` now (an error if it is not one), then each time
/// the file changes, in the background (a change that is not a configuration is reported and
/// the previous one kept).
pub async fn follow<S: AppConfigStore + Clone + 'static>(
    store: S,
    path: PathBuf,
) -> Result<(), String> {
    let seen = load(&store, &path).await?;
    tokio::spawn(async move {
        let mut seen = seen;
        loop {
            tokio::time::sleep(POLL).await;
            let modified = modified(&path);
            if modified == seen {
                continue;
            }
            seen = modified;
            match load(&store, &path).await {
                Ok(_) => eprintln!("local-api: {} applied", path.display()),
                Err(problem) => eprintln!("local-api: {problem}; the previous one is kept"),
            }
        }
    });
    Ok(())
}

fn modified(path: &PathBuf) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Writes the file's configuration over the stored one; returns the file's time.
async fn load<S: AppConfigStore>(store: &S, path: &PathBuf) -> Result<Option<SystemTime>, String> {
    let shown = path.display();
    let seen = modified(path);
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    let config = AppConfig::parse(&text).map_err(|e| format!("{shown}: {e}"))?;
    let revision = store
        .app_config()
        .await
        .map_err(|e| e.to_string())?
        .map_or(0, |stored| stored.revision);
    store
        .put_app_config(&config, revision, Timestamp::now())
        .await
        .map_err(|e| format!("{shown}: {e}"))?;
    Ok(seen)
}
