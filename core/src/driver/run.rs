//! Running the driver: flags to a context and a pipeline, input to output.

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, FromArgMatches};

use super::Args;
use crate::instrument::{PassTiming, PrintAfterAll, PrintBeforeAll};
use crate::{BoxError, IrModule, PassContext, registry};

/// An opt-style driver for IR `M`.
pub struct Driver<M: IrModule> {
    /// The program's name (for usage and messages).
    pub name: &'static str,
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
}

/// A failure: the message and the exit code.
struct Failure(String, u8);

impl<M: IrModule> Driver<M> {
    /// Runs with the process's arguments and returns the exit code.
    pub fn main(&self) -> ExitCode {
        self.run(std::env::args())
    }

    /// Runs with `args` (the first is the program name).
    ///
    /// Installs a silent panic hook: a pass that panics is caught by the framework and reported
    /// as one error message (the driver owns the process, so the hook is its choice).
    pub fn run<I: IntoIterator<Item = String>>(&self, args: I) -> ExitCode {
        std::panic::set_hook(Box::new(|_| {}));
        let args: Vec<String> = args.into_iter().collect();
        let mut command = Args::command().name(self.name).bin_name(self.name);
        if let Some(v) = self.version {
            command = command.version(v).disable_version_flag(false);
        }
        if let Some(msg) = single_dash_long_flag(&command, &args) {
            say(&format!("{}: error: {msg}\n", self.name));
            return ExitCode::from(2);
        }
        let parsed = command
            .try_get_matches_from(args)
            .and_then(|m| Args::from_arg_matches(&m));
        let args = match parsed {
            Ok(a) => a,
            Err(e) => {
                let code = if e.use_stderr() { 2 } else { 0 };
                let _ = e.print();
                return ExitCode::from(code);
            }
        };
        match self.execute(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(Failure(msg, code)) => {
                say(&format!("{}: {}\n", self.name, msg.trim_end()));
                ExitCode::from(code)
            }
        }
    }

