//! Each route's SAM event and example request, from its declaration alone: its extras
//! ([`crate::extras::RouteExtra`]: a legacy event name, throttling, the fixture's name, query,
//! body, idempotency key and headers) and its handler's operation (the event's name, its
//! operation id in PascalCase; a token when the operation asks for one; the path's values, its
//! path parameters' examples).
//!
//! The fixtures' ids are the declaration's examples, and those chain: the purchase is the one the
//! start fixture's key makes for the user `me` (ids derive from the user and the key), and so is
//! the top-up of the top-up fixture's key: with a token for `me`, the fixtures run in order
//! (README, "cargo lambda watch"). The wallet is the one the web3-link fixture's payload links.

use crate::routes::RouteSpec;

/// The SAM event's name: CloudFormation derives the route's logical ids from it.
pub fn event(route: &RouteSpec) -> String {
    match route.extra.event {
        Some(event) => event.to_owned(),
        None => pascal_case(&route.operation_id),
    }
}

fn pascal_case(id: &str) -> String {
    id.split(['_', '-'])
        .flat_map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
        })
        .collect()
}

/// `<function>.<fixture>.json` when the route names its fixture; else `<function>.json` for the
/// first of its function's routes in `routes`, `<function>.<operation-id>.json` (kebab case) for
/// the others.
pub fn fixture_name(route: &RouteSpec, routes: &[RouteSpec]) -> String {
    let first = routes
        .iter()
        .find(|other| other.function == route.function)
        .is_none_or(|first| first.operation_id == route.operation_id);
    match route.extra.fixture {
        Some(name) => format!("{}.{name}.json", route.function),
        None if first => format!("{}.json", route.function),
        None => format!(
            "{}.{}.json",
            route.function,
            kebab_case(&route.operation_id)
        ),
    }
}

/// `getServerTime` as `get-server-time`.
fn kebab_case(camel: &str) -> String {
    let mut kebab = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            kebab.push('-');
        }
        kebab.push(c.to_ascii_lowercase());
    }
    kebab
}

/// The template's parameters with their example values, in order.
pub fn path_parameters(route: &RouteSpec) -> Result<Vec<(&str, &str)>, String> {
    route
        .examples
        .iter()
        .map(|(name, example)| match example {
            Some(example) => Ok((name.as_str(), example.as_str())),
            None => Err(format!(
                "{} ({}): the path parameter {{{name}}} has no example in its declaration \
                 (`#[param(example = ...)]`)",
                route.key(),
                route.function
            )),
        })
        .collect()
}

/// What an event or a fixture cannot be made of: a path parameter without an example, or one
/// outside its grammar (the fixture's path would be the API's 404); an event name given twice
/// (SAM derives logical ids from it) or written where it is the derived one; a fixture file
/// that two routes make.
pub fn problems(routes: &[RouteSpec]) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, route) in routes.iter().enumerate() {
        match path_parameters(route) {
            Err(problem) => problems.push(problem),
            Ok(parameters) => {
                for (name, value) in parameters {
                    if !api::http::routes::parameter_grammar(name)(value) {
                        problems.push(format!(
                            "{}: the example {{{name}}} = {value:?} is not of its grammar",
                            route.key()
                        ));
                    }
                }
            }
        }
        let earlier = &routes[..i];
        if earlier.iter().any(|other| event(other) == event(route)) {
            problems.push(format!("two routes' events are named {}", event(route)));
        }
        if route.extra.event == Some(pascal_case(&route.operation_id).as_str()) {
            problems.push(format!(
                "{}: `event: {:?}` is the operation id's, say nothing",
                route.key(),
                event(route)
            ));
        }
        let fixture = fixture_name(route, routes);
        if earlier
            .iter()
            .any(|other| fixture_name(other, routes) == fixture)
        {
            problems.push(format!(
                "{}: {fixture} is another route's fixture too: name this one's (`fixture: ...`)",
                route.key(),
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extras::RouteExtra;

    fn route(method: &str, path: &str, operation_id: &str, extra: RouteExtra) -> RouteSpec {
        RouteSpec {
            function: "catalog".into(),
            method: method.into(),
            path: path.into(),
            extra,
            operation_id: operation_id.into(),
            signed_in: false,
            operator: false,
            examples: path
                .split('/')
                .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
                .map(|name| (name.to_owned(), Some("nba".to_owned())))
                .collect(),
        }
    }

    #[test]
    fn every_route_has_its_event_and_fixture() {
        assert_eq!(problems(&crate::routes::routes()), Vec::<String>::new());
    }

    #[test]
    fn an_event_is_its_operation_id_unless_named() {
        let listed = route("GET", "/api/leagues", "listLeagues", RouteExtra::NONE);
        assert_eq!(event(&listed), "ListLeagues");
        let named = RouteExtra {
            event: Some("Leagues"),
            ..RouteExtra::NONE
        };
        assert_eq!(
            event(&route("GET", "/api/leagues", "listLeagues", named)),
            "Leagues"
        );
    }

    /// A route that lacks what its event or fixture needs is refused, naming it.
    #[test]
    fn a_route_without_its_facts_is_refused() {
        let leagues = route("GET", "/api/leagues", "listLeagues", RouteExtra::NONE);
        let league = route(
            "GET",
            "/api/leagues/{leagueId}",
            "getLeague",
            RouteExtra {
                fixture: Some("league"),
                ..RouteExtra::NONE
            },
        );
        assert!(problems(&[leagues.clone(), league.clone()]).is_empty());

        let mut no_example = league.clone();
        no_example.examples[0].1 = None;
        let mut off_grammar = league.clone();
        off_grammar.examples[0].1 = Some("a/b".into());
        let unnamed_fixture = RouteSpec {
            extra: RouteExtra::NONE,
            ..league.clone()
        };
        let both = [leagues.clone(), unnamed_fixture];
        assert!(problems(&both).is_empty());
        assert_eq!(fixture_name(&both[1], &both), "catalog.get-league.json");
        let mut same_fixture = league.clone();
        same_fixture.operation_id = "getLeagueAgain".into();
        same_fixture.method = "PUT".into();
        let twice = problems(&[league.clone(), same_fixture]);
        assert!(
            twice
                .iter()
                .any(|p| p.contains("catalog.league.json is another route's fixture")),
            "{twice:?}"
        );
        let same_event = RouteSpec {
            extra: RouteExtra {
                event: Some("ListLeagues"),
                fixture: Some("league"),
                ..RouteExtra::NONE
            },
            ..league.clone()
        };
        let redundant_event = RouteSpec {
            extra: RouteExtra {
                event: Some("GetLeague"),
                fixture: Some("league"),
                ..RouteExtra::NONE
            },
            ..league
        };
        for (second, named) in [
            (no_example, "{leagueId} has no example"),
            (off_grammar, "not of its grammar"),
            (same_event, "named ListLeagues"),
            (redundant_event, "is the operation id's"),
        ] {
            let problems = problems(&[leagues.clone(), second]);
            assert!(
                problems.iter().any(|problem| problem.contains(named)),
                "{named}: {problems:?}"
            );
        }
    }
}
