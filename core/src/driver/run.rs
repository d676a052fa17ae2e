//! Running the driver: flags to a context and a pipeline, input to output.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, FromArgMatches};

use super::failure::Failure;
use super::format::{CheckFn, Format, FormatFlag, ReadOptions, WriteOptions, Written};
use super::input::{read_file, read_stdin, stdin_has_input};
use super::names::Known;
use super::output::{say, write_beside, write_output, write_pieces};
use super::{Args, listing};
use crate::instrument::{PassTiming, PrintAfterAll, PrintBeforeAll};
use crate::pipeline::BuildPipelineError;
use crate::{BoxError, IrModule, PassContext, PassContextBuilder, registry};

/// An opt-style driver for IR `M`.
pub struct Driver<M: IrModule> {
    /// The program's name (for usage and messages).
    pub name: &'static str,
    /// What the program is, one line: the first line of `--help`.
    pub about: &'static str,
    /// Reads a module from text; `source` names it in messages.
    pub parse: fn(source: &str, text: &str) -> Result<M, BoxError>,
    /// Writes a module as text.
    pub print: fn(&M) -> String,
    /// The input used when none is given: a name and the text.
    pub default_input: Option<(&'static str, &'static str)>,
    /// Writes a module as Graphviz (`--emit=dot`), if the IR can.
    pub dot: Option<fn(&M) -> String>,
    /// The version `--version` prints after the name (the crate's, typically
    /// `env!("CARGO_PKG_VERSION")`); `None` leaves the flag out.
    pub version: Option<&'static str>,
    /// The IR's operators, one per line, for `--list-ops` (`None`: the IR has none to list,
    /// and the flag says so).
    pub operators: Option<fn() -> String>,
    /// Binary formats the IR reads and writes besides its text (ONNX for the reference IR):
    /// an input is read with the first format that recognises it, and written in the format
    /// `--emit` names or `-o`'s extension has.
    pub formats: &'static [Format<M>],
    /// Compares the input with the result on random inputs (`--check N`), if the IR can run
    /// its programs; `None` makes the flag an error that says so.
    pub check: Option<CheckFn<M>>,
}

/// What the driver writes.
enum Emit<'d, M> {
    Text,
    Dot(fn(&M) -> String),
    Binary(&'d Format<M>),
}

/// What follows a run: the process ends ([`Driver::main`]) or the caller goes on
/// ([`Driver::run`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    Process,
    Return,
}

impl<M: IrModule> Driver<M> {
    /// Runs with the process's arguments and returns the exit code, for `main` to return: the
    /// process ends right after, so the result module and its written bytes are left to the
    /// operating system instead of being freed one allocation at a time (as rustc does with its
    /// own large structures; freeing a model's weights is a measurable share of a run).
    pub fn main(&self) -> ExitCode {
        self.run_as(std::env::args(), Ending::Process)
    }

    /// Runs with `args` (the first is the program name).
    ///
    /// Installs a silent panic hook: a pass that panics is caught by the framework and reported
    /// as one error message (the driver owns the process, so the hook is its choice).
    pub fn run<I: IntoIterator<Item = String>>(&self, args: I) -> ExitCode {
        self.run_as(args, Ending::Return)
    }

