//! Rate limits: fixed windows of requests per signed-in fan (the token's `sub`) and per source
//! address, for each class of route ([`RouteClass`]), global across instances through one
//! conditional counter per (class, key, window) in the store. The rules are plain functions of
//! the policy, the clock and the counts the store answers: the window a request falls in
//! ([`Window`]), the fields of draft-ietf-httpapi-ratelimit-headers-11 ([`fields`]), and when a
//! refused client may retry ([`retry_after`]). Defaults and their reasons: docs/rate-limits.md.

pub mod fields;

use std::fmt;
use std::hash::{Hash, Hasher};

/// The class of a route: each route states its own once, in `crates/api/src/http/routes/mod.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RouteClass {
    /// Starting a purchase: what a drop's script hammers.
    Start,
    /// Joining a drop's queue.
    Join,
    /// Every other write of a fan.
    Write,
    /// Reads.
    Read,
    /// Not limited: Stripe's signed webhook (Stripe retries and bursts from a few addresses; a
    /// refusal would only delay a fan's credit, and its signature check costs less than a
    /// counter's write).
    Exempt,
}

impl RouteClass {
    /// The limited classes, in the order of the configuration's variables.
    pub const LIMITED: [RouteClass; 4] = [
        RouteClass::Start,
        RouteClass::Join,
        RouteClass::Write,
        RouteClass::Read,
    ];

    /// The class's name in policy names, keys and metrics.
    pub const fn name(self) -> &'static str {
        match self {
            RouteClass::Start => "start",
            RouteClass::Join => "join",
            RouteClass::Write => "write",
            RouteClass::Read => "read",
            RouteClass::Exempt => "exempt",
        }
    }

    /// The configuration variable that overrides the class's quotas
    /// ([`parse_class_policy`]'s format).
    pub const fn variable(self) -> &'static str {
        match self {
            RouteClass::Start => "RATE_LIMIT_START",
            RouteClass::Join => "RATE_LIMIT_JOIN",
            RouteClass::Write => "RATE_LIMIT_WRITE",
            RouteClass::Read => "RATE_LIMIT_READ",
            RouteClass::Exempt => "",
        }
    }

    /// Whether a request of this class is served when the counters cannot be reached: reads
    /// and other writes are (the limit is a defence, not the service), starts and joins are
    /// not (they are what a script aims at during a drop; the fan retries after the 503).
    pub const fn fails_open(self) -> bool {
        !matches!(self, RouteClass::Start | RouteClass::Join)
    }

    /// Whether the class's windows are counted in the table, exactly across every instance (a
    /// conditional write per counter and request): starts and joins, which spend something
    /// scarce (a unit of a drop, a place in its line). Reads and other writes are counted in each
    /// instance's memory, with no write (docs/rate-limits.md, "Where a request is counted").
    pub const fn counted_across_instances(self) -> bool {
        matches!(self, RouteClass::Start | RouteClass::Join)
    }
}

impl fmt::Display for RouteClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whose requests a counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// One signed-in fan.
    Fan,
    /// One source address.
    Address,
}

impl Scope {
    pub const fn name(self) -> &'static str {
        match self {
            Scope::Fan => "fan",
            Scope::Address => "addr",
        }
    }
}

/// At most `quota` requests in each window of `window_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    pub quota: u32,
    pub window_seconds: u32,
}

/// A class's quotas: per fan, and per address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassPolicy {
    pub fan: Quota,
    pub address: Quota,
}

impl ClassPolicy {
    pub const fn quota(&self, scope: Scope) -> Quota {
        match scope {
            Scope::Fan => self.fan,
            Scope::Address => self.address,
        }
    }
}

/// The quotas of every limited class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RatePolicy {
    pub start: ClassPolicy,
    pub join: ClassPolicy,
    pub write: ClassPolicy,
    pub read: ClassPolicy,
}

const fn per(quota: u32, window_seconds: u32) -> Quota {
    Quota {
        quota,
        window_seconds,
    }
}

/// The defaults (reasons in docs/rate-limits.md): a hand pressing a button a few times a
/// second, or a page polling, stays under them; a script does not. An address's quota is
/// twenty times a fan's, so that the fans behind one carrier NAT share it.
impl Default for RatePolicy {
    fn default() -> Self {
        Self {
            start: ClassPolicy {
                fan: per(10, 10),
                address: per(200, 10),
            },
            join: ClassPolicy {
                fan: per(10, 10),
                address: per(200, 10),
            },
            write: ClassPolicy {
                fan: per(30, 60),
                address: per(600, 60),
            },
            read: ClassPolicy {
                fan: per(300, 60),
                address: per(6000, 60),
            },
        }
    }
}

