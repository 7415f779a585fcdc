pub mod fairness;
pub mod merkle;
