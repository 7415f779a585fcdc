//! Session-token verification: a JWT from the identity provider, checked against its JWKS.
//!
//! - [`keys`]: JWKS documents to verifying keys, each with the one algorithm it accepts.
//! - [`jwks`]: where keys come from, and the cache that keeps them across warm invocations.
//! - [`verifier`]: the checks of one token (signature, `exp`, `nbf`, `iss`, `aud`, `sub`).

pub mod jwks;
pub mod keys;
pub mod verifier;

pub use jwks::{JwksCache, JwksError};
pub use keys::{KeySet, VerifyingKey};
pub use verifier::{Identity, TokenVerifier};