    fn run_as<I: IntoIterator<Item = String>>(&self, args: I, ending: Ending) -> ExitCode {
        std::panic::set_hook(Box::new(|_| {}));
        let args: Vec<String> = args.into_iter().collect();
        let mut command = Args::command()
            .name(self.name)
            .bin_name(self.name)
            .about(self.about);
        if let Some(v) = self.version {
            command = command.version(v).disable_version_flag(false);
        }
        // A format's flags are listed only when one of this driver's formats takes them.
        for flag in FormatFlag::ALL {
            if !self.takes(flag) {
                command = command.mut_arg(flag.arg_id(), |a| a.hide(true));
            }
        }
        if let Some(msg) = single_dash_long_flag(&command, &args).or_else(|| zero_for_o(&args)) {
            self.error(&msg);
            return ExitCode::from(2);
        }
        let parsed = command
            .try_get_matches_from(args)
            .and_then(|m| Args::from_arg_matches(&m));
        let args = match parsed {
            Ok(a) => a,
            Err(e) if !e.use_stderr() => {
                // `--help` and `--version`: clap prints them on stdout.
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            Err(e) => {
                // clap's own "error: ..." gets the driver's prefix like every other error.
                self.error(&e.render().to_string());
                return ExitCode::from(2);
            }
        };
        if let Some(flag) = FormatFlag::ALL
            .into_iter()
            .find(|&f| f.given(&args) && !self.takes(f))
        {
            self.error(&format!(
                "`{}` is a flag of a format this driver does not have (it reads and writes {})",
                flag.flag(),
                std::iter::once("text")
                    .chain(self.formats.iter().map(|f| f.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            return ExitCode::from(2);
        }
        match self.execute(&args, ending) {
            Ok(()) => ExitCode::SUCCESS,
            Err(Failure(msg, code)) => {
                self.error(&msg);
                ExitCode::from(code)
            }
        }
    }

    /// `NAME: error: MSG` on stderr: the one form every failure takes. A message that is a
    /// rendered diagnostic of its own (clap's, or the IR parser's `error: ...` with the source
    /// excerpt) keeps its body and takes this prefix instead of its own.
    fn error(&self, msg: &str) {
        let msg = msg.strip_prefix("error: ").unwrap_or(msg);
        say(&format!("{}: error: {}\n", self.name, msg.trim_end()));
    }

    /// `NAME: note: MSG` on stderr.
    fn note(&self, msg: &str) {
        say(&format!("{}: note: {msg}\n", self.name));
    }

    /// A pipeline that does not build: a usage error (`code`). The driver links its pass
    /// library, so an unknown name is a typo or a pass that does not exist, never a missing
    /// `use`: the link hint is dropped and `--list-passes` named instead. A driver whose IR has
    /// no registered pass at all keeps the hint and exits with 1: that program was built
    /// without its passes, not misused.
    fn build_error(&self, err: BuildPipelineError, code: u8) -> Failure {
        if registry::passes::<M>().is_empty() {
            return Failure(err.to_string(), 1);
        }
        let unknown = err.is_unknown_pass();
        let mut msg = err.without_link_hint().to_string();
        if unknown {
            msg.push_str(&format!("; `{} --list-passes` lists them", self.name));
        }
        Failure(msg, code)
    }

    fn execute(&self, args: &Args, ending: Ending) -> Result<(), Failure> {
        let emit = self.emit(args)?;
        if let Some(listing) = self.listings(args) {
            return write_output(None, &listing);
        }
        if args.opt_level.is_none() && args.pipeline.is_none() && args.run_reproducer.is_none() {
            self.note("no `-O<level>` or `-p <pipeline>` given: running `-O2`");
        }
        // A malformed `--input-shape` is a usage error, found before any input is read.
        let mut read_options =
            ReadOptions::with_input_shapes(&args.input_shape).map_err(|m| Failure(m, 2))?;
        read_options.strict = args.strict;
        let mut write_options = self.write_options(args, &emit)?;
        let (source, bytes, replay) = self.input(args)?;
        let (module, read_as) = self.read(args, &read_options, &source, bytes)?;
        // A model read in a binary format, with neither `-o` nor `--emit`, is written back in
        // that format (to a pipe or a file); printed on a terminal, it would be megabytes of
        // text or of bytes, so there it is refused with what to give.
        let emit = match (emit, read_as) {
            (Emit::Text, Some(f)) if args.emit.is_none() && args.output.is_none() => {
                if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                    return Err(Failure(
                        format!(
                            "`{source}` is a model in the {name} format and no `-o` is given: give `-o OUT.{ext}` \
                             to write the result, or `--emit=text` to print its text",
                            name = f.name.to_uppercase(),
                            ext = f.extension
                        ),
                        2,
                    ));
                }
                let emit = Emit::Binary(f);
                write_options = self.write_options(args, &emit)?;
                emit
            }
            (emit, _) => emit,
        };
        // The input is checked before any pass runs, as `opt` verifies its input: an error in
        // it is the input's, reported once, never a pass's failure (nor accepted by a pipeline
        // that happens not to look).
        let verify = !args.disable_verify && replay.is_none();
        if verify {
            checked(&module, |d| format!("`{source}` is not a valid input: {d}"))?;
        }
        let run = self.plan(args, replay.as_ref())?;
        let (ctx, reports) = self.context(args, replay.as_ref(), &run)?;
        if args.stats {
            crate::stats::reset();
        }
        let before = args.check.map(|_| module.clone());
        let result = ctx
            .scope(|| run.pipeline.run(module))
            .map_err(|e| input_err(e.to_string()))?;
        let out = result.map_err(|e| input_err(e.to_string()))?;
        reports.print(args)?;
        // The result is checked before it is written, as `opt` verifies its output: a pass
        // that broke the module is an error here, not an invalid file with exit code 0.
        if verify {
            checked(&out, |d| {
                format!(
                    "the pipeline's result is not valid, so nothing is written: {d} \
                     (`--verify-each` names the pass that broke it; `--disable-verify` writes it \
                     anyway)"
                )
            })?;
        }
        if let (Some(n), Some(before), Some(check)) = (args.check, &before, self.check) {
            let summary = check(before, &out, n).map_err(|e| {
                input_err(format!(
                    "`--check {n}`: the result differs from the input: {e}"
                ))
            })?;
            self.note(&format!("`--check {n}`: {summary}"));
        }
        let written = match emit {
            Emit::Dot(dot) => Written::from(dot(&out).into_bytes()),
            Emit::Text => Written::from((self.print)(&out).into_bytes()),
            Emit::Binary(f) => {
                (f.write)(&out, &write_options).map_err(|e| input_err(e.to_string()))?
            }
        };
        write_beside(args.output.as_deref(), &written.beside)?;
        let pieces: Vec<&[u8]> = written.pieces.iter().map(|p| (**p).as_ref()).collect();
        let result = write_pieces(args.output.as_deref(), &pieces);
        drop(pieces);
        if ending == Ending::Process {
            std::mem::forget((out, before, written));
        }
        result
    }

    /// What the flags tell a format's writer; `--opset` and `--external-data` need a binary
    /// format and `--check` an IR that can run, or they are usage errors.
    fn write_options<'a>(
        &self,
        args: &'a Args,
        emit: &Emit<'_, M>,
    ) -> Result<WriteOptions<'a>, Failure> {
        let binary = matches!(emit, Emit::Binary(_));
        for (flag, given) in [
            ("--opset", args.opset.is_some()),
            ("--external-data", args.external_data.is_some()),
        ] {
            if given && !binary {
                return Err(Failure(
                    format!(
                        "`{flag}` applies to a model format ({}); the output is {}",
                        self.format_names(),
                        match emit {
                            Emit::Dot(_) => "Graphviz",
                            _ => "text",
                        }
                    ),
                    2,
                ));
            }
        }
        if args.external_data.is_some() && args.output.is_none() {
            return Err(Failure(
                "`--external-data` writes a data file beside the output, so it needs `-o FILE`"
                    .into(),
                2,
            ));
        }
        if args.check.is_some() && self.check.is_none() {
            return Err(Failure(
                format!(
                    "{} cannot run this IR's programs, so `--check` is not available",
                    self.name
                ),
                2,
            ));
        }
        if args.check == Some(0) {
            return Err(Failure("`--check 0` checks nothing: give N ≥ 1".into(), 2));
        }
        Ok(WriteOptions {
            version: args.opset,
            external_data: args.external_data,
            output: args.output.as_deref(),
        })
    }

    /// Whether one of the driver's formats takes `flag`.
    fn takes(&self, flag: FormatFlag) -> bool {
        self.formats.iter().any(|f| f.flags.contains(&flag))
    }

    /// The binary formats' names, comma-separated.
    fn format_names(&self) -> String {
        self.formats
            .iter()
            .map(|f| f.name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// What `--list-*` asks for, if anything.
    fn listings(&self, args: &Args) -> Option<String> {
        let any = args.list_passes
            || args.list_configs
            || args.list_instruments
            || args.list_analyses
            || args.list_ops;
        if !any {
            return None;
        }
        let mut out = String::new();
        if args.list_passes {
            out.push_str(&listing::passes::<M>());
        }
        if args.list_configs {
            out.push_str(&listing::configs());
        }
        if args.list_instruments {
            out.push_str(&listing::instruments());
        }
        if args.list_analyses {
            out.push_str(&listing::analyses::<M>());
        }
        if args.list_ops {
            match self.operators {
                Some(list) => out.push_str(&list()),
                None => out.push_str(&format!("{} lists no operators for this IR\n", self.name)),
            }
        }
        Some(out)
    }

    /// The input's name and bytes: a reproducer (returned too), a file, stdin, or the built-in
    /// default.
    fn input(
        &self,
        args: &Args,
    ) -> Result<(String, bytes::Bytes, Option<crate::instrument::Reproducer>), Failure> {
        // Piped or redirected input with no file named is read, as `opt` does; empty, it is no
        // input, as a terminal or `/dev/null` on stdin is (`printf '' | irpass-opt` and
        // `irpass-opt < /dev/null` behave alike).
        let piped = match (&args.run_reproducer, &args.input) {
            (None, None) if stdin_has_input() => Some(read_stdin()?).filter(|(_, b)| !b.is_empty()),
            _ => None,
        };
        Ok(match (&args.run_reproducer, &args.input, piped) {
            (Some(p), _, _) => {
                let t = std::fs::read_to_string(p)
                    .map_err(|e| input_err(format!("cannot read `{}`: {e}", p.display())))?;
                let replay = crate::instrument::Reproducer::read(&t)
                    .map_err(|e| input_err(format!("`{}`: {e}", p.display())))?;
                // The parser reads the module, not the header before it.
                let module = bytes::Bytes::from(replay.module.clone());
                (p.display().to_string(), module, Some(replay))
            }
            (None, Some(p), _) if p.as_os_str() == "-" => {
                let (name, bytes) = read_stdin()?;
                (name, bytes, None)
            }
            (None, None, Some((name, bytes))) => (name, bytes, None),
            (None, Some(p), _) => {
                let t = read_file(p)
                    .map_err(|e| input_err(format!("cannot read `{}`: {e}", p.display())))?;
                (p.display().to_string(), t, None)
            }
            (None, None, None) => match self.default_input {
                Some((name, text)) => {
                    self.note(&format!(
                        "no input file given: optimising the built-in default input `{name}`"
                    ));
                    (
                        name.to_string(),
                        bytes::Bytes::from_static(text.as_bytes()),
                        None,
                    )
                }
                None => return Err(Failure("no input file given (use `-` for stdin)".into(), 2)),
            },
        })
    }

    /// The pipeline to run (from `-p`, `-O`, or the reproducer), built, and the pass names the
    /// flags give checked against it.
    fn plan(
        &self,
        args: &Args,
        replay: Option<&crate::instrument::Reproducer>,
    ) -> Result<Plan<M>, Failure> {
        let level = args.opt_level.unwrap_or(2);
        let spec_text = match (replay, &args.pipeline) {
            (Some(r), _) => r.pipeline.clone(),
            (None, Some(p)) => p.clone(),
            (None, None) => format!("O{level}"),
        };
        // A mistake in the command line (the pipeline text, a pass name, a config value) is a
        // usage error, 2, like a wrong flag; read from a reproducer file, an input error, 1.
        let usage_code = if replay.is_some() { 1 } else { 2 };
        let spec =
            crate::pipeline::parse(&spec_text).map_err(|e| Failure(e.to_string(), usage_code))?;
        let pipeline = spec.build::<M>().map_err(|e| {
            if replay.is_none() && args.pipeline.is_none() && e.is_unknown_pass() {
                return Failure(
                    format!(
                        "`-O{level}` runs the pipeline `O{level}`, and none is registered for IR \
                         `{ir}` (`{name} --list-passes` lists what is)",
                        ir = M::ir_name(),
                        name = self.name
                    ),
                    2,
                );
            }
            self.build_error(e, usage_code)
        })?;
        let known = Known::new(&pipeline);
        for (flag, names) in [
            ("--print-before", &args.print_before),
            ("--print-after", &args.print_after),
            ("--disable-pass", &args.disabled),
            ("--required-pass", &args.required),
        ] {
            for note in known.check(flag, names)? {
                self.note(&note);
            }
        }
        // A pipeline given as text runs every pass it lists, whatever its opt level (as
        // `opt -passes=` does); `-O<n>` runs `On`, whose passes are at most `n`.
        let ctx_level = if args.pipeline.is_some() || replay.is_some() {
            crate::MAX_OPT_LEVEL
        } else {
            level
        };
        Ok(Plan {
            spec_text,
            pipeline,
            usage_code,
            ctx_level,
        })
    }

    /// The context the flags describe: config, disabled and required passes, threads, and the
    /// debugging and timing instruments.
    fn context(
        &self,
        args: &Args,
        replay: Option<&crate::instrument::Reproducer>,
        run: &Plan<M>,
    ) -> Result<(PassContext, Reports), Failure> {
        let mut builder = PassContext::builder().opt_level(run.ctx_level);
        let config = config_of(args, replay)?;
        for (k, v) in &config {
            builder = builder.config_text(k, v);
        }
        // A reproducer's passes, then the flags'.
        let replayed = |f: fn(&crate::instrument::Reproducer) -> &Vec<String>| {
            replay.map(f).into_iter().flatten()
        };
        let disabled: Vec<String> = replayed(|r| &r.disabled)
            .chain(&args.disabled)
            .cloned()
            .collect();
        let required: Vec<String> = replayed(|r| &r.required)
            .chain(&args.required)
            .cloned()
            .collect();
        for p in &disabled {
            builder = builder.disabled_pass(p.clone());
        }
        for p in &required {
            builder = builder.required_pass(p.clone());
        }
        if let Some(t) = args.threads {
            builder = builder.threads(t as usize);
        }
        builder = debugging_instruments(builder, args);
        if let Some(path) = &args.crash_reproducer {
            let json = serde_json::Value::Object(
                config
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                    .collect(),
            );
            let print = self.print;
            builder = builder.instrument(
                crate::instrument::CrashReproducer::new(path.clone())
                    .with_pipeline(run.spec_text.clone())
                    .with_config(json.to_string())
                    .with_passes(required.clone(), disabled.clone())
                    // The driver's printer: its parser reads the file back.
                    .with_printer(move |m| {
                        m.as_any()
                            .downcast_ref::<M>()
                            .map_or_else(|| m.to_string(), print)
                    }),
            );
        }
        let reports = Reports {
            timing: Arc::new(PassTiming::new()),
            chrome: Arc::new(crate::instrument::ChromeTrace::new()),
            chrome_file: None,
        };
        let (builder, reports) = reports.attach(builder, args)?;
        let ctx = builder
            .build()
            .map_err(|e| Failure(e.to_string(), run.usage_code))?;
        Ok((ctx, reports))
    }

    /// What to write: `--emit`'s format, else the one `-o`'s extension names, else text.
    fn emit(&self, args: &Args) -> Result<Emit<'_, M>, Failure> {
        let names = || {
            let mut all = vec!["text"];
            if self.dot.is_some() {
                all.push("dot");
            }
            all.extend(self.formats.iter().map(|f| f.name));
            all.join(", ")
        };
        match args.emit.as_deref() {
            None => {
                let ext = args.output.as_deref().and_then(Path::extension);
                Ok(self
                    .formats
                    .iter()
                    .find(|f| ext.is_some_and(|e| e == f.extension))
                    .map_or(Emit::Text, Emit::Binary))
            }
            Some("text") => Ok(Emit::Text),
            Some("dot") => match self.dot {
                Some(dot) => Ok(Emit::Dot(dot)),
                None => Err(Failure(
                    format!(
                        "{} cannot emit Graphviz (`--emit=dot`) for this IR",
                        self.name
                    ),
                    2,
                )),
            },
            Some(name) => match self.formats.iter().find(|f| f.name == name) {
                Some(f) => Ok(Emit::Binary(f)),
                None => Err(Failure(
                    format!("unknown `--emit` format `{name}` (formats: {})", names()),
                    2,
                )),
            },
        }
    }

    /// Reads the input: with the first binary format that recognises it (which it returns),
    /// else as text.
    fn read(
        &self,
        args: &Args,
        options: &ReadOptions,
        source: &str,
        bytes: bytes::Bytes,
    ) -> Result<(M, Option<&Format<M>>), Failure> {
        let path = args.input.as_deref().filter(|p| p.as_os_str() != "-");
        if let Some(f) = self.formats.iter().find(|f| (f.detect)(path, &bytes)) {
            return (f.read)(source, path, bytes, options)
                .map(|m| (m, Some(f)))
                .map_err(|e| input_err(format!("{source}: {e}")));
        }
        if !options.input_shapes.is_empty() {
            return Err(Failure(
                format!(
                    "`--input-shape` applies to a model format ({}); `{source}` is text, whose \
                     types are written in it",
                    self.format_names()
                ),
                2,
            ));
        }
        self.read_text(source, &bytes)
            .map(|m| (m, None))
            .map_err(input_err)
    }

    fn read_text(&self, source: &str, bytes: &[u8]) -> Result<M, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            format!(
                "{source}: not text (byte {} is not UTF-8) and not in a format this driver reads",
                e.valid_up_to()
            )
        })?;
        (self.parse)(source, text).map_err(|e| e.to_string())
    }
}

