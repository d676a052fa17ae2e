//! The enter/exit protocol of a context's instruments, with TVM's failure rules made safe.

use super::PassContext;
use crate::error::{ContextError, Hook, HookFailure};
use crate::panic::{guarded, guarded_each};

/// Calls every instrument's `enter_pass_ctx` in order. When instrument k fails, instruments
/// 0..k get `exit_pass_ctx` in reverse order (their failures are attached, never fatal), the
/// context's instruments are cleared and the first error is returned.
pub(super) fn enter_all(ctx: &PassContext) -> Result<(), ContextError> {
    if ctx.has_no_instruments() {
        return Ok(());
    }
    let instruments = ctx.instruments();
    let Err((k, cause)) = guarded_each(&instruments, |i| i.enter_pass_ctx()) else {
        return Ok(());
    };
    let first = HookFailure {
        instrument: instruments[k].name().to_string(),
        hook: Hook::EnterPassCtx,
        cause,
    };
    let mut also = Vec::new();
    for done in instruments[..k].iter().rev() {
        if let Err(cause) = guarded(|| done.exit_pass_ctx()) {
            also.push(HookFailure {
                instrument: done.name().to_string(),
                hook: Hook::ExitPassCtx,
                cause,
            });
        }
    }
    ctx.set_instruments(Vec::new().into());
    Err(ContextError::Hook { first, also })
}

/// Calls every instrument's `exit_pass_ctx` in order. When one fails, the later ones are
/// skipped, the context's instruments are cleared and the error is returned.
pub(super) fn exit_all(ctx: &PassContext) -> Result<(), ContextError> {
    if ctx.has_no_instruments() {
        return Ok(());
    }
    let instruments = ctx.instruments();
    let Err((k, cause)) = guarded_each(&instruments, |i| i.exit_pass_ctx()) else {
        return Ok(());
    };
    ctx.set_instruments(Vec::new().into());
    let first = HookFailure {
        instrument: instruments[k].name().to_string(),
        hook: Hook::ExitPassCtx,
        cause,
    };
    Err(ContextError::Hook {
        first,
        also: Vec::new(),
    })
}
