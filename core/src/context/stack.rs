//! The thread-local stack of entered contexts and the guards that pop it.

use std::cell::RefCell;
use std::marker::PhantomData;

use super::{PassContext, hooks};
use crate::error::ContextError;

struct Entry {
    id: u64,
    ctx: PassContext,
}

/// The entered contexts, innermost last, and the id the next entry gets.
struct Stack {
    entries: Vec<Entry>,
    next: u64,
}

thread_local! {
    static STACK: RefCell<Stack> = const {
        RefCell::new(Stack {
            entries: Vec::new(),
            next: 0,
        })
    };
    static DEFAULT: PassContext = PassContext::default();
}

pub(super) fn current() -> PassContext {
    STACK
        .with(|s| s.borrow().entries.last().map(|e| e.ctx.clone()))
        .unwrap_or_else(|| DEFAULT.with(PassContext::clone))
}

fn push_entry(ctx: PassContext) -> u64 {
    STACK.with(|s| {
        let mut stack = s.borrow_mut();
        let id = stack.next;
        stack.next += 1;
        stack.entries.push(Entry { id, ctx });
        id
    })
}

/// Removes the entry `id`; returns how many entries above it were still there (0 when it was
/// on top, as it should be), and its context. The other entries are left as they are. (The
/// context is dropped by the caller, outside the stack's borrow, so that no `Drop` impl of a
/// context's instruments can run while the stack is borrowed.)
fn pop_entry(id: u64) -> (usize, Option<PassContext>) {
    STACK.with(|s| {
        let entries = &mut s.borrow_mut().entries;
        match entries.iter().rposition(|e| e.id == id) {
            Some(pos) => (entries.len() - 1 - pos, Some(entries.remove(pos).ctx)),
            None => (0, None),
        }
    })
}

/// The context of the entry `id`, if it is on this thread's stack.
fn entry_context(id: u64) -> Option<PassContext> {
    STACK.with(|s| {
        s.borrow()
            .entries
            .iter()
            .rev()
            .find(|e| e.id == id)
            .map(|e| e.ctx.clone())
    })
}

pub(super) fn push(ctx: PassContext) -> ContextGuard {
    // The stack owns the context; the guard knows its entry.
    ContextGuard {
        id: push_entry(ctx),
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
    done: bool,
    _not_send: PhantomData<*const ()>,
}

impl ContextGuard {
    /// The entered context (a handle: cloning a context is an `Arc` clone).
    pub fn context(&self) -> PassContext {
        entry_context(self.id).expect("a live guard's context is on its thread's stack")
    }

    /// Leaves the scope: the context stops being current, then every instrument's
    /// `exit_pass_ctx` runs. Leaving while a scope entered later is still active is an error
    /// (the stack is repaired, and the exit hooks still run).
    pub fn exit(mut self) -> Result<(), ContextError> {
        self.exit_inner().0
    }

    /// Pops the entry and runs the exit hooks: the result, and the context exited.
    fn exit_inner(&mut self) -> (Result<(), ContextError>, Option<PassContext>) {
        self.done = true;
        let (above, ctx) = pop_entry(self.id);
        let Some(ctx) = ctx else {
            return (Ok(()), None);
        };
        let hooks = hooks::exit_all(&ctx);
        let result = match (above, hooks) {
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
        };
        (result, Some(ctx))
    }
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        if !self.done
            && let (Err(err), Some(ctx)) = self.exit_inner()
        {
            ctx.record_exit_error(err);
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
        let _ = pop_entry(self.id);
    }
}
