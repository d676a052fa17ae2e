//! A custom instrument with `#[pass_instrument]`: it records, for each pass that runs, how many
//! distinct expression nodes `@main` has before and after. Its hooks take `&mut self`, so it is
//! used through `Locked`. The pipeline is `O3` from the pass library, on the ResNet block.
//!
//! Run: `cargo run -p irpass-examples --example custom_instrument`

use irpass::instrument::Locked;
use irpass::{ModuleView, PassContext, PassInfo, pass_instrument, registry};
use irpass_passes as _;
use irpass_passes::ir::Module;
use irpass_passes::ir::body::post_order;

fn main_nodes(m: &dyn ModuleView) -> usize {
    m.downcast_ref::<Module>()
        .and_then(|m| m.get("main"))
        .map_or(0, |f| post_order(&f.code.body, f.code.root).len())
}

/// Node counts around every pass.
#[derive(Default)]
struct NodeCounts {
    open: Vec<usize>,
    rows: Vec<(String, usize, usize)>,
}

#[pass_instrument]
impl NodeCounts {
    fn run_before_pass(&mut self, module: &dyn ModuleView, _info: &PassInfo) {
        self.open.push(main_nodes(module));
    }
    fn run_after_pass(&mut self, module: &dyn ModuleView, info: &PassInfo) {
        let before = self.open.pop().unwrap_or(0);
        self.rows
            .push((info.name.to_string(), before, main_nodes(module)));
    }
}

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/models/resnet_block.relay");
    let module = Module::parse_named(path, &std::fs::read_to_string(path).unwrap()).unwrap();
    let ctx = PassContext::builder()
        .opt_level(3)
        .instrument(Locked::new(NodeCounts::default()))
        .build()
        .unwrap();
    let o3 = registry::lookup::<Module>("O3").unwrap();
    let out = ctx.scope(|| o3.run(module)).unwrap().unwrap();
    let counts = ctx.instrument::<Locked<NodeCounts>>().unwrap();
    let counts = counts.lock();
    println!("{:<24} {:>7} {:>7}", "pass", "before", "after");
    for (name, before, after) in &counts.rows {
        println!("{name:<24} {before:>7} {after:>7}");
    }
    // SimplifyInference trades each batch norm for elementwise arithmetic (more nodes here:
    // the parameters are inputs, so FoldConstant has nothing to fold).
    let (_, before, after) = counts
        .rows
        .iter()
        .find(|(n, ..)| n == "SimplifyInference")
        .unwrap();
    assert!(after > before);
    assert!(!out.to_string().contains("nn.batch_norm"));
}
