//! A pipeline from text: names from the registry, a nested Sequential, options decoded into a
//! parameterised pass; printed back, and run on the MobileNet block.
//!
//! Run: `cargo run -p irpass-examples --example pipeline_from_text`

use irpass::PassContext;
use irpass_passes as _;
use irpass_passes::ir::Module;

fn main() {
    let text = "SimplifyInference, cleanup(FoldConstant, EliminateCommonSubexpr, DeadCodeElimination), ConvertLayout{layout=NHWC}, FuseOps";
    let spec = irpass::pipeline::parse(text).unwrap();
    println!("pipeline: {spec}");
    let pipeline = spec.build::<Module>().unwrap();

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/models/mobilenet_block.relay");
    let module = Module::parse_named(path, &std::fs::read_to_string(path).unwrap()).unwrap();
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    let out = pipeline.run_in(module.clone(), &ctx).unwrap();
    let printed = out.to_string();
    println!("{printed}");
    assert!(!printed.contains("nn.batch_norm"));
    assert!(printed.contains("data_layout=\"NHWC\""));
    assert!(printed.contains("Primitive=1"));
    out.infer_types().unwrap();

    // Mistakes are reported with their column, and unknown names with suggestions.
    let err = irpass::pipeline::parse("FoldConstant,,DeadCodeElimination").unwrap_err();
    println!("{err}");
    assert_eq!(err.column, 14);
    let err = irpass::pipeline::parse("FoldConstants")
        .unwrap()
        .build::<Module>()
        .unwrap_err();
    println!("{err}");
    assert!(err.to_string().contains("FoldConstant"));
}