    fn execute(&self, args: &Args) -> Result<(), Failure> {
        let input_err = |m: String| Failure(m, 1);
        if args.emit == "dot" && self.dot.is_none() {
            return Err(Failure(
                format!(
                    "{} cannot emit Graphviz (`--emit=dot`) for this IR",
                    self.name
                ),
                2,
            ));
        }
        if args.list_passes || args.list_configs || args.list_instruments {
            let mut out = String::new();
            if args.list_passes {
                for reg in registry::passes::<M>() {
                    let i = reg.info;
                    let req: Vec<&str> = i.required_names().collect();
                    let req = if req.is_empty() {
                        String::new()
                    } else {
                        format!(" requires {}", req.join(", "))
                    };
                    out.push_str(&format!(
                        "{:<26} {:<10} opt {}{}\n    {}\n",
                        i.name,
                        i.kind.to_string(),
                        i.opt_level,
                        req,
                        i.summary()
                    ));
                }
            }
            if args.list_configs {
                for c in registry::list_configs() {
                    out.push_str(&format!(
                        "{:<44} {:<20} {}\n",
                        c.name,
                        c.type_name,
                        c.doc.lines().next().unwrap_or("")
                    ));
                }
            }
            if args.list_instruments {
                for i in registry::instruments() {
                    out.push_str(&format!(
                        "{:<20} {}\n",
                        i.name,
                        i.description.lines().next().unwrap_or("")
                    ));
                }
            }
            return write_output(None, &out);
        }

        if args.opt_level.is_none() && args.pipeline.is_none() && args.run_reproducer.is_none() {
            say(&format!(
                "{}: note: no `-O<level>` or `-p <pipeline>` given: running `-O2`\n",
                self.name
            ));
        }
        let mut replay: Option<crate::instrument::Reproducer> = None;
        let (source, text) = match (&args.run_reproducer, &args.input) {
            (Some(p), _) => {
                let t = std::fs::read_to_string(p)
                    .map_err(|e| input_err(format!("cannot read `{}`: {e}", p.display())))?;
                replay = Some(
                    crate::instrument::Reproducer::read(&t)
                        .map_err(|e| input_err(format!("`{}`: {e}", p.display())))?,
                );
                (p.display().to_string(), t)
            }
            (None, Some(p)) if p.as_os_str() == "-" => read_stdin()?,
            // Piped or redirected input with no file named: read it, as `opt` does (a
            // terminal or `/dev/null` on stdin means no input).
            (None, None) if stdin_has_input() => read_stdin()?,
            (None, Some(p)) => {
                let t = std::fs::read_to_string(p)
                    .map_err(|e| input_err(format!("cannot read `{}`: {e}", p.display())))?;
                (p.display().to_string(), t)
            }
            (None, None) => match self.default_input {
                Some((name, text)) => {
                    say(&format!(
                        "{}: no input file given; optimising the built-in default model `{name}`\n",
                        self.name
                    ));
                    (name.to_string(), text.to_string())
                }
                None => return Err(Failure("no input file given (use `-` for stdin)".into(), 2)),
            },
        };
        let module = (self.parse)(&source, &text).map_err(|e| input_err(e.to_string()))?;

        let level = args.opt_level.unwrap_or(2);
        let spec_text = match (&replay, &args.pipeline) {
            (Some(r), _) => r.pipeline.clone(),
            (None, Some(p)) => p.clone(),
            (None, None) => format!("O{level}"),
        };
        let spec = crate::pipeline::parse(&spec_text).map_err(|e| input_err(e.to_string()))?;
        let pipeline = spec.build::<M>().map_err(|e| input_err(e.to_string()))?;

        let ctx_level = if args.pipeline.is_some() || replay.is_some() {
            args.opt_level.unwrap_or(3)
        } else {
            level
        };
        let mut builder = PassContext::builder().opt_level(ctx_level);
        // Config: from the reproducer, then from the flags; kept as given to record it.
        let mut config: Vec<(String, String)> = Vec::new();
        if let Some(r) = &replay {
            if let Ok(serde_json::Value::Object(map)) =
                serde_json::from_str::<serde_json::Value>(&r.config)
            {
                for (k, v) in map {
                    config.push((
                        k,
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string()),
                    ));
                }
            }
        }
        for c in &args.config {
            let (k, v) = c
                .split_once('=')
                .ok_or_else(|| Failure(format!("`--config {c}`: expected KEY=VALUE"), 2))?;
            config.push((k.to_string(), v.to_string()));
        }
        for (k, v) in &config {
            builder = builder.config_text(k, v);
        }
        for p in &args.disabled {
            builder = builder.disabled_pass(p.clone());
        }
        for p in &args.required {
            builder = builder.required_pass(p.clone());
        }
        if let Some(t) = args.threads {
            builder = builder.threads(t as usize);
        }
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
        if args.verify_each {
            builder = builder.instrument(crate::instrument::VerifyEach);
        }
        if let Some(limit) = args.opt_bisect_limit {
            builder = builder.instrument(crate::instrument::OptBisect::new(limit));
        }
        if let Some(dir) = &args.dump_ir {
            builder = builder.instrument(crate::instrument::DumpIr::new(dir.clone()));
        }
        if let Some(path) = &args.crash_reproducer {
            let json = serde_json::Value::Object(
                config
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                    .collect(),
            );
            builder = builder.instrument(
                crate::instrument::CrashReproducer::new(path.clone())
                    .with_pipeline(spec_text.clone())
                    .with_config(json.to_string()),
            );
        }
        let timing = Arc::new(PassTiming::new());
        let chrome = Arc::new(crate::instrument::ChromeTrace::new());
        let mut chrome_file = None;
        match args.time_passes.as_deref() {
            None => {}
            Some("tree" | "json") => builder = builder.instrument_arc(timing.clone()),
            Some(other) => match other.strip_prefix("chrome:") {
                Some(file) if !file.is_empty() => {
                    chrome_file = Some(file.to_string());
                    builder = builder.instrument_arc(chrome.clone());
                }
                _ => {
                    return Err(Failure(
                        format!("`--time-passes={other}`: expected tree, json or chrome:FILE"),
                        2,
                    ));
                }
            },
        }
        let ctx = builder.build().map_err(|e| input_err(e.to_string()))?;
        let result = ctx
            .scope(|| pipeline.run(module))
            .map_err(|e| input_err(e.to_string()))?;
        let out = result.map_err(|e| input_err(e.to_string()))?;
        match args.time_passes.as_deref() {
            Some("tree") => say(&timing.render()),
            Some("json") => say(&format!(
                "{}\n",
                serde_json::to_string_pretty(&timing.to_json()).unwrap_or_default()
            )),
            _ => {}
        }
        if let Some(file) = chrome_file {
            let json = serde_json::to_string(&chrome.to_json()).unwrap_or_default();
            write_output(Some(Path::new(&file)), &json)?;
        }
        let text = match (args.emit.as_str(), self.dot) {
            ("dot", Some(dot)) => dot(&out),
            _ => (self.print)(&out),
        };
        write_output(args.output.as_deref(), &text)
    }
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

