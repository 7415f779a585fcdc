//! `scripts/gen`: writes what follows from the route declaration (read in [`routes`]):
//! template.yaml's resources of each function but its own properties and policies (the head of
//! its resource with its HttpApi events, its log group and errors alarm: [`template`]),
//! Cargo.toml's `cargo lambda watch` router, functions/Cargo.toml's binaries ([`bins`]) and the
//! event fixtures of infra/events; openapi.yaml, from the handlers and their types; and each
//! crate's test binary's modules, from its files ([`test_modules`]).
//! `scripts/gen --check` writes nothing and fails, naming the stale files, when one differs; so
//! does this crate's test, which `cargo test --workspace` runs.
//!
//! A binary of the workspace rather than an xtask: the repository's commands are `scripts/*`
//! over workspace binaries (seed-packs, local-api), and a test of the crate keeps CI honest.

mod bins;
mod examples;
mod extras;
mod fixtures;
mod functions;
mod markers;
mod routes;
mod template;
mod test_modules;
mod watch;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A generated file, by its path from the repository's root: its text, or `None` for a file to
/// remove (the fixture of a route no longer declared).
#[derive(Debug)]
struct Output {
    path: String,
    text: Option<String>,
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(root: &Path, path: &str) -> Result<String, String> {
    std::fs::read_to_string(root.join(path)).map_err(|e| format!("{path}: {e}"))
}

/// Every generated file, as the declaration and the hand-written parts of `root`'s files make it.
fn generate(root: &Path) -> Result<Vec<Output>, String> {
    let routes = routes::routes();
    let default = routes::default_function();
    let mut problems = routes::problems(&routes, &default);
    problems.extend(examples::problems(&routes));
    problems.extend(functions::problems(&routes));
    problems.extend(extras::problems(&routes));
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    let template = template::generated(
        &read(root, "template.yaml")?,
        &functions::functions(&routes),
        &default,
    )?;
    let cargo = markers::fill(
        "Cargo.toml",
        &read(root, "Cargo.toml")?,
        |name| match name {
            watch::REGION => Ok(watch::router(&routes, &default)),
            other => Err(format!("Cargo.toml: unknown region {other:?}")),
        },
    )?;
    let bins = markers::fill(bins::FILE, &read(root, bins::FILE)?, |name| match name {
        bins::REGION => Ok(bins::entries(&functions::functions(&routes))),
        other => Err(format!("{}: unknown region {other:?}", bins::FILE)),
    })?;
    let mut outputs = vec![
        Output {
            path: "template.yaml".into(),
            text: Some(template),
        },
        Output {
            path: "Cargo.toml".into(),
            text: Some(cargo),
        },
        Output {
            path: bins::FILE.into(),
            text: Some(bins),
        },
        // From the handlers' `#[utoipa::path]`s and the types they read and write.
        Output {
            path: "openapi.yaml".into(),
            text: Some(api::openapi::openapi_yaml()),
        },
    ];
    for directory in test_modules::DIRECTORIES {
        let path = format!("{directory}/main.rs");
        let text = markers::fill(&path, &read(root, &path)?, |name| match name {
            test_modules::REGION => test_modules::modules(root, directory),
            other => Err(format!("{path}: unknown region {other:?}")),
        })?;
        outputs.push(Output {
            path,
            text: Some(text),
        });
    }
    let fixtures = fixtures::fixtures(&routes)?;
    // A routed function's fixture that no route makes any more goes; the others of the
    // directory (the schedule's event of release-holds, README.md) are hand-written.
    for name in file_names(&root.join(fixtures::DIRECTORY))? {
        let function = name.split('.').next().unwrap_or_default();
        let routed = routes.iter().any(|route| route.function == function);
        if routed && name.ends_with(".json") && !fixtures.iter().any(|(made, _)| *made == name) {
            outputs.push(Output {
                path: format!("{}/{name}", fixtures::DIRECTORY),
                text: None,
            });
        }
    }
    for (name, text) in fixtures {
        outputs.push(Output {
            path: format!("{}/{name}", fixtures::DIRECTORY),
            text: Some(text),
        });
    }
    for (i, output) in outputs.iter().enumerate() {
        if outputs[..i]
            .iter()
            .any(|earlier| earlier.path == output.path)
        {
            return Err(format!("{} is generated twice", output.path));
        }
    }
    Ok(outputs)
}

fn file_names(directory: &Path) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(directory).map_err(|e| format!("{directory:?}: {e}"))?;
    entries
        .map(|entry| {
            entry
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .map_err(|e| format!("{directory:?}: {e}"))
        })
        .collect()
}

/// The paths of the outputs that `root` does not hold as generated.
fn stale(root: &Path, outputs: &[Output]) -> Vec<String> {
    outputs
        .iter()
        .filter(|output| std::fs::read_to_string(root.join(&output.path)).ok() != output.text)
        .map(|output| output.path.clone())
        .collect()
}

fn stale_message(stale: &[String]) -> String {
    format!(
        "not what the route declaration generates: {}\nrun scripts/gen",
        stale.join(", ")
    )
}

/// Writes the stale outputs into `root`, saying which.
fn write(root: &Path, outputs: &[Output]) -> Result<(), String> {
    let stale = stale(root, outputs);
    for output in outputs.iter().filter(|output| stale.contains(&output.path)) {
        let path = root.join(&output.path);
        let (done, written) = match &output.text {
            Some(text) => ("wrote", std::fs::write(&path, text)),
            None => ("removed", std::fs::remove_file(&path)),
        };
        written.map_err(|e| format!("{}: {e}", output.path))?;
        println!("{done} {}", output.path);
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = match args.as_slice() {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => {
            eprintln!("usage: scripts/gen [--check]");
            return ExitCode::from(2);
        }
    };
    let root = repository();
    let outcome = generate(&root).and_then(|outputs| {
        if check {
            let stale = stale(&root, &outputs);
            if stale.is_empty() {
                Ok(())
            } else {
                Err(stale_message(&stale))
            }
        } else {
            write(&root, &outputs)
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("scripts/gen: {problem}");
            ExitCode::FAILURE
        }
    }
}