/// `-03` typed for `-O3` (a zero for the letter O): clap would report an unknown `-0` and
/// suggest `-- -0`, which helps nobody.
fn zero_for_o(args: &[String]) -> Option<String> {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .find_map(|arg| {
            let level = arg.strip_prefix("-0")?;
            (level.len() == 1 && level.chars().all(|c| c.is_ascii_digit())).then(|| {
                format!(
                    "unknown flag `{arg}`; did you mean `-O{level}`? (the letter O, not a zero)"
                )
            })
        })
}

/// LLVM's tools take long flags with one dash (`-time-passes`, `-passes=...`); clap would read
/// them as a cluster of short flags and say something confusing. An argument with one dash
/// whose name (before any `=`) is one of the long flags gets "did you mean `--name`?".
fn single_dash_long_flag(command: &clap::Command, args: &[String]) -> Option<String> {
    let longs: Vec<&str> = command
        .get_arguments()
        .filter_map(|a| a.get_long())
        .collect();
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .find_map(|arg| {
            let name = arg.strip_prefix('-').filter(|n| !n.starts_with('-'))?;
            let name = name.split('=').next().unwrap_or(name);
            (name.len() > 1 && longs.contains(&name)).then(|| {
                format!("unknown flag `{arg}`; did you mean `-{arg}`? (long flags take two dashes)")
            })
        })
}

