//! [`DumpIr`]: writes the module after every pass to a numbered file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Sink;
use crate::{ModuleView, PassInfo, Result};

/// Writes the module after every pass that runs to `dir/NNN_Name.ir` (`000_FoldConstant.ir`,
/// ...), numbered in run order, with the pass name reduced to `[A-Za-z0-9_.-]`. The directory is
/// created when the context is entered (failing that is an error: nothing could be dumped). A
/// file that cannot be written is a warning on stderr, counted ([`DumpIr::failed_writes`]),
/// and the run goes on, as TVM's dump does: a debugging aid never stops the compilation.
#[derive(Debug)]
pub struct DumpIr {
    dir: PathBuf,
    counter: AtomicUsize,
    failed: AtomicUsize,
    warnings: Sink,
}

impl DumpIr {
    /// Dumps into `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        DumpIr {
            dir: dir.into(),
            counter: AtomicUsize::new(0),
            failed: AtomicUsize::new(0),
            warnings: Sink::stderr(),
        }
    }

    /// Sends the warnings about files that could not be written to `sink` (default stderr).
    pub fn warnings_to(mut self, sink: Sink) -> Self {
        self.warnings = sink;
        self
    }

    /// How many dump files could not be written so far.
    pub fn failed_writes(&self) -> usize {
        self.failed.load(Ordering::Relaxed)
    }

    /// The directory it writes to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// `name` with every character outside `[A-Za-z0-9_.-]` replaced by `_`.
fn sanitise(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "_".to_string()
    } else {
        cleaned
    }
}

#[crate::pass_instrument]
impl DumpIr {
    fn enter_pass_ctx(&self) -> Result<()> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create dump directory `{}`: {e}", self.dir.display()))?;
        Ok(())
    }

    fn run_after_pass(&self, module: &dyn ModuleView, info: &PassInfo) {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!("{n:03}_{}.ir", sanitise(&info.name)));
        if let Err(e) = std::fs::write(&path, module.to_string()) {
            self.failed.fetch_add(1, Ordering::Relaxed);
            let _ = self.warnings.write_str(&format!(
                "warning: DumpIr: cannot write `{}`: {e}; going on\n",
                path.display()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sanitise;

    #[test]
    fn dump_names_are_sanitised_to_portable_file_names() {
        assert_eq!(sanitise("FoldConstant"), "FoldConstant");
        assert_eq!(sanitise("my seq/../x{a=1}"), "my_seq_.._x_a_1_");
        assert_eq!(sanitise(""), "_");
    }
}
