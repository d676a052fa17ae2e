//! A reusable opt-style driver, generic over the IR: give it a parser and a printer and it is
//! your compiler's `opt` (the pass library's `irpass-opt` is this driver for the reference IR).
//!
//! `NAME [FILE|-] (-O0..-O4 | -p PIPELINE) [-o OUT] [--print-before-all] [--print-after-all]
//! [--time-passes] [--debug-pass-manager] [--stats] [--config KEY=VALUE]...
//! [--disable-pass P]... [--required-pass P]...
//! [--threads N] [--list-passes] [--list-configs] [--list-instruments]`
//!
//! With no input file it reads stdin when stdin is a pipe or a file (`cat X | NAME -O2`), and
//! otherwise the built-in default input, if the driver has one (saying so on stderr). Without
//! `-O` or `-p` it runs `-O2` and says so on stderr. Optional flag values are taken
//! only after `=` (`--time-passes=json`, `--print-changed=diff`), so `--time-passes FILE` reads
//! FILE; LLVM's one-dash spelling (`-time-passes`) gets "did you mean `--time-passes`?".
//! `--version` prints the name and [`Driver::version`].
//!
//! The input is verified ([`IrModule::verify`](crate::IrModule::verify)) before any pass runs
//! and the result before it is written, as `opt` does; `--disable-verify` skips both. `-O<n>`
//! takes the range of a pass's `opt_level` (0 to [`MAX_OPT_LEVEL`](crate::MAX_OPT_LEVEL)) and
//! runs the registered pipeline `On`; `-p` runs every pass it lists, whatever its opt level.
//!
//! Every failure is one message on stderr, `NAME: error: ...`, and a non-zero exit: 2 for
//! usage, 1 for input and pass errors; never a panic or a backtrace. Notes say
//! `NAME: note: ...`. Pass names given to `--print-before`, `--print-after`, `--disable-pass`
//! and `--required-pass` are checked against the pipeline and the registry before anything
//! runs (a typo is an error with the closest names). `--list-passes` says what each
//! registered pipeline runs, read from the pipeline itself. `-o OUT` is written atomically (a temporary file
//! renamed over OUT once complete), so a failed write leaves OUT as it was; a write error on
//! stdout is an error, a closed stdout pipe ends the output quietly, and a closed or full
//! stderr only loses the messages.

mod args;
mod failure;
mod format;
mod input;
mod listing;
mod names;
mod output;
mod run;

pub use args::Args;
/// The shared byte buffer a format's reader ([`ReadFn`]) is given (the `bytes` crate's,
/// re-exported so that a reader needs no dependency of its own to name it).
pub use bytes::Bytes;
pub use format::{
    CheckFn, Format, FormatFlag, Piece, ReadFn, ReadOptions, WriteFn, WriteOptions, Written,
};
pub use run::Driver;
