//! [`PrintIr`]: the `PrintIR` pass, which prints the module and returns it unchanged.

use super::{ModulePass, PassInfo, PassKind};
use crate::instrument::Sink;
use crate::{IrModule, PassContext, Result};

static PRINT_IR_INFO: PassInfo = PassInfo::new_static(
    "PrintIR",
    0,
    PassKind::Module,
    &[],
    "Prints the module (to stderr unless told otherwise) and returns it unchanged.",
);

/// The `PrintIR` pass (module pass, opt_level 0): prints the module with a header and returns
/// it unchanged. It works for every IR; an IR's pass library registers it by name.
///
/// ```
/// use irpass::doc_toy::Toy;
/// use irpass::{Pass, PrintIr, instrument::Sink};
/// let (sink, out) = Sink::buffer();
/// let module = Pass::module(PrintIr::to(sink)).run(Toy::with_main()).unwrap();
/// assert_eq!(out.contents(), "PrintIR:\nmain = []\n");
/// # let _ = module;
/// ```
#[derive(Clone, Debug, Default)]
pub struct PrintIr {
    sink: Sink,
}

impl PrintIr {
    /// Prints to stderr.
    pub fn new() -> Self {
        Self::default()
    }

    /// Prints to `sink`.
    pub fn to(sink: Sink) -> Self {
        PrintIr { sink }
    }
}

impl<M: IrModule> ModulePass<M> for PrintIr {
    fn info(&self) -> &PassInfo {
        &PRINT_IR_INFO
    }

    fn transform_module(&self, module: M, _ctx: &PassContext) -> Result<M> {
        let mut text = format!("PrintIR:\n{module}");
        if !text.ends_with('\n') {
            text.push('\n');
        }
        self.sink.write_str(&text)?;
        Ok(module)
    }
}
