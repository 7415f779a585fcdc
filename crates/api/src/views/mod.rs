//! The JSON views that several endpoints answer, with their schemas, by aggregate: a pack and
//! the countdowns of every answer ([`pack`]), a purchase and a pulled item ([`purchase`]), a
//! quest ([`quests`]), a fan's standing ([`leaderboards`]), the waiting room's answers
//! ([`queue`]). A view one handler alone writes stays in its handler's module.

pub mod leaderboards;
pub mod pack;
pub mod purchase;
pub mod quests;
pub mod queue;
