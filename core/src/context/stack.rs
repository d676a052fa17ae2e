//! The thread-local stack of entered contexts and the guards that pop it.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;

use super::{PassContext, hooks};
use crate::error::ContextError;

struct Entry {
    id: u64,
    ctx: PassContext,
}

thread_local! {
    static STACK: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
    static DEFAULT: PassContext = PassContext::default();
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
}

pub(super) fn current() -> PassContext {
    STACK
        .with(|s| s.borrow().last().map(|e| e.ctx.clone()))
        .unwrap_or_else(|| DEFAULT.with(PassContext::clone))
}

fn push_entry(ctx: PassContext) -> u64 {
    let id = NEXT_ID.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    });
    STACK.with(|s| s.borrow_mut().push(Entry { id, ctx }));
    id
}

/// Removes the entry `id`; returns how many entries above it were still there (0 when it was
/// on top, as it should be). The other entries are left as they are.
fn pop_entry(id: u64) -> usize {
    let (above, removed) = STACK.with(|s| {
        let mut stack = s.borrow_mut();
        match stack.iter().rposition(|e| e.id == id) {
            Some(pos) => (stack.len() - 1 - pos, Some(stack.remove(pos))),
            None => (0, None),
        }
    });
    // Dropped outside the borrow, so that no `Drop` impl (of a context's instruments, say)
    // can run while the stack is borrowed.
    drop(removed);
    above
}

pub(super) fn push(ctx: PassContext) -> ContextGuard {
    let id = push_entry(ctx.clone());
    ContextGuard {
        id,
        ctx,
        done: false,
        _not_send: PhantomData,
    }
}

pub(super) fn push_worker(ctx: PassContext) -> WorkerGuard {
    WorkerGuard {
        id: push_entry(ctx),
        _not_send: PhantomData,
    }
}

/// Keeps a [`PassContext`] current on this thread; leaving the scope runs the exit hooks.
///
/// Dropping the guard exits the context; an exit error is then kept on the context (see
/// [`PassContext::take_exit_errors`]). Call [`ContextGuard::exit`] to get it instead.
#[must_use = "the context is exited when the guard is dropped"]
pub struct ContextGuard {
    id: u64,
    ctx: PassContext,
    done: bool,
    _not_send: PhantomData<*const ()>,
}

impl ContextGuard {
    /// The entered context.
    pub fn context(&self) -> &PassContext {
        &self.ctx
    }

    /// Leaves the scope: the context stops being current, then every instrument's
    /// `exit_pass_ctx` runs. Leaving while a scope entered later is still active is an error
    /// (the stack is repaired, and the exit hooks still run).
    pub fn exit(mut self) -> Result<(), ContextError> {
        self.exit_inner()
    }

    fn exit_inner(&mut self) -> Result<(), ContextError> {
        self.done = true;
        let above = pop_entry(self.id);
        let hooks = hooks::exit_all(&self.ctx);
        match (above, hooks) {
            (0, result) => result,
            (inner, Ok(())) => Err(ContextError::OutOfOrder {
                inner,
                also: Vec::new(),
            }),
            (inner, Err(ContextError::Hook { first, mut also })) => {
                also.insert(0, first);
                Err(ContextError::OutOfOrder { inner, also })
            }
            (_, Err(other)) => Err(other),
        }
    }
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        if !self.done
            && let Err(err) = self.exit_inner()
        {
            self.ctx.record_exit_error(err);
        }
    }
}

/// Makes a context current on a worker thread while a function pass runs there (no hooks).
pub(crate) struct WorkerGuard {
    id: u64,
    _not_send: PhantomData<*const ()>,
}

impl Drop for WorkerGuard {
    fn drop(&mut self) {
        pop_entry(self.id);
    }
}
