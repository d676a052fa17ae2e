//! The hooks of an instrument, as `#[pass_instrument]` knows them.

/// One hook: its name, its parameters after `self` (name, type as the trait writes it) and
/// what it returns (besides `Result` of it).
pub struct Hook {
    pub name: &'static str,
    pub params: &'static [(&'static str, &'static str)],
    pub returns: &'static str,
}

const MODULE_INFO: &[(&str, &str)] = &[("module", "&dyn ModuleView"), ("info", "&PassInfo")];

/// Every hook, in the order a pass sees them.
pub const HOOKS: &[Hook] = &[
    Hook {
        name: "enter_pass_ctx",
        params: &[],
        returns: "()",
    },
    Hook {
        name: "exit_pass_ctx",
        params: &[],
        returns: "()",
    },
    Hook {
        name: "should_run",
        params: MODULE_INFO,
        returns: "bool",
    },
    Hook {
        name: "run_before_pass",
        params: MODULE_INFO,
        returns: "()",
    },
    Hook {
        name: "run_after_pass",
        params: MODULE_INFO,
        returns: "()",
    },
    Hook {
        name: "run_after_pass_failed",
        params: &[
            ("module", "&dyn ModuleView"),
            ("info", "&PassInfo"),
            ("error", "&(dyn Error + 'static)"),
        ],
        returns: "()",
    },
    Hook {
        name: "run_skipped_pass",
        params: &[
            ("module", "&dyn ModuleView"),
            ("info", "&PassInfo"),
            ("reason", "&SkipReason"),
        ],
        returns: "()",
    },
    Hook {
        name: "on_analysis",
        params: &[("event", "&AnalysisEvent<'_>")],
        returns: "()",
    },
];

impl Hook {
    /// The signature to write, for messages.
    pub fn signature(&self) -> String {
        let params: String = self
            .params
            .iter()
            .map(|(n, t)| format!(", {n}: {t}"))
            .collect();
        let ret = if self.returns == "()" {
            String::new()
        } else {
            format!(" -> {}", self.returns)
        };
        format!("fn {}(&self{params}){ret}", self.name)
    }
}
