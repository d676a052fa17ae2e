//! A reusable opt-style driver, generic over the IR: give it a parser and a printer and it is
//! your compiler's `opt` (the pass library's `irpass-opt` is this driver for the reference IR).
//!
//! `NAME [FILE|-] (-O0..-O3 | -p PIPELINE) [-o OUT] [--print-before-all] [--print-after-all]
//! [--time-passes] [--config KEY=VALUE]... [--disable-pass P]... [--required-pass P]...
//! [--threads N] [--list-passes] [--list-configs] [--list-instruments]`
//!
//! Every failure is one message on stderr and a non-zero exit: 2 for usage, 1 for input and
//! pass errors; never a panic or a backtrace.

mod args;
mod run;

pub use args::Args;
pub use run::Driver;
