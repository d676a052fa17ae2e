//! Debugging instruments: [`PrintChanged`], [`VerifyEach`], [`OptBisect`],
//! [`CrashReproducer`].

use std::error::Error;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::{Sink, SkipReason};
use crate::analysis::AnalysisEvent;
use crate::{ModuleView, PassInfo, PassKind, Result};

/// Prints the module after a pass only when the pass changed it; as the whole module, or as a
/// unified diff against the module before the pass (`PrintChanged::diff()`). A pass that was
/// skipped gets one line with the reason (`*** IR Pass X skipped: ... ***`).
#[derive(Default)]
pub struct PrintChanged {
    diff: bool,
    sink: Sink,
    before: Mutex<Vec<Box<dyn ModuleView>>>,
}

impl PrintChanged {
    /// Prints changed modules whole, to stderr.
    pub fn new() -> Self {
        Self::default()
    }
    /// Prints unified diffs, to stderr.
    pub fn diff() -> Self {
        PrintChanged {
            diff: true,
            ..Self::default()
        }
    }
    /// The same, printing to `sink`.
    pub fn to(mut self, sink: Sink) -> Self {
        self.sink = sink;
        self
    }
}

/// Prints the module after each pass that changed it (or a diff).
#[crate::pass_instrument(default)]
impl PrintChanged {
    fn run_before_pass(&self, module: &dyn ModuleView, info: &PassInfo) {
        // Sequentials are not printed (their passes are), and so not recorded.
        if info.kind == PassKind::Sequential {
            return;
        }
        if let Ok(mut stack) = self.before.lock() {
            stack.push(module.clone_view());
        }
    }

    fn run_after_pass(&self, module: &dyn ModuleView, info: &PassInfo) -> Result<()> {
        if info.kind == PassKind::Sequential {
            return Ok(());
        }
        let Some(before) = self.before.lock().ok().and_then(|mut s| s.pop()) else {
            return Ok(());
        };
        if module.dyn_same_as(before.as_ref()) {
            return Ok(());
        }
        let (old, new) = (before.to_string(), module.to_string());
        if old == new {
            return Ok(());
        }
        let text = if self.diff {
            let diff = similar::TextDiff::from_lines(&old, &new);
            format!(
                "*** IR Diff After {} ***\n{}",
                info.name,
                diff.unified_diff().context_radius(2).header(
                    &format!("before {}", info.name),
                    &format!("after {}", info.name)
                )
            )
        } else {
            format!("*** IR Dump After {} (changed) ***\n{new}", info.name)
        };
        self.sink.write_str(&text)?;
        Ok(())
    }

    fn run_after_pass_failed(
        &self,
        _module: &dyn ModuleView,
        info: &PassInfo,
        _error: &(dyn Error + 'static),
    ) {
        if info.kind == PassKind::Sequential {
            return;
        }
        if let Ok(mut stack) = self.before.lock() {
            stack.pop();
        }
    }

    /// A pass that did not run cannot have changed anything; the line says why it did not.
    fn run_skipped_pass(
        &self,
        _module: &dyn ModuleView,
        info: &PassInfo,
        reason: &SkipReason,
    ) -> Result<()> {
        self.sink.write_str(&format!(
            "*** IR Pass {} skipped: {reason} ***\n",
            info.name
        ))?;
        Ok(())
    }
}

/// One line per pass run or skipped and per analysis computed, served from the cache or
/// invalidated (LLVM's `-debug-pass-manager`), to stderr or a [`Sink`]: what the pass manager
/// decided, in order.
///
/// ```
/// use irpass::{PassContext, Sequential};
/// use irpass::instrument::{DebugPassManager, Sink};
/// use irpass::doc_toy::{Toy, append};
///
/// let (sink, buffer) = Sink::buffer();
/// let ctx = PassContext::builder()
///     .opt_level(1)
///     .instrument(DebugPassManager::new().to(sink))
///     .build()
///     .unwrap();
/// let seq = Sequential::named("opt", [append("A", 0, 1), append("B", 2, 2)]).unwrap();
/// seq.run_in(Toy::with_main(), &ctx).unwrap();
/// assert_eq!(
///     buffer.contents(),
///     "Running pass: opt\nRunning pass: A\nSkipping pass: B (its opt level 2 is above the context's 1)\n"
/// );
/// ```
#[derive(Debug, Default)]
pub struct DebugPassManager {
    sink: Sink,
}

impl DebugPassManager {
    /// Prints to stderr.
    pub fn new() -> Self {
        Self::default()
    }
    /// The same, printing to `sink`.
    pub fn to(mut self, sink: Sink) -> Self {
        self.sink = sink;
        self
    }
}

/// Prints one line per pass and analysis decision (LLVM's `-debug-pass-manager`).
#[crate::pass_instrument(default)]
impl DebugPassManager {
    fn run_before_pass(&self, _module: &dyn ModuleView, info: &PassInfo) -> Result<()> {
        Ok(self
            .sink
            .write_str(&format!("Running pass: {}\n", info.name))?)
    }