impl RatePolicy {
    /// The class's quotas; `None` for a class that is not limited.
    pub const fn of(&self, class: RouteClass) -> Option<&ClassPolicy> {
        match class {
            RouteClass::Start => Some(&self.start),
            RouteClass::Join => Some(&self.join),
            RouteClass::Write => Some(&self.write),
            RouteClass::Read => Some(&self.read),
            RouteClass::Exempt => None,
        }
    }

    /// The class's quotas to change (configuration).
    pub fn of_mut(&mut self, class: RouteClass) -> Option<&mut ClassPolicy> {
        match class {
            RouteClass::Start => Some(&mut self.start),
            RouteClass::Join => Some(&mut self.join),
            RouteClass::Write => Some(&mut self.write),
            RouteClass::Read => Some(&mut self.read),
            RouteClass::Exempt => None,
        }
    }
}

/// The longest window: a day.
pub const MAX_WINDOW_SECONDS: u32 = 86_400;

/// A class's quotas as configured: `fan=<q>/<w>,addr=<q>/<w>` (requests per window of seconds,
/// each at least 1, the window at most [`MAX_WINDOW_SECONDS`]).
pub fn parse_class_policy(text: &str) -> Result<ClassPolicy, String> {
    let problem = || format!("expected fan=<quota>/<seconds>,addr=<quota>/<seconds>, got {text:?}");
    let mut fan = None;
    let mut address = None;
    for part in text.split(',') {
        let (scope, value) = part.trim().split_once('=').ok_or_else(problem)?;
        let (quota, window) = value.split_once('/').ok_or_else(problem)?;
        let quota = Quota {
            quota: quota.trim().parse().map_err(|_| problem())?,
            window_seconds: window.trim().parse().map_err(|_| problem())?,
        };
        if quota.quota == 0 || !(1..=MAX_WINDOW_SECONDS).contains(&quota.window_seconds) {
            return Err(problem());
        }
        let slot = match scope.trim() {
            "fan" => &mut fan,
            "addr" => &mut address,
            _ => return Err(problem()),
        };
        if slot.replace(quota).is_some() {
            return Err(problem());
        }
    }
    match (fan, address) {
        (Some(fan), Some(address)) => Ok(ClassPolicy { fan, address }),
        _ => Err(problem()),
    }
}

/// The fixed window a request at `now` (seconds since the epoch) falls in for `quota`: windows
/// are aligned on multiples of their length, so that every instance agrees on them without
/// talking to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Window {
    /// Its first second.
    pub start: i64,
    /// The first second of the next one.
    pub end: i64,
}

impl Window {
    pub fn at(now: i64, quota: Quota) -> Self {
        let length = i64::from(quota.window_seconds.max(1));
        let start = now.div_euclid(length) * length;
        Self {
            start,
            end: start + length,
        }
    }

    /// Whole seconds from `now` to the window's end (at least 1: a window ending within the
    /// second still ends after `now`).
    pub fn seconds_left(&self, now: i64) -> u32 {
        u32::try_from((self.end - now).max(1)).unwrap_or(u32::MAX)
    }
}

/// How long the store keeps a window's counter after the window ends: TTL deletion is lazy and
/// no request reads a past window (its key names its start), so this is housekeeping only.
pub const COUNTER_KEPT_AFTER_WINDOW: i64 = 60;

/// The counter of one (class, scope, key, window): the item a limited request takes one from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counter {
    pub class: RouteClass,
    pub scope: Scope,
    /// The fan's `sub` or the address, hashed ([`counter_key`]).
    pub key: CounterKey,
    pub window: Window,
}

/// Two words, not the derive's six writes of 56 bytes (an eighth of local-api's limiter on a
/// read): the key's first eight bytes, and the window's start with the class and scope in its
/// top byte (a start in seconds since the epoch is far below 2^56). Equal counters hash
/// equally. The map's hasher stays SipHash with per-process keys: addresses chosen for their
/// SHA-256 still cannot crowd one bucket.
impl Hash for Counter {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let [prefix @ .., _, _, _, _, _, _, _, _] = self.key.0;
        state.write_u64(u64::from_le_bytes(prefix));
        let kind = ((self.class as u64) << 1) | self.scope as u64;
        state.write_u64((self.window.start as u64) ^ (kind << 56));
    }
}

impl Counter {
    /// A counter that names nobody: the place of a window refused from memory, never written
    /// and never given back (only its standing is read).
    pub fn unnamed(class: RouteClass) -> Self {
        Self {
            class,
            scope: Scope::Fan,
            key: CounterKey([0; 16]),
            window: Window { start: 0, end: 0 },
        }
    }

    /// When the store may delete the counter (seconds since the epoch).
    pub fn expires_at(&self) -> i64 {
        self.window.end + COUNTER_KEPT_AFTER_WINDOW
    }
}

/// The key a fan's `sub` or an address is counted under: a SHA-256 prefix, so that the table
/// holds neither (an address is personal data) and every key has one short length. Bytes, not
/// text, until a store writes it ([`fmt::Display`]: hex): every limited request makes one or
/// two, and a key held as text would be an allocation and a copy on each map lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CounterKey([u8; 16]);

