//! The model's one error: input a user must fix (a study file), saying what is wrong, where, and the fix.

#[derive(Debug, thiserror::Error)]
#[error("{what}: {problem}\n  hint: {hint}")]
pub struct InputError {
    pub what: String,
    pub problem: String,
    pub hint: String,
}
