//! Why a run of the driver stops early.

/// A failure: the message and the exit code (2 for usage, 1 for input and pass errors).
pub(super) struct Failure(pub(super) String, pub(super) u8);
