//! Printing instruments: [`PrintBeforeAll`], [`PrintAfterAll`] and [`PassPrinting`].

use std::collections::BTreeSet;

use super::Sink;
use crate::{ModuleView, PassInfo, Result};

fn dump(sink: &Sink, when: &str, info: &PassInfo, module: &dyn ModuleView) -> Result<()> {
    let mut text = format!("*** IR Dump {when} {} ***\n{module}", info.name);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    sink.write_str(&text)?;
    Ok(())
}

/// Prints the module before every pass that runs.
#[derive(Debug, Default)]
pub struct PrintBeforeAll {
    sink: Sink,
}

impl PrintBeforeAll {
    /// Prints to stderr.
    pub fn new() -> Self {
        Self::default()
    }
    /// Prints to `sink`.
    pub fn to(sink: Sink) -> Self {
        PrintBeforeAll { sink }
    }
}

/// Prints the module to stderr before every pass that runs.
#[crate::pass_instrument(default)]
impl PrintBeforeAll {
    fn run_before_pass(&self, module: &dyn ModuleView, info: &PassInfo) -> Result<()> {
        dump(&self.sink, "Before", info, module)
    }
}

/// Prints the module after every pass that runs.
#[derive(Debug, Default)]
pub struct PrintAfterAll {
    sink: Sink,
}

impl PrintAfterAll {
    /// Prints to stderr.
    pub fn new() -> Self {
        Self::default()
    }
    /// Prints to `sink`.
    pub fn to(sink: Sink) -> Self {
        PrintAfterAll { sink }
    }
}

/// Prints the module to stderr after every pass that runs.
#[crate::pass_instrument(default)]
impl PrintAfterAll {
    fn run_after_pass(&self, module: &dyn ModuleView, info: &PassInfo) -> Result<()> {
        dump(&self.sink, "After", info, module)
    }
}

/// Prints the module before the passes named in one list and after those named in another.
///
/// ```
/// use irpass::instrument::{PassPrinting, Sink};
/// let (sink, out) = Sink::buffer();
/// let printing = PassPrinting::new(["FoldConstant"], ["FuseOps", "FoldConstant"]).to(sink);
/// # let _ = (printing, out);
/// ```
#[derive(Debug, Default)]
pub struct PassPrinting {
    before: BTreeSet<String>,
    after: BTreeSet<String>,
    sink: Sink,
}

impl PassPrinting {
    /// Prints before the passes in `before` and after those in `after`, to stderr.
    pub fn new<B, A>(before: B, after: A) -> Self
    where
        B: IntoIterator,
        B::Item: Into<String>,
        A: IntoIterator,
        A::Item: Into<String>,
    {
        PassPrinting {
            before: before.into_iter().map(Into::into).collect(),
            after: after.into_iter().map(Into::into).collect(),
            sink: Sink::default(),
        }
    }

    /// The same, printing to `sink`.
    pub fn to(mut self, sink: Sink) -> Self {
        self.sink = sink;
        self
    }
}

#[crate::pass_instrument]
impl PassPrinting {
    fn run_before_pass(&self, module: &dyn ModuleView, info: &PassInfo) -> Result<()> {
        if self.before.contains(info.name.as_ref()) {
            dump(&self.sink, "Before", info, module)?;
        }
        Ok(())
    }
    fn run_after_pass(&self, module: &dyn ModuleView, info: &PassInfo) -> Result<()> {
        if self.after.contains(info.name.as_ref()) {
            dump(&self.sink, "After", info, module)?;
        }
        Ok(())
    }
}
