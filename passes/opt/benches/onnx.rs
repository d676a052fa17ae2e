//! ONNX in and out: import, `-O3` and export of ONNX's light models, in process (the whole
//! `irpass-opt` process, beside onnx-simplifier's whole job and a file copy, is timed by
//! `passes/onnx/tests/ort/run.sh`). Run with `cargo bench -p irpass-opt --bench onnx`.
#![allow(missing_docs)] // criterion_group!/criterion_main! generate undocumented items

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use irpass::PassContext;
use irpass_onnx::{ExportOptions, ImportOptions, encode_model, export_module, import_bytes};
use irpass_passes::ir::Module;

fn light(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../onnx/tests/data/light/light_{name}.onnx"));
    std::fs::read(p).unwrap()
}

fn onnx(c: &mut Criterion) {
    let o3 = irpass::registry::lookup::<Module>("O3").unwrap();
    let ctx = PassContext::builder().opt_level(3).build().unwrap();
    let mut g = c.benchmark_group("onnx_import_o3_export");
    g.sample_size(20);
    for name in ["squeezenet", "resnet50", "densenet121", "inception_v2"] {
        let bytes = light(name);
        g.bench_with_input(BenchmarkId::from_parameter(name), &bytes, |b, bytes| {
            b.iter(|| {
                let m = import_bytes(bytes, &ImportOptions::default())
                    .unwrap()
                    .module;
                let out = o3.run_in(m, &ctx).unwrap();
                let model = export_module(&out, None, &ExportOptions::default()).unwrap();
                black_box(encode_model(&model))
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("onnx_import");
    for name in ["resnet50", "densenet121"] {
        let bytes = light(name);
        g.bench_with_input(BenchmarkId::from_parameter(name), &bytes, |b, bytes| {
            b.iter(|| black_box(import_bytes(bytes, &ImportOptions::default()).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, onnx);
criterion_main!(benches);
