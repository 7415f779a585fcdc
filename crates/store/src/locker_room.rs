//! The operations on a fan's locker room: its public face (`FAN#<userId>` / `SHOW`: copies of
//! the profile's public fields, the title and the items shown) and stats (`FAN#<userId>` /
//! `STATS`, kept by each opening's write).

use std::future::Future;

use crate::StoreError;
use domain::ids::{TeamId, UserId};
use domain::locker_room::stats::LockerStats;
use domain::locker_room::{ItemNotOwned, LockerRoomBody};
use domain::profile::AvatarUrl;
use domain::profile::name::DisplayName;
use domain::purchases::mine::MyItem;
use domain::timestamp::Timestamp;

/// A locker room as the public sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PublicLockerRoom {
    /// `None` while the fan has no name (their own `PUT` still answers it).
    pub display_name: Option<DisplayName>,
    pub avatar_url: Option<AvatarUrl>,
    pub favorite_team_id: Option<TeamId>,
    pub title: Option<String>,
    /// In the order the fan chose.
    pub items: Vec<MyItem>,
    pub stats: LockerStats,
    /// The cosmetics the fan equipped (`PUT /api/me/cosmetics`).
    pub cosmetics: domain::products::cosmetics::Equipped,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PutLockerRoomError {
    #[error(transparent)]
    NotOwned(#[from] ItemNotOwned),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Replaces the fan's locker room with `body` (checked), each item read from the fan's own
/// opened purchases ([`domain::locker_room::showcase`]); returns it as the public sees it. An item
/// that is not the fan's writes nothing.
pub trait PutLockerRoom: Send + Sync {
    fn put_locker_room(
        &self,
        user_id: &UserId,
        body: &LockerRoomBody,
        now: Timestamp,
    ) -> impl Future<Output = Result<PublicLockerRoom, PutLockerRoomError>> + Send;
}

/// The locker room of the fan who holds `name` (in any case), or `None` when nobody does.
pub trait GetLockerRoom: Send + Sync {
    fn get_locker_room(
        &self,
        name: &DisplayName,
    ) -> impl Future<Output = Result<Option<PublicLockerRoom>, StoreError>> + Send;
}

/// What the public sees of the fan `user_id`, by their id (their public face and stats; an
/// empty room while they show nothing): one read of their `FAN#` face and stats.
pub trait GetOwnLockerRoom: Send + Sync {
    fn own_locker_room(
        &self,
        user_id: &UserId,
    ) -> impl Future<Output = Result<PublicLockerRoom, StoreError>> + Send;
}

/// Every locker room operation.
pub trait LockerRoomStore: PutLockerRoom + GetLockerRoom + GetOwnLockerRoom {}
impl<S: PutLockerRoom + GetLockerRoom + GetOwnLockerRoom> LockerRoomStore for S {}
