//! Command-line flags of the driver (clap).

use std::path::PathBuf;

/// The driver's flags.
#[derive(Debug, clap::Parser)]
#[command(disable_version_flag = true)]
pub struct Args {
    /// The input module (text); `-` reads stdin. Without one, the built-in default input.
    pub input: Option<PathBuf>,
    /// Optimisation level 0..3: runs the registered pipeline `O<n>` at that level.
    #[arg(short = 'O', value_name = "LEVEL", value_parser = clap::value_parser!(u32).range(0..=3))]
    pub opt_level: Option<u32>,
    /// A textual pipeline, e.g. `FoldConstant,opt(SimplifyExpr,DeadCodeElimination)`.
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
    /// Time every pass and print the tree (stderr).
    #[arg(long)]
    pub time_passes: bool,
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
}