/// A failure of the input or of a pass: exit status 1.
fn input_err(m: String) -> Failure {
    Failure(m, 1)
}

/// The pipeline a run executes, and how it was given.
struct Plan<M: IrModule> {
    spec_text: String,
    pipeline: crate::Pass<M>,
    usage_code: u8,
    ctx_level: u32,
}

/// `module` verified ([`IrModule::verify`]); its diagnostics, without their leading
/// `error: `, go into the input error `message` makes.
fn checked<M: IrModule>(module: &M, message: impl Fn(&str) -> String) -> Result<(), Failure> {
    module.verify().map_err(|d| {
        let d = d.to_string();
        input_err(message(d.strip_prefix("error: ").unwrap_or(&d)))
    })
}

/// Config as `(key, value text)`: the reproducer's, then the flags' (kept as given, so that a
/// crash reproducer records it).
fn config_of(
    args: &Args,
    replay: Option<&crate::instrument::Reproducer>,
) -> Result<Vec<(String, String)>, Failure> {
    let mut config: Vec<(String, String)> = Vec::new();
    if let Some(r) = replay
        && let Ok(serde_json::Value::Object(map)) =
            serde_json::from_str::<serde_json::Value>(&r.config)
    {
        for (k, v) in map {
            let text = v
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string());
            config.push((k, text));
        }
    }
    for c in &args.config {
        let (k, v) = c
            .split_once('=')
            .ok_or_else(|| Failure(format!("`--config {c}`: expected KEY=VALUE"), 2))?;
        config.push((k.to_string(), v.to_string()));
    }
    Ok(config)
}

