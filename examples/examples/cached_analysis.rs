//! A function analysis on the reference IR, cached by the pass context: two passes ask for
//! the operator count of every function; only the function a pass in between changed is
//! counted again. `DebugPassManager` shows each decision.
//!
//! Run: `cargo run -p irpass-examples --example cached_analysis`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use irpass::analysis::{Analysis, FunctionAnalysis};
use irpass::instrument::{DebugPassManager, Sink};
use irpass::{IrModule, PassContext, Sequential, function_pass, module_pass};
use irpass_passes::ir::body::post_order;
use irpass_passes::ir::{Attrs, Function, Module};

/// How many times `OpCount` was computed (for the assertion below).
static COMPUTED: AtomicUsize = AtomicUsize::new(0);

/// The number of operator calls in a function.
struct OpCount;

impl Analysis for OpCount {
    const NAME: &'static str = "OpCount";
}

impl FunctionAnalysis<Module> for OpCount {
    type Output = usize;
    fn compute(&self, func: &Function, _module: &Module, _ctx: &PassContext) -> usize {
        COMPUTED.fetch_add(1, Ordering::Relaxed);
        let body = &func.code.body;
        post_order(body, func.code.root)
            .into_iter()
            .filter(|&e| body.op_call(e).is_some())
            .count()
    }
}

/// Reads the operator count of every function (a pass that would use it to decide).
#[function_pass(opt_level = 0)]
fn report_size(func: Function, module: &Module, ctx: &PassContext) -> Function {
    let count: Arc<usize> = ctx.function_analysis(&OpCount, &func, module);
    assert!(*count > 0);
    func
}

/// Wraps `@small`'s result in `negative`: changes that one function only; `@big` stays the
/// very same value, and so keeps its cached results.
#[module_pass(opt_level = 0)]
fn negate_small(mut module: Module) -> irpass::Result<Module> {
    let small = module.get("small").ok_or("no @small")?.clone();
    let negated = small.wrap_result(|b, result| b.op("negative", &[result], Attrs::new()))?;
    module.replace_function("small", negated);
    Ok(module)
}

fn main() {
    let module = Module::parse(
        "def @big(%x: Tensor[(4), float32]) { %0 = exp(%x); %1 = log(%0); multiply(%1, %1) }
         def @small(%a: float32) { add(%a, %a) }",
    )
    .unwrap();
    let (sink, log) = Sink::buffer();
    let ctx = PassContext::builder()
        .instrument(DebugPassManager::new().to(sink))
        .threads(1)
        .build()
        .unwrap();
    let pipeline = Sequential::named(
        "example",
        [ReportSize.into(), NegateSmall.into(), ReportSize.into()],
    )
    .unwrap();
    pipeline.run_in(module, &ctx).unwrap();
    print!("{}", log.contents());
    // Both functions once, then only the changed `@small` again.
    assert_eq!(COMPUTED.load(Ordering::Relaxed), 3);
    let log = log.contents();
    assert!(log.contains("Invalidating analysis: OpCount (1 results, after NegateSmall)"));
    assert!(log.contains("Cached analysis: OpCount (on a function)"));
}
