//! [`Trace`]: an instrument that logs every hook call and can veto passes or fail on demand.

use std::collections::HashSet;
use std::error::Error;
use std::sync::{Arc, Mutex};

use irpass::instrument::SkipReason;
use irpass::{Hook, ModuleView, PassInfo, PassInstrument, Result};

/// A shared, ordered event log.
pub type Log = Arc<Mutex<Vec<String>>>;

/// A new empty log.
pub fn new_log() -> Log {
    Log::default()
}

/// The events logged so far.
pub fn events(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// How a fault fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultMode {
    /// Return an error.
    Error,
    /// Panic.
    Panic,
}

/// A failure to inject: in `hook`, for pass `pass` (or any pass, or a context hook).
#[derive(Clone, Debug)]
pub struct Fault {
    /// The hook that fails.
    pub hook: Hook,
    /// The pass it fails for (`None`: every pass, or a context hook).
    pub pass: Option<String>,
    /// Error or panic.
    pub mode: FaultMode,
}

/// Logs `"{label}.{event} {pass}"` for every hook call; vetoes the passes in its veto list;
/// fails as its faults say.
pub struct Trace {
    label: String,
    log: Log,
    veto: HashSet<String>,
    faults: Vec<Fault>,
    show_modules: bool,
}

impl Trace {
    /// A tracer that logs into `log` under `label`.
    pub fn new(label: &str, log: &Log) -> Self {
        Trace {
            label: label.to_string(),
            log: log.clone(),
            veto: HashSet::new(),
            faults: Vec::new(),
            show_modules: false,
        }
    }

    /// Also says no in `should_run` for `pass`.
    pub fn veto(mut self, pass: &str) -> Self {
        self.veto.insert(pass.to_string());
        self
    }

    /// Also fails in `hook` (for `pass`, if given).
    pub fn fault(mut self, hook: Hook, pass: Option<&str>, mode: FaultMode) -> Self {
        self.faults.push(Fault {
            hook,
            pass: pass.map(str::to_string),
            mode,
        });
        self
    }

    /// Also logs the module (one line) in before/after events.
    pub fn show_modules(mut self) -> Self {
        self.show_modules = true;
        self
    }

    fn event(
        &self,
        hook: Hook,
        what: &str,
        pass: Option<&str>,
        module: Option<&dyn ModuleView>,
    ) -> Result<()> {
        let mut line = format!("{}.{what}", self.label);
        if let Some(p) = pass {
            line.push(' ');
            line.push_str(p);
        }
        if let (true, Some(m)) = (self.show_modules, module) {
            line.push_str(" | ");
            line.push_str(m.to_string().trim_end().replace('\n', "; ").as_str());
        }
        self.log.lock().unwrap().push(line);
        for fault in &self.faults {
            if fault.hook == hook && (fault.pass.is_none() || fault.pass.as_deref() == pass) {
                let msg = format!("{} injected fault in {hook}", self.label);
                match fault.mode {
                    FaultMode::Error => return Err(msg.into()),
                    FaultMode::Panic => panic!("{msg}"),
                }
            }
        }
        Ok(())
    }
}

impl PassInstrument for Trace {
    fn name(&self) -> &str {
        &self.label
    }
    fn enter_pass_ctx(&self) -> Result<()> {
        self.event(Hook::EnterPassCtx, "enter", None, None)
    }
    fn exit_pass_ctx(&self) -> Result<()> {
        self.event(Hook::ExitPassCtx, "exit", None, None)
    }
    fn should_run(&self, m: &dyn ModuleView, info: &PassInfo) -> Result<bool> {
        self.event(Hook::ShouldRun, "should_run", Some(&info.name), Some(m))?;
        Ok(!self.veto.contains(info.name.as_ref()))
    }
    fn run_before_pass(&self, m: &dyn ModuleView, info: &PassInfo) -> Result<()> {
        self.event(Hook::RunBeforePass, "before", Some(&info.name), Some(m))
    }
    fn run_after_pass(&self, m: &dyn ModuleView, info: &PassInfo) -> Result<()> {
        self.event(Hook::RunAfterPass, "after", Some(&info.name), Some(m))
    }
    fn run_after_pass_failed(
        &self,
        m: &dyn ModuleView,
        info: &PassInfo,
        _error: &(dyn Error + 'static),
    ) -> Result<()> {
        self.event(
            Hook::RunAfterPassFailed,
            "failed",
            Some(&info.name),
            Some(m),
        )
    }
    fn run_skipped_pass(
        &self,
        m: &dyn ModuleView,
        info: &PassInfo,
        reason: &SkipReason,
    ) -> Result<()> {
        self.event(
            Hook::RunSkippedPass,
            &format!("skipped[{reason}]"),
            Some(&info.name),
            Some(m),
        )
    }
}

/// A context whose only instrument is a [`Trace`] labelled `label`, and the trace's log.
pub fn traced_context(label: &str) -> (irpass::PassContext, Log) {
    let log = new_log();
    let ctx = irpass::PassContext::builder()
        .instrument(Trace::new(label, &log))
        .build()
        .unwrap();
    (ctx, log)
}

/// The logged events that start with `prefix`, in order.
pub fn events_with(log: &Log, prefix: &str) -> Vec<String> {
    events(log)
        .into_iter()
        .filter(|e| e.starts_with(prefix))
        .collect()
}

/// How many times exactly `event` was logged.
pub fn count(log: &Log, event: &str) -> usize {
    events(log).iter().filter(|e| *e == event).count()
}