/// The printing, verifying, bisecting and dumping instruments the flags ask for.
fn debugging_instruments(mut builder: PassContextBuilder, args: &Args) -> PassContextBuilder {
    if args.print_before_all {
        builder = builder.instrument(PrintBeforeAll::new());
    }
    if !args.print_before.is_empty() || !args.print_after.is_empty() {
        builder = builder.instrument(crate::instrument::PassPrinting::new(
            args.print_before.clone(),
            args.print_after.clone(),
        ));
    }
    if args.print_after_all {
        builder = builder.instrument(PrintAfterAll::new());
    }
    match args.print_changed.as_deref() {
        Some("diff") => builder = builder.instrument(crate::instrument::PrintChanged::diff()),
        Some(_) => builder = builder.instrument(crate::instrument::PrintChanged::new()),
        None => {}
    }
    if args.debug_pass_manager {
        builder = builder.instrument(crate::instrument::DebugPassManager::new());
    }
    if args.verify_each {
        builder = builder.instrument(crate::instrument::VerifyEach);
    }
    if let Some(limit) = args.opt_bisect_limit {
        builder = builder.instrument(crate::instrument::OptBisect::new(limit));
    }
    if let Some(dir) = &args.dump_ir {
        builder = builder.instrument(crate::instrument::DumpIr::new(dir.clone()));
    }
    builder
}