/// The text on stdin, named `<stdin>` in messages.
fn read_stdin() -> Result<(String, String), Failure> {
    let mut t = String::new();
    std::io::stdin()
        .read_to_string(&mut t)
        .map_err(|e| Failure(format!("cannot read stdin: {e}"), 1))?;
    Ok(("<stdin>".to_string(), t))
}

/// Whether stdin is a pipe or a file (`cat X | irpass-opt`, `irpass-opt < X`), rather than a
/// terminal, `/dev/null` or closed.
fn stdin_has_input() -> bool {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata("/dev/stdin").is_ok_and(|m| {
            let t = m.file_type();
            t.is_fifo() || t.is_file() || t.is_socket()
        })
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// Writes a message to stderr. A closed or full stderr loses the message but never panics
/// (`eprintln!` would) nor changes the outcome: there is nowhere left to report to.
fn say(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.flush());
}

/// Writes the result: to `path` atomically, or to stdout.
///
/// A regular file is written whole to a temporary file beside it, flushed to disk, and only
/// then renamed over `path`: a write that fails midway (disk full, a file-size limit) leaves
/// what was at `path` untouched. Anything else at `path` (a device, a pipe) is written in
/// place; a symbolic link stays a link, and the file it points to is replaced. The file keeps
/// the permissions of the one it replaces (a new one
/// gets `rw-r--r--`, before the umask). On stdout, a write error is an error (exit 1), except
/// a closed pipe (`irpass-opt ... | head`), which ends the output quietly.
fn write_output(path: Option<&Path>, text: &str) -> Result<(), Failure> {
    let Some(path) = path else {
        let mut stdout = std::io::stdout().lock();
        return match stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
        {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(e) => Err(Failure(format!("cannot write to stdout: {e}"), 1)),
        };
    };
    let fail = |e: std::io::Error| Failure(format!("cannot write `{}`: {e}", path.display()), 1);
    // A symbolic link stays one: the file it points to is what gets replaced.
    let resolved = std::fs::canonicalize(path).ok();
    let path = match &resolved {
        Some(target) if path.is_symlink() => target.as_path(),
        _ => path,
    };
    let existing = std::fs::metadata(path).ok();
    if existing.as_ref().is_some_and(|m| !m.is_file()) {
        // Not a regular file (`/dev/stdout`, a pipe, a directory): written in place, as
        // renaming over it would replace the device or fail.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(fail)?;
        return file.write_all(text.as_bytes()).map_err(fail);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".irpass-out-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = existing.map_or(0o644, |m| m.permissions().mode());
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    let mut file = builder.tempfile_in(dir).map_err(fail)?;
    file.write_all(text.as_bytes()).map_err(fail)?;
    file.as_file().sync_all().map_err(fail)?;
    file.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}