    fn run_skipped_pass(
        &self,
        _module: &dyn ModuleView,
        info: &PassInfo,
        reason: &SkipReason,
    ) -> Result<()> {
        Ok(self
            .sink
            .write_str(&format!("Skipping pass: {} ({reason})\n", info.name))?)
    }

    fn on_analysis(&self, event: &AnalysisEvent<'_>) -> Result<()> {
        let scope = |module: bool| if module { "module" } else { "function" };
        let line = match event {
            AnalysisEvent::Computing { analysis, module } => {
                format!("Running analysis: {analysis} (on a {})\n", scope(*module))
            }
            AnalysisEvent::CacheHit { analysis, module } => {
                format!("Cached analysis: {analysis} (on a {})\n", scope(*module))
            }
            AnalysisEvent::Invalidated {
                analysis,
                pass,
                entries,
            } => format!("Invalidating analysis: {analysis} ({entries} results, after {pass})\n"),
            _ => return Ok(()),
        };
        Ok(self.sink.write_str(&line)?)
    }
}

/// Verifies the module (`IrModule::verify`) after every pass, and fails naming the pass that
/// broke it.
#[derive(Debug, Default)]
pub struct VerifyEach;

/// Verifies the module after every pass.
#[crate::pass_instrument(default)]
impl VerifyEach {
    fn run_after_pass(&self, module: &dyn ModuleView, info: &PassInfo) -> Result<()> {
        module
            .dyn_verify()
            .map_err(|d| format!("the module is invalid after pass `{}`: {d}", info.name).into())
    }
}

/// Counts the passes that would run and skips those after `limit`, printing one line per
/// decision (LLVM's `-opt-bisect-limit`): bisecting the limit finds the pass that breaks a
/// program. Sequentials are not counted (their passes are); passes forced by
/// `required_pass` always run.
#[derive(Debug)]
pub struct OptBisect {
    limit: usize,
    count: AtomicUsize,
    sink: Sink,
}

impl Default for OptBisect {
    fn default() -> Self {
        OptBisect::new(usize::MAX)
    }
}

impl OptBisect {
    /// Runs the first `limit` passes, skips the rest; prints to stderr.
    pub fn new(limit: usize) -> Self {
        OptBisect {
            limit,
            count: AtomicUsize::new(0),
            sink: Sink::default(),
        }
    }
    /// The same, printing to `sink`.
    pub fn to(mut self, sink: Sink) -> Self {
        self.sink = sink;
        self
    }
    /// How many passes were counted so far.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }
}

/// Runs passes up to a limit, skips the rest, reporting each decision.
#[crate::pass_instrument(default)]
impl OptBisect {
    fn should_run(&self, module: &dyn ModuleView, info: &PassInfo) -> Result<bool> {
        if info.kind == PassKind::Sequential {
            return Ok(true);
        }
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        let run = n <= self.limit;
        let verb = if run { "running" } else { "NOT running" };
        self.sink.write_str(&format!(
            "BISECT: {verb} pass ({n}) {} on {} module\n",
            info.name,
            module.ir_name()
        ))?;
        Ok(run)
    }
}

/// On the first failure or panic of a pass, writes one file that replays it: header lines
/// (`// key: value`) with the pipeline, the config, the required and disabled passes and the
/// failing pass, then the module as it was before the failing pass, in the IR's text (its
/// `Display`, or the printer given with [`CrashReproducer::with_printer`]: a driver gives
/// the one its parser reads). [`Reproducer::read`] splits the two. Switched on by name
/// (`IRPASS_INSTRUMENTS=CrashReproducer`), it writes to `$IRPASS_CRASH_REPRODUCER`, or
/// `irpass-crash-reproducer.txt` in the working directory.
pub struct CrashReproducer {
    path: PathBuf,
    pipeline: String,
    config: String,
    required: Vec<String>,
    disabled: Vec<String>,
    printer: Option<Printer>,
    written: AtomicBool,
}

/// Writes a module as text for a reproducer.
type Printer = Arc<dyn Fn(&dyn ModuleView) -> String + Send + Sync>;

impl std::fmt::Debug for CrashReproducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrashReproducer")
            .field("path", &self.path)
            .field("pipeline", &self.pipeline)
            .field("config", &self.config)
            .field("required", &self.required)
            .field("disabled", &self.disabled)
            .field("printer", &self.printer.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for CrashReproducer {
    fn default() -> Self {
        let path = std::env::var_os("IRPASS_CRASH_REPRODUCER").map_or_else(
            || PathBuf::from("irpass-crash-reproducer.txt"),
            PathBuf::from,
        );
        CrashReproducer::new(path)
    }
}

impl CrashReproducer {
    /// Writes to `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        CrashReproducer {
            path: path.into(),
            pipeline: String::new(),
            config: String::new(),
            required: Vec::new(),
            disabled: Vec::new(),
            printer: None,
            written: AtomicBool::new(false),
        }
    }
    /// Records the context's required and disabled passes to replay.
    pub fn with_passes(mut self, required: Vec<String>, disabled: Vec<String>) -> Self {
        self.required = required;
        self.disabled = disabled;
        self
    }
    /// Writes the module with `printer` instead of its `Display` (a driver gives the printer
    /// whose text its parser reads back).
    pub fn with_printer(
        mut self,
        printer: impl Fn(&dyn ModuleView) -> String + Send + Sync + 'static,
    ) -> Self {
        self.printer = Some(Arc::new(printer));
        self
    }
    /// Records the pipeline text to replay.
    pub fn with_pipeline(mut self, pipeline: impl Into<String>) -> Self {
        self.pipeline = pipeline.into();
        self
    }
    /// Records the context's config (JSON) to replay.
    pub fn with_config(mut self, config: impl Into<String>) -> Self {
        self.config = config.into();
        self
    }
    /// Whether a reproducer was written.
    pub fn written(&self) -> bool {
        self.written.load(Ordering::Relaxed)
    }
}

