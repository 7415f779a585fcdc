//! The deployed functions: each function a route names, in declaration order, then the ones no
//! route names (started by a schedule). From this list come each function's resource head, log
//! group and errors alarm in template.yaml ([`crate::template`]).

use crate::routes::RouteSpec;

/// The functions no route names (started by a schedule, the table's stream or a queue): their
/// event sources are written by hand in the template (with their policies), and each is a
/// binary of `functions/src/bin`.
pub const SCHEDULED: [&str; 5] = [
    "release-holds",
    "account-erasure",
    "queue-keeper",
    "events-dispatcher",
    "webhook-sender",
];

/// One deployed function (a binary of `functions/src/bin`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function<'a> {
    /// The binary's name, `list-packs`.
    pub name: &'a str,
    /// Its routes, in declaration order (none for a scheduled function).
    pub routes: Vec<&'a RouteSpec>,
}

impl Function<'_> {
    /// `ListPacks`: the prefix of its resources' logical ids (`ListPacksFunction`,
    /// `ListPacksLogs`, `ListPacksErrorsAlarm`).
    pub fn logical_id(&self) -> String {
        self.name
            .split('-')
            .map(|word| word[..1].to_ascii_uppercase() + &word[1..])
            .collect()
    }

    /// Whether one of its routes asks for a session token: it then verifies tokens, and gets the
    /// identity provider's settings.
    pub fn signed_in(&self) -> bool {
        self.routes.iter().any(|route| route.signed_in)
    }
}

/// Every function: the routed ones in the order of their first route, then [`SCHEDULED`].
pub fn functions(routes: &[RouteSpec]) -> Vec<Function<'_>> {
    let mut functions: Vec<Function> = Vec::new();
    for route in routes {
        match functions.iter_mut().find(|f| f.name == route.function) {
            Some(function) => function.routes.push(route),
            None => functions.push(Function {
                name: &route.function,
                routes: vec![route],
            }),
        }
    }
    functions.extend(SCHEDULED.into_iter().map(|name| Function {
        name,
        routes: Vec::new(),
    }));
    functions
}

/// A scheduled function that a route names too would be deployed twice.
pub fn problems(routes: &[RouteSpec]) -> Vec<String> {
    SCHEDULED
        .into_iter()
        .filter(|name| routes.iter().any(|route| route.function == *name))
        .map(|name| format!("{name} is scheduled and routed: declare it once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_binary_is_a_function_and_every_function_a_binary() {
        let routes = crate::routes::routes();
        let mut declared: Vec<&str> = functions(&routes).iter().map(|f| f.name).collect();
        declared.sort_unstable();
        let bin = crate::repository().join("functions/src/bin");
        let mut binaries: Vec<String> = crate::file_names(&bin)
            .unwrap()
            .into_iter()
            .filter_map(|name| name.strip_suffix(".rs").map(str::to_owned))
            .collect();
        binaries.sort_unstable();
        assert_eq!(declared, binaries);
        assert_eq!(problems(&routes), Vec::<String>::new());
    }

    #[test]
    fn logical_ids_are_the_names_in_pascal_case() {
        let function = |name| Function {
            name,
            routes: Vec::new(),
        };
        assert_eq!(function("list-packs").logical_id(), "ListPacks");
        assert_eq!(function("web3-link").logical_id(), "Web3Link");
        assert_eq!(function("catalog").logical_id(), "Catalog");
    }
}
