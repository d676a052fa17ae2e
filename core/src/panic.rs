//! Turning panics in passes and hooks into errors.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::FailureCause;

/// Runs `f`, turning both its error and a panic into a [`FailureCause`].
pub(crate) fn guarded<T>(f: impl FnOnce() -> crate::Result<T>) -> Result<T, FailureCause> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(FailureCause::Error(err)),
        Err(payload) => Err(FailureCause::Panic(panic_message(payload.as_ref()))),
    }
}

/// The message of a panic payload (`&str` or `String`), or a placeholder.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}
