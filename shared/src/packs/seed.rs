//! Seed files: a JSON array of packs, in the API's shape. Every pack is checked before anything
//! is written; a bad one is named by its position, its id and the field.

use crate::packs::Pack;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeedError {
    #[error("{path}: {problem}")]
    Syntax { path: String, problem: String },
    #[error("pack [{index}] ({id}): {field}: {problem}")]
    Invalid {
        index: usize,
        id: String,
        field: String,
        problem: String,
    },
    #[error("pack [{index}] ({id}): id repeats pack [{first}]")]
    DuplicateId {
        index: usize,
        first: usize,
        id: String,
    },
}

/// Parses and validates a whole seed file.
pub fn parse_seed(json: &[u8]) -> Result<Vec<Pack>, SeedError> {
    let deserializer = &mut serde_json::Deserializer::from_slice(json);
    let packs: Vec<Pack> =
        serde_path_to_error::deserialize(deserializer).map_err(|error| SeedError::Syntax {
            path: match error.path().to_string().as_str() {
                "." => "file".into(),
                path => format!("pack {path}"),
            },
            problem: error.into_inner().to_string(),
        })?;
    for (index, pack) in packs.iter().enumerate() {
        pack.validate().map_err(|error| SeedError::Invalid {
            index,
            id: pack.id.clone(),
            field: error.field,
            problem: error.problem,
        })?;
        if let Some(first) = packs[..index]
            .iter()
            .position(|earlier| earlier.id == pack.id)
        {
            return Err(SeedError::DuplicateId {
                index,
                first,
                id: pack.id.clone(),
            });
        }
    }
    Ok(packs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packs::tests::sample_pack;

    fn file(packs: serde_json::Value) -> Vec<u8> {
        packs.to_string().into_bytes()
    }

    #[test]
    fn the_shipped_seed_file_is_valid() {
        let packs = parse_seed(include_bytes!("../../../infra/seed/packs.json")).unwrap();
        assert!(packs.len() >= 8, "a realistic set");
    }

    #[test]
    fn errors_name_the_pack_and_field() {
        let mut bad = serde_json::to_value(sample_pack("b")).unwrap();
        bad["price"]["amount"] = "4.99".into();
        let error = parse_seed(&file(serde_json::json!([sample_pack("a"), bad]))).unwrap_err();
        assert!(error.to_string().contains("[1].price.amount"), "{error}");

        let mut bad = sample_pack("c");
        bad.odds[0].chance_bps = 1;
        let error = parse_seed(&file(serde_json::json!([sample_pack("a"), bad]))).unwrap_err();
        assert_eq!(
            error.to_string(),
            "pack [1] (c): odds: chanceBps must add up to 10000, not 1001"
        );

        let error = parse_seed(&file(serde_json::json!([
            sample_pack("a"),
            sample_pack("a")
        ])))
        .unwrap_err();
        assert_eq!(
            error,
            SeedError::DuplicateId {
                index: 1,
                first: 0,
                id: "a".into()
            }
        );

        assert!(
            parse_seed(b"{}")
                .unwrap_err()
                .to_string()
                .starts_with("file:")
        );
    }
}
