//! Command-line flags of the driver (clap).

use std::path::PathBuf;

/// The driver's flags (the program's `about` line replaces this one in `--help`).
#[derive(Debug, clap::Parser)]
#[command(disable_version_flag = true)]
pub struct Args {
    /// The input module, in the IR's text or another format this driver reads; `-` reads stdin.
    /// Without one, the built-in default input.
    pub input: Option<PathBuf>,
    /// Optimisation level 0..4 (the range of a pass's `opt_level`): runs the registered
    /// pipeline `O<n>` at that level.
    #[arg(short = 'O', value_name = "LEVEL", value_parser = clap::value_parser!(u32).range(0..=crate::MAX_OPT_LEVEL as i64))]
    pub opt_level: Option<u32>,
    /// A textual pipeline, e.g. `FoldConstant,opt(SimplifyExpr,DeadCodeElimination)`: every
    /// pass it lists runs, whatever its opt level.
    #[arg(
        short = 'p',
        long = "passes",
        value_name = "PIPELINE",
        conflicts_with = "opt_level"
    )]
    pub pipeline: Option<String>,
    /// Where to write the result (default: stdout).
    #[arg(short = 'o', value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Print the module before every pass (stderr).
    #[arg(long)]
    pub print_before_all: bool,
    /// Print the module after every pass (stderr).
    #[arg(long)]
    pub print_after_all: bool,
    /// Time every pass: `tree` (default, TVM's format), `json`, or `chrome:FILE` (a Chrome
    /// trace for Perfetto); tree and json go to stderr. A tree line reads
    /// `NAME: TOTALus [SELFus] (% of the whole run; % of its parent)`, with SELF the time not
    /// spent in the passes indented under it; the root `sequential` is the whole pipeline as
    /// the driver runs it. Passes that did not run have no row (the json says `skipped`, why).
    #[arg(
        long,
        value_name = "FORMAT",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "tree"
    )]
    pub time_passes: Option<String>,
    /// Print the module after each pass that changed it; `=diff` prints a unified diff.
    #[arg(
        long,
        value_name = "MODE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "text",
        value_parser = ["text", "diff"]
    )]
    pub print_changed: Option<String>,
    /// Print the module before these passes (comma-separated names).
    #[arg(long, value_name = "PASS,...", value_delimiter = ',')]
    pub print_before: Vec<String>,
    /// Print the module after these passes (comma-separated names).
    #[arg(long, value_name = "PASS,...", value_delimiter = ',')]
    pub print_after: Vec<String>,
    /// One line per pass run or skipped and per analysis computed, cached or invalidated
    /// (stderr), as LLVM's `-debug-pass-manager`.
    #[arg(long)]
    pub debug_pass_manager: bool,
    /// Print the passes' statistics (counters such as "calls folded") after the run (stderr),
    /// as LLVM's `-stats`.
    #[arg(long)]
    pub stats: bool,
    /// Verify the module after every pass; a broken module is an error naming the pass.
    #[arg(long)]
    pub verify_each: bool,
    /// Do not check the input before the passes run nor the result before it is written
    /// (`opt`'s `-disable-verify`); a replayed reproducer is never checked (it holds what a pass
    /// was given, valid or not).
    #[arg(long)]
    pub disable_verify: bool,
    /// Run only the first N passes (one line per decision on stderr), to bisect a bug.
    #[arg(long, value_name = "N")]
    pub opt_bisect_limit: Option<usize>,
    /// On a failing or panicking pass, write a file that replays it.
    #[arg(long, value_name = "FILE")]
    pub crash_reproducer: Option<PathBuf>,
    /// Replay a crash reproducer (its pipeline, config and module).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["input", "pipeline", "opt_level"])]
    pub run_reproducer: Option<PathBuf>,
    /// Write the module before and after every pass into DIR (`000_Name.ir`, ...).
    #[arg(long, value_name = "DIR")]
    pub dump_ir: Option<PathBuf>,
    /// What to write: `text` (the IR's text format), `dot` (Graphviz of each function's
    /// dataflow), or a binary format the IR offers (`onnx`). Default: the format `-o`'s
    /// extension names, else text; with neither, an input in a binary format is written back
    /// in it (refused when stdout is a terminal).
    #[arg(long, value_name = "FORMAT")]
    pub emit: Option<String>,
    /// A config value, `KEY=VALUE` (JSON or plain text); repeatable.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    /// A pass that must not run; repeatable.
    #[arg(long = "disable-pass", value_name = "PASS")]
    pub disabled: Vec<String>,
    /// A pass that must run whatever the level; repeatable.
    #[arg(long = "required-pass", value_name = "PASS")]
    pub required: Vec<String>,
    /// Worker threads for function passes (default: all cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// List the registered passes (name, kind, opt level, requirements, description).
    #[arg(long)]
    pub list_passes: bool,
    /// List the registered config keys.
    #[arg(long)]
    pub list_configs: bool,
    /// List the registered instruments.
    #[arg(long)]
    pub list_instruments: bool,
    /// List the registered analyses of this IR (name, function or module, description).
    #[arg(long)]
    pub list_analyses: bool,
    /// Fix an input's shape when reading a model: `NAME:D1,D2,...`, e.g. `input:1,3,224,224`,
    /// for unknown or symbolic dimensions (onnxsim's `--overwrite-input-shape`); repeat for
    /// several inputs. Listed when a format of the driver takes it (ONNX).
    #[arg(long = "input-shape", value_name = "NAME:DIMS")]
    pub input_shape: Vec<String>,
    /// Refuse an input model that can be held only with parts kept opaque (ONNX: nodes irpass
    /// does not convert, which it otherwise keeps whole, optimises around and writes back).
    /// Listed when a format of the driver takes it.
    #[arg(long)]
    pub strict: bool,
    /// The version of the output format to write (ONNX: the default domain's opset, e.g.
    /// `--opset 13`); default: the input's. Listed when a format of the driver takes it.
    #[arg(long, value_name = "N")]
    pub opset: Option<i64>,
    /// Write tensors of at least BYTES bytes (default 1024, as ONNX's `save_model`) into a
    /// data file beside `-o`'s file (`OUT.data`) instead of into it (ONNX's external data).
    /// A model that would pass protobuf's 2 GiB limit gets it without being asked.
    #[arg(
        long,
        value_name = "BYTES",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "1024"
    )]
    pub external_data: Option<u64>,
    /// Run the input and the result on N random inputs with the IR's interpreter and fail,
    /// writing nothing, if any output differs beyond `|a - b| <= 1e-4 + 1e-3 * |b|` (NumPy's
    /// `allclose(rtol=1e-3, atol=1e-4)`; onnxsim's `check_n`).
    #[arg(long, value_name = "N")]
    pub check: Option<usize>,
    /// List the IR's operators (name, arity, fusion pattern, description).
    #[arg(long)]
    pub list_ops: bool,
}
