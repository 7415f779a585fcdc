//! A drop's waiting room (issue 29): fans join a line, positions are drawn after it closes, and
//! fans are admitted by position.

pub mod admission;
pub mod fairness;
pub mod merkle;