/// Writes a reproducer file for the first failing pass.
#[crate::pass_instrument(default)]
impl CrashReproducer {
    fn run_after_pass_failed(
        &self,
        module: &dyn ModuleView,
        info: &PassInfo,
        error: &(dyn Error + 'static),
    ) -> Result<()> {
        if info.kind == PassKind::Sequential || self.written.swap(true, Ordering::Relaxed) {
            return Ok(());
        }
        let first_line = error.to_string().lines().next().unwrap_or("").to_string();
        let values = [
            self.pipeline.clone(),
            self.config.clone(),
            self.required.join(","),
            self.disabled.join(","),
            info.name.to_string(),
            first_line,
        ];
        let mut text = String::from("// irpass crash reproducer\n");
        for (key, value) in HEADER_KEYS.iter().zip(values) {
            text.push_str(&format!("// {key}: {value}\n"));
        }
        match &self.printer {
            Some(print) => text.push_str(&print(module)),
            None => text.push_str(&module.to_string()),
        }
        std::fs::write(&self.path, text).map_err(|e| {
            format!(
                "cannot write the crash reproducer `{}`: {e}",
                self.path.display()
            )
        })?;
        Ok(())
    }
}

/// The pipeline, config, passes and failing pass recorded in a reproducer's header, and the
/// module's text after it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reproducer {
    /// The pipeline text.
    pub pipeline: String,
    /// The config as JSON (`{}` when empty).
    pub config: String,
    /// The context's required passes.
    pub required: Vec<String>,
    /// The context's disabled passes.
    pub disabled: Vec<String>,
    /// The pass that failed.
    pub failing_pass: String,
    /// The module, in the IR's text: what follows the header.
    pub module: String,
}

/// The keys of a reproducer's header lines, in the order they are written.
const HEADER_KEYS: [&str; 6] = [
    "pipeline",
    "config",
    "required",
    "disabled",
    "failing pass",
    "error",
];

impl Reproducer {
    /// Reads the header of a reproducer file's text (the module follows it).
    ///
    /// # Errors
    /// When the text has no reproducer header.
    pub fn read(text: &str) -> std::result::Result<Reproducer, String> {
        if !text.starts_with("// irpass crash reproducer") {
            return Err(
                "not an irpass crash reproducer (it starts with `// irpass crash reproducer`)"
                    .into(),
            );
        }
        // The header: the first line, then `// key: value` lines of the known keys; the module
        // is what follows, whatever its own comment syntax.
        let mut fields: Vec<(&str, &str)> = Vec::new();
        let mut rest = text.split_once('\n').map_or("", |(_, r)| r);
        while let Some(line) = rest.split_inclusive('\n').next() {
            let entry = line
                .trim_end_matches(['\n', '\r'])
                .strip_prefix("// ")
                .and_then(|l| {
                    HEADER_KEYS.iter().find_map(|k| {
                        l.strip_prefix(k)
                            .and_then(|v| v.strip_prefix(':'))
                            .map(|v| (*k, v.strip_prefix(' ').unwrap_or(v)))
                    })
                });
            let Some(entry) = entry else { break };
            fields.push(entry);
            rest = &rest[line.len()..];
        }
        let field = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
                .unwrap_or_default()
        };
        let names = |name: &str| -> Vec<String> {
            field(name)
                .split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        };
        Ok(Reproducer {
            pipeline: field("pipeline"),
            config: field("config"),
            required: names("required"),
            disabled: names("disabled"),
            failing_pass: field("failing pass"),
            module: rest.to_string(),
        })
    }
}
