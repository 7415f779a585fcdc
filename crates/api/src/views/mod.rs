//! The JSON views that several endpoints answer, with their schemas, by aggregate: a purchase
//! and a pulled item ([`purchase`]), a quest ([`quests`]), a fan's standing
//! ([`leaderboards`]), the waiting room's answers ([`queue`]). A view one handler alone writes
//! stays in its handler's module.

pub mod leaderboards;
pub mod purchase;
pub mod quests;
pub mod queue;
