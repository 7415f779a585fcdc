//! One axum handler per endpoint, over its function's state (an `Arc`, built once per cold
//! start). Each takes its input through extractors ([`crate::http::extract`]), in the order its
//! checks run, and returns `Result<Response, ApiError>`: every failure is the JSON error body,
//! logged with the request id. Each handler's `#[utoipa::path]` gives its method and path, which
//! [`crate::http::routes`] routes; each module maps the domain's errors to
//! [`crate::http::error::ApiError`].

pub mod auth;
pub mod catalog;
pub mod complete_purchase;
pub mod cosmetics;
pub mod delete_account;
pub mod get_pack;
pub mod get_purchase;
pub mod list_packs;
pub mod open_pack;
pub mod orders;
pub mod products;
pub mod queue;
pub mod queue_keeper;
pub mod release_holds;
pub mod start_purchase;
pub mod stripe_webhook;
pub mod top_ups;
pub mod web3_link;
pub mod webhooks;
// The fan's own view (issue 18).
pub mod my_cash;
pub mod my_purchases;
// The fan app (issue 28).
pub mod dashboard;
pub mod events;
pub mod export;
pub mod leaderboards;
pub mod locker_room;
pub mod misc;
pub mod my_wallets;
pub mod profile;
pub mod quests;

/// No handler module borrows from another endpoint's: what several share lives in
/// [`crate::http`] (paging, refusals, extractors), [`crate::views`] or [`crate::state`].
#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::{Path, PathBuf};

    /// Each handler module's name with its files, each with how far below `handlers/` its
    /// `super::` is (`queue/proof.rs`: 1).
    fn handler_files(root: &Path) -> Vec<(String, PathBuf, usize)> {
        let mut files = Vec::new();
        for entry in fs::read_dir(root).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
            if path.is_dir() {
                for file in fs::read_dir(&path).unwrap() {
                    let file = file.unwrap().path();
                    let depth = usize::from(file.file_stem().unwrap() != "mod");
                    files.push((name.clone(), file, depth));
                }
            } else if name != "mod" {
                files.push((name, path, 0));
            }
        }
        files.sort();
        files
    }

    /// The modules a path names after `prefix`: `a` in `prefix a::b`, `a` and `b` in
    /// `prefix {a, b::c}`.
    fn named(after: &str) -> Vec<&str> {
        let ident = |text: &str| -> usize {
            text.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '*'))
                .unwrap_or(text.len())
        };
        match after.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())]
                .split(',')
                .map(str::trim)
                .map(|item| &item[..ident(item)])
                .filter(|name| !name.is_empty())
                .collect(),
            None => vec![&after[..ident(after)]],
        }
    }

    /// `file:line: path` of each reference of a handler module to another's, outside comments.
    fn borrowings(root: &Path) -> Vec<String> {
        let files = handler_files(root);
        let modules: Vec<&str> = files.iter().map(|(name, _, _)| name.as_str()).collect();
        let mut found = Vec::new();
        for (own, file, depth) in &files {
            let source = fs::read_to_string(file).unwrap();
            let up = "super::".repeat(depth + 1);
            for (number, line) in source.lines().enumerate() {
                let code = line.split("//").next().unwrap();
                for (prefix, any) in [("crate::handlers::", true), (up.as_str(), false)] {
                    for (at, _) in code.match_indices(prefix) {
                        if code[..at].ends_with(|c: char| c == ':' || c.is_alphanumeric()) {
                            continue;
                        }
                        // `super::` of a handler's own `mod tests` is the handler: only
                        // another handler's name counts there.
                        let others = named(&code[at + prefix.len()..])
                            .into_iter()
                            .filter(|name| name != own && (any || modules.contains(name)));
                        for name in others {
                            let shown = file.strip_prefix(root).unwrap().display();
                            found.push(format!("handlers/{shown}:{}: {prefix}{name}", number + 1));
                        }
                    }
                }
            }
        }
        found
    }

    #[test]
    fn no_handler_module_imports_another() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/handlers");
        assert!(handler_files(&root).len() > 20, "the handlers are read");
        let found = borrowings(&root);
        assert!(
            found.is_empty(),
            "a handler module uses another's; move what they share to http/ (paging, refusals, \
             extract), views/ or state:\n{}",
            found.join("\n")
        );
    }
}
