//! Turning panics in passes and hooks into errors.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::FailureCause;

/// Runs `f`, turning both its error and a panic into a [`FailureCause`].
#[inline(always)]
pub(crate) fn guarded<T>(f: impl FnOnce() -> crate::Result<T>) -> Result<T, FailureCause> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(FailureCause::Error(err)),
        Err(payload) => Err(FailureCause::Panic(panic_message(payload.as_ref()))),
    }
}

/// Calls `f` on every item in order, stopping at the first error or panic, which is returned
/// with the index of the item that failed. One unwinding guard covers the whole loop, so a
/// hook phase over many instruments costs one guard, not one per instrument.
pub(crate) fn guarded_each<T>(
    items: &[T],
    mut f: impl FnMut(&T) -> crate::Result<()>,
) -> Result<(), (usize, FailureCause)> {
    let mut at = 0;
    let result = catch_unwind(AssertUnwindSafe(|| {
        for (k, item) in items.iter().enumerate() {
            at = k;
            f(item)?;
        }
        Ok(())
    }));
    match result {
        Ok(Ok(())) => Ok(()),
        Ok(Err(err)) => Err((at, FailureCause::Error(err))),
        Err(payload) => Err((at, FailureCause::Panic(panic_message(payload.as_ref())))),
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
