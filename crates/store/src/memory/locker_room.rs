//! Locker rooms in memory: the public face is the profile's public fields, the locker room as
//! put (with its `locker_room.updated` when it shows something else), and the stats each
//! opening adds to, read under one lock.

use super::{MemoryStore, Tables};
use crate::StoreError;
use crate::locker_room::{
    GetLockerRoom, GetOwnLockerRoom, PublicLockerRoom, PutLockerRoom, PutLockerRoomError,
};
use domain::ids::UserId;
use domain::locker_room::{self, LockerRoomBody, showcase};
use domain::profile::name::DisplayName;
use domain::purchases::mine::MyItem;
use domain::timestamp::Timestamp;

/// A fan's locker room as put: its title and items.
#[derive(Debug, Clone, Default)]
pub(super) struct Shown {
    pub title: Option<String>,
    pub items: Vec<MyItem>,
}

impl Tables {
    /// What the public sees of `user_id`.
    fn public_room(&self, user_id: &UserId) -> PublicLockerRoom {
        let profile = self.profiles.get(user_id).map(|stored| &stored.profile);
        let shown = self.shown.get(user_id).cloned().unwrap_or_default();
        PublicLockerRoom {
            display_name: profile.and_then(|p| p.display_name.clone()),
            avatar_url: profile.and_then(|p| p.avatar_url.clone()),
            favorite_team_id: profile.and_then(|p| p.favorite_team_id.clone()),
            title: shown.title,
            items: shown.items,
            stats: self.stats.get(user_id).cloned().unwrap_or_default(),
            cosmetics: super::products::equipped(self, user_id),
        }
    }
}

impl PutLockerRoom for MemoryStore {
    async fn put_locker_room(
        &self,
        user_id: &UserId,
        body: &LockerRoomBody,
        now: Timestamp,
    ) -> Result<PublicLockerRoom, PutLockerRoomError> {
        let mut tables = self.write();
        let purchases: Vec<_> = body
            .items
            .iter()
            .filter_map(|item| {
                tables
                    .purchases
                    .get(&(user_id.clone(), item.purchase_id.clone()))
                    .cloned()
            })
            .collect();
        let items = showcase(user_id, &body.items, &purchases)?;
        let before = tables.shown.get(user_id);
        let events = locker_room::Shown {
            title: body.title.as_deref(),
            items: &items,
        }
        .events(
            user_id,
            &before.map_or(locker_room::Shown::NOTHING, |shown| locker_room::Shown {
                title: shown.title.as_deref(),
                items: &shown.items,
            }),
        );
        tables.emit(events, now);
        tables.shown.insert(
            user_id.clone(),
            Shown {
                title: body.title.clone(),
                items,
            },
        );
        Ok(tables.public_room(user_id))
    }
}

impl GetOwnLockerRoom for MemoryStore {
    async fn own_locker_room(&self, user_id: &UserId) -> Result<PublicLockerRoom, StoreError> {
        Ok(self.read().public_room(user_id))
    }
}

impl GetLockerRoom for MemoryStore {
    async fn get_locker_room(
        &self,
        name: &DisplayName,
    ) -> Result<Option<PublicLockerRoom>, StoreError> {
        let tables = self.read();
        Ok(tables
            .names
            .get(&name.key())
            .map(|user_id| tables.public_room(user_id)))
    }
}