/// `--time-passes`' instruments, read after the run.
struct Reports {
    timing: Arc<PassTiming>,
    chrome: Arc<crate::instrument::ChromeTrace>,
    chrome_file: Option<String>,
}

impl Reports {
    /// Adds the instrument `--time-passes` asks for.
    fn attach(
        mut self,
        builder: PassContextBuilder,
        args: &Args,
    ) -> Result<(PassContextBuilder, Self), Failure> {
        let builder = match args.time_passes.as_deref() {
            None => builder,
            Some("tree" | "json") => builder.instrument_arc(self.timing.clone()),
            Some(other) => match other.strip_prefix("chrome:") {
                Some(file) if !file.is_empty() => {
                    self.chrome_file = Some(file.to_string());
                    builder.instrument_arc(self.chrome.clone())
                }
                _ => {
                    return Err(Failure(
                        format!("`--time-passes={other}`: expected tree, json or chrome:FILE"),
                        2,
                    ));
                }
            },
        };
        Ok((builder, self))
    }

    /// Prints the timing tree or JSON, the statistics, and writes the Chrome trace.
    fn print(self, args: &Args) -> Result<(), Failure> {
        match args.time_passes.as_deref() {
            Some("tree") => say(&self.timing.render()),
            Some("json") => say(&format!(
                "{}\n",
                serde_json::to_string_pretty(&self.timing.to_json()).unwrap_or_default()
            )),
            _ => {}
        }
        if args.stats {
            say(&crate::stats::render(&crate::stats::collected()));
        }
        if let Some(file) = self.chrome_file {
            let json = serde_json::to_string(&self.chrome.to_json()).unwrap_or_default();
            write_output(Some(Path::new(&file)), &json)?;
        }
        Ok(())
    }
}
