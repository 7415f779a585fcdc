//! The JSON views that several endpoints answer, with their schemas, by aggregate: a pack and
//! the countdowns of every answer ([`pack`]), a purchase and a pulled item ([`purchase`]), a
//! quest and a claimed reward ([`quests`]), a fan's standing ([`leaderboards`]), the waiting
//! room's answers ([`queue`]), a ledger entry and a top-up ([`cash`]), a wallet ([`wallets`]),
//! a locker room ([`locker_room`]), an event ([`events`]). A view one handler alone writes stays in its handler's
//! module.

pub mod cash;
pub mod events;
pub mod leaderboards;
pub mod locker_room;
pub mod pack;
pub mod products;
pub mod purchase;
pub mod quests;
pub mod queue;
pub mod wallets;
