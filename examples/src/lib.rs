//! Runnable examples of irpass live in `examples/`; this library is empty.
