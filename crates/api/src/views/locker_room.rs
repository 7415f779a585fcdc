//! A fan's locker room as anyone sees it (`GET /api/locker-rooms/{name}`, the fan's own `PUT`,
//! the export).

use serde::Serialize;
use utoipa::ToSchema;

use crate::views::products::CosmeticsJson;
use crate::views::purchase::ItemJson;
use domain::locker_room::stats::LockerStats;
use store::locker_room::PublicLockerRoom;

/// A locker room as anyone sees it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = LockerRoom)]
pub struct LockerRoomJson<'a> {
    /// Null only in the fan's own answer while they have no name (nobody else can find it).
    #[schema(value_type = Option<String>, pattern = "^[A-Za-z0-9_.-]{3,24}$", required)]
    display_name: Option<&'a str>,
    #[schema(format = "uri", pattern = "^https://", max_length = 2048, required)]
    avatar_url: Option<&'a str>,
    #[schema(pattern = "^[A-Za-z0-9_-]{1,64}$", required)]
    favorite_team_id: Option<&'a str>,
    #[schema(max_length = 60, required)]
    title: Option<&'a str>,
    /// At most 12, in the fan's order.
    #[schema(max_items = 12)]
    items: Vec<ItemJson<'a>>,
    #[schema(value_type = LockerStats)]
    stats: &'a LockerStats,
    /// The cosmetics the fan shows (a frame, a theme, a badge).
    cosmetics: CosmeticsJson<'a>,
}

impl<'a> LockerRoomJson<'a> {
    pub fn of(room: &'a PublicLockerRoom) -> Self {
        Self {
            display_name: room.display_name.as_ref().map(|name| name.as_str()),
            avatar_url: room.avatar_url.as_ref().map(|url| url.as_str()),
            favorite_team_id: room.favorite_team_id.as_ref().map(|id| id.as_str()),
            title: room.title.as_deref(),
            items: room.items.iter().map(ItemJson::of).collect(),
            stats: &room.stats,
            cosmetics: CosmeticsJson::of(&room.cosmetics),
        }
    }
}
