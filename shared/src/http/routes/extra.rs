//! What `scripts/gen` needs of a route besides its handler's declaration, written in the route's
//! line of the `functions!` table (`handler: Class { field: value, ... }`): the rest of each
//! route's SAM event and event fixture is derived (the event's name from the operation id, the
//! token from the operation's security, the path's values from its parameters' examples).
//! Read by infra/gen alone ([`route_extras`](super::route_extras)): no function's binary refers
//! to it, so none of it is linked into one.

/// A route's deployment and example request, where the derived ones do not do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteExtra {
    /// The SAM event's name, when it is not the operation id in PascalCase. CloudFormation
    /// derives the route's logical ids from it, so renaming one replaces the deployed route (and
    /// fails on its route key, still taken): the routes deployed under other names keep them.
    pub event: Option<&'static str>,
    /// Route settings tighter than the API's: the template parameters `<throttle>RateLimit` and
    /// `<throttle>BurstLimit`.
    pub throttle: Option<&'static str>,
    /// `infra/events/<function>.<fixture>.json`; `None`: `<function>.json` (one route of a
    /// function at most).
    pub fixture: Option<&'static str>,
    /// The raw query string, without `?`.
    pub query: &'static str,
    /// A JSON body (sent with `content-type: application/json`).
    pub body: Option<&'static str>,
    pub idempotency_key: Option<&'static str>,
    /// Headers that replace the usual one of their name, or come last.
    pub headers: &'static [(&'static str, &'static str)],
}

impl RouteExtra {
    /// A route that needs nothing more than its declaration.
    pub const NONE: Self = Self {
        event: None,
        throttle: None,
        fixture: None,
        query: "",
        body: None,
        idempotency_key: None,
        headers: &[],
    };
}
