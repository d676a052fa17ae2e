//! The passes, config keys and instrument the tests find by name, defined with the macros.

use std::sync::Arc;

use irpass::doc_toy::Toy;
use irpass::{
    ConfigKey, PassContext, function_pass, module_pass, pass_config_option, pass_instrument,
};
use serde::{Deserialize, Serialize};

use crate::tiny::{Func, Tiny};

fn append(f: &Func, value: i64) -> Arc<Func> {
    let mut body = f.body.clone();
    body.push(value);
    Arc::new(Func { body, skip: f.skip })
}

/// Looks at the module.
#[module_pass(opt_level = 0)]
pub fn analyze(module: Tiny) -> Tiny {
    module
}

/// Appends 100 to every function.
///
/// A second paragraph.
#[function_pass(opt_level = 0, required = [Analyze])]
pub fn canon(func: Arc<Func>, _module: &Tiny) -> Arc<Func> {
    append(&func, 100)
}

/// Needs Canon.
#[module_pass(opt_level = 1, required = [Canon])]
pub fn needs_canon(module: Tiny, _ctx: &PassContext) -> irpass::Result<Tiny> {
    Ok(module)
}

/// Half a cycle.
#[module_pass(opt_level = 0, required = [CycleB])]
pub fn cycle_a(module: Tiny) -> Tiny {
    module
}

/// The other half.
#[module_pass(opt_level = 0, required = ["CycleA"])]
pub fn cycle_b(module: Tiny) -> Tiny {
    module
}

/// Panics (to test how drivers report a panicking pass).
#[module_pass(opt_level = 0)]
pub fn explode(_module: Tiny) -> Tiny {
    panic!("Explode always panics")
}

/// Appends 4 to every function: an experimental pass, above every `-O` level.
#[function_pass(opt_level = 4)]
pub fn experimental(func: Arc<Func>, _module: &Tiny) -> Arc<Func> {
    append(&func, 4)
}

/// Appends -1 to every function: breaks the module (`Tiny::verify` refuses negative values).
#[function_pass(opt_level = 0)]
pub fn corrupt(func: Arc<Func>, _module: &Tiny) -> Arc<Func> {
    append(&func, -1)
}

/// Drops the last value of every function longer than one, and leaves the others as they are:
/// run to a fixpoint, it leaves one value per function.
#[function_pass(opt_level = 0)]
pub fn shrink(func: Arc<Func>, _module: &Tiny) -> Arc<Func> {
    if func.body.len() <= 1 {
        return func;
    }
    let mut body = func.body.clone();
    body.pop();
    Arc::new(Func {
        body,
        skip: func.skip,
    })
}

/// Requires a misspelt pass.
#[module_pass(opt_level = 0, required = ["Analyse"])]
pub fn requires_missing(module: Tiny) -> Tiny {
    module
}

/// `Duplicated`, defined twice on purpose (in two modules, so the Rust items differ).
pub mod duplicated {
    /// The first definition.
    pub mod first {
        use crate::tiny::Tiny;
        /// Twice.
        #[irpass::module_pass(opt_level = 0)]
        pub fn duplicated(module: Tiny) -> Tiny {
            module
        }
    }
    /// The second definition.
    pub mod second {
        use crate::tiny::Tiny;
        /// Twice.
        #[irpass::module_pass(opt_level = 0)]
        pub fn duplicated(module: Tiny) -> Tiny {
            module
        }
    }
}

/// `Shared`, registered for two IRs under one name.
pub mod shared {
    use super::*;
    /// On two IRs.
    #[module_pass(opt_level = 0)]
    pub fn shared(module: Tiny) -> Tiny {
        module
    }
    /// The same name on the doc toy IR.
    pub mod toy {
        use super::*;
        /// On two IRs.
        #[module_pass(opt_level = 0)]
        pub fn shared(module: Toy) -> Toy {
            module
        }
    }
}

/// Appends its `value` (default 1) to every function; built from options.
#[derive(Clone, Debug, Deserialize)]
#[serde(default)]
pub struct Scaled {
    /// The value to append.
    pub value: i64,
}

impl Default for Scaled {
    fn default() -> Self {
        Scaled { value: 1 }
    }
}

/// Appends a value.
#[function_pass(opt_level = 0, default, options)]
impl Scaled {
    fn transform_function(&self, func: Arc<Func>, _module: &Tiny) -> Arc<Func> {
        append(&func, self.value)
    }
}

/// Config of the `tiny.Limit` key. Missing fields take their defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LimitConfig {
    /// An upper bound.
    pub max: u32,
    /// Talk more.
    pub verbose: bool,
}

impl Default for LimitConfig {
    fn default() -> Self {
        LimitConfig {
            max: 10,
            verbose: false,
        }
    }
}

pass_config_option! {
    /// Limits for the tests.
    pub LIMIT: LimitConfig = "tiny.Limit";
    /// A level.
    pub LEVEL: u32 = "tiny.Level";
}

/// `tiny.Unregistered`: a key nobody registered.
pub const UNREGISTERED: ConfigKey<u32> = ConfigKey::new("tiny.Unregistered");

/// A registered instrument that does nothing (to test instrument lookup).
#[derive(Default)]
pub struct Quiet;

/// Does nothing, quietly.
#[pass_instrument(default)]
impl Quiet {}