impl fmt::Display for CounterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = [0u8; 32];
        // Cannot fail: the buffer is twice the bytes' length.
        hex::encode_to_slice(self.0, &mut text).map_err(|_| fmt::Error)?;
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

/// The [`CounterKey`] of `who` in `scope`.
pub fn counter_key(scope: Scope, who: &str) -> CounterKey {
    let mut context = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
    context.update(scope.name().as_bytes());
    context.update(b"\0");
    context.update(who.as_bytes());
    let mut key = [0u8; 16];
    key.copy_from_slice(&context.finish().as_ref()[..16]);
    CounterKey(key)
}

/// What the store answered for one counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// The request was counted: the window's count is now `count`.
    Counted(u32),
    /// The window's quota was already used up: nothing was written.
    Full,
}

/// One counter's state after a request, for the fields and the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    pub scope: Scope,
    pub quota: Quota,
    /// Requests left in the window.
    pub remaining: u32,
    /// Seconds until the window ends.
    pub reset: u32,
    /// Whether this counter refused the request.
    pub refused: bool,
}

impl Standing {
    pub fn of(scope: Scope, quota: Quota, taken: Taken, window: Window, now: i64) -> Self {
        let (remaining, refused) = match taken {
            Taken::Counted(count) => (quota.quota.saturating_sub(count), false),
            Taken::Full => (0, true),
        };
        Self {
            scope,
            quota,
            remaining,
            reset: window.seconds_left(now),
            refused,
        }
    }
}

/// The most seconds of jitter added to a `Retry-After`, so that the refused clients of one
/// window do not all come back in its first second.
pub const MAX_RETRY_JITTER_SECONDS: u32 = 3;

/// The `Retry-After` of a refusal: the end of the latest window that refused it, plus
/// `jitter` (0 to [`MAX_RETRY_JITTER_SECONDS`]): never before a refusing window ends.
pub fn retry_after(standings: &[Standing], jitter: u32) -> u32 {
    let latest = standings
        .iter()
        .filter(|standing| standing.refused)
        .map(|standing| standing.reset)
        .max()
        .unwrap_or(1);
    latest + jitter.min(MAX_RETRY_JITTER_SECONDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_aligned_and_a_request_at_the_edge_is_in_the_next() {
        let quota = per(5, 10);
        assert_eq!(
            Window::at(1_000, quota),
            Window {
                start: 1_000,
                end: 1_010
            }
        );
        assert_eq!(
            Window::at(1_009, quota),
            Window {
                start: 1_000,
                end: 1_010
            }
        );
        assert_eq!(Window::at(1_010, quota).start, 1_010);
        assert_eq!(Window::at(1_003, quota).seconds_left(1_003), 7);
    }

    #[test]
    fn retry_after_is_never_before_the_refusing_windows_end() {
        let refused = |reset| Standing {
            scope: Scope::Fan,
            quota: per(5, 10),
            remaining: 0,
            reset,
            refused: true,
        };
        let served = Standing {
            refused: false,
            reset: 50,
            ..refused(50)
        };
        assert_eq!(retry_after(&[refused(7), served], 0), 7);
        assert_eq!(retry_after(&[refused(7), refused(9)], 2), 11);
        assert_eq!(retry_after(&[refused(7)], 99), 7 + MAX_RETRY_JITTER_SECONDS);
    }

    #[test]
    fn keys_hide_who_and_differ_by_scope() {
        let fan = counter_key(Scope::Fan, "203.0.113.7").to_string();
        // SHA-256 of "fan\0203.0.113.7", its first 16 bytes: the stored keys' format.
        assert_eq!(fan, "1ac1c34e49705a0e1da2a38c508446a2");
        assert!(!fan.contains("203"));
        assert_ne!(fan, counter_key(Scope::Address, "203.0.113.7").to_string());
    }

    #[test]
    fn a_class_policy_is_read_whole_or_refused() {
        assert_eq!(
            parse_class_policy("fan=5/10, addr=100/10"),
            Ok(ClassPolicy {
                fan: per(5, 10),
                address: per(100, 10)
            })
        );
        for bad in [
            "fan=5/10",
            "fan=0/10,addr=1/1",
            "fan=5/0,addr=1/1",
            "fan=5/10,addr=1/86401",
            "fan=5/10,fan=5/10",
            "fan=5/10,ip=1/1",
            "fan=5,addr=1/1",
            "",
        ] {
            assert!(parse_class_policy(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn starts_and_joins_fail_closed_the_rest_open() {
        assert!(!RouteClass::Start.fails_open());
        assert!(!RouteClass::Join.fails_open());
        assert!(RouteClass::Write.fails_open());
        assert!(RouteClass::Read.fails_open());
    }
}
