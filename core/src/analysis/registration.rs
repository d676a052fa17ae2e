//! Registered analyses: what `#[function_analysis]` and `#[module_analysis]` submit, so that
//! tools can list them ([`registered`]).

use std::fmt;

use crate::IrModule;
use crate::location::Location;

/// Whether an analysis is computed from a function or from a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnalysisKind {
    /// A [`FunctionAnalysis`](super::FunctionAnalysis).
    Function,
    /// A [`ModuleAnalysis`](super::ModuleAnalysis).
    Module,
}

impl fmt::Display for AnalysisKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AnalysisKind::Function => "function analysis",
            AnalysisKind::Module => "module analysis",
        })
    }
}

/// One registered analysis.
pub struct AnalysisRegistration {
    /// Its name ([`Analysis::NAME`](super::Analysis::NAME)).
    pub name: &'static str,
    /// What it computes (its doc comment).
    pub description: &'static str,
    /// Function or module analysis.
    pub kind: AnalysisKind,
    /// The name of the IR it is for.
    pub ir_name: fn() -> &'static str,
    /// Where it is defined.
    pub location: Location,
}

impl AnalysisRegistration {
    /// The registration of an analysis for IR `M` (what the macros submit).
    pub const fn new<M: IrModule>(
        name: &'static str,
        description: &'static str,
        kind: AnalysisKind,
        location: Location,
    ) -> Self {
        AnalysisRegistration {
            name,
            description,
            kind,
            ir_name: M::ir_name,
            location,
        }
    }
}

impl fmt::Debug for AnalysisRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnalysisRegistration")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("location", &self.location)
            .finish()
    }
}

inventory::collect!(AnalysisRegistration);

/// Every registered analysis, sorted by name (a crate's registrations exist only when the
/// program links it, as for passes).
pub fn registered() -> Vec<&'static AnalysisRegistration> {
    let mut list: Vec<_> = inventory::iter::<AnalysisRegistration>().collect();
    list.sort_by_key(|r| r.name);
    list
}
