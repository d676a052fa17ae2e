//! Parsing and printing a generated model of 100 000 bindings and a weight-heavy one
//! (`models::conv_chain`), and the parser's peak memory
//! per binding (the growth of the process's peak resident set while parsing, from
//! `/proc/self/status`; printed before the timings).
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use criterion::{Criterion, criterion_group};
use irpass_ir::Module;

/// A field of `/proc/self/status` in bytes (Linux; `None` elsewhere).
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A chain of `n` graph bindings over (1, 8) tensors: adds, multiplies, activations, a bias
/// constant every so often.
fn model(n: usize) -> String {
    let mut text = String::with_capacity(n * 40);
    text.push_str("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 8), float32], %w: Tensor[(8, 8), float32]) -> Tensor[(1, 8), float32] {\n");
    text.push_str("  %0 = add(%x, %x);\n");
    for i in 1..n {
        let p = i - 1;
        match i % 5 {
            0 => text.push_str(&format!("  %{i} = nn.dense(%{p}, %w, units=8);\n")),
            1 => text.push_str(&format!("  %{i} = add(%{p}, %x);\n")),
            2 => text.push_str(&format!("  %{i} = multiply(%{p}, 0.5f);\n")),
            3 => text.push_str(&format!("  %{i} = nn.relu(%{p});\n")),
            _ => text.push_str(&format!("  %{i} = tanh(%{p});\n")),
        }
    }
    text.push_str(&format!("  %{}\n}}\n", n - 1));
    text
}

const N: usize = 100_000;

fn bench(c: &mut Criterion) {
    let text = model(N);
    let module = Module::parse(&text).unwrap();
    let mut g = c.benchmark_group("ir_text_100k_bindings");
    g.sample_size(10);
    g.bench_function("parse", |b| b.iter(|| Module::parse(&text).unwrap()));
    g.bench_function("print", |b| b.iter(|| module.to_string()));
    g.bench_function("parse_and_infer_types", |b| {
        b.iter(|| Module::parse(&text).unwrap().infer_types().unwrap())
    });
    g.finish();

    // Type inference from scratch (what verification runs).
    let mut g = c.benchmark_group("types_100k_bindings");
    g.sample_size(10);
    g.bench_function("check_types", |b| b.iter(|| module.check_types().unwrap()));
    let mlp = irpass_ir::models::mlp_chain(N / 7);
    g.bench_function("check_types_mlp_chain", |b| {
        b.iter(|| mlp.check_types().unwrap())
    });
    g.finish();

    // Weights: `conv_chain(1 000)`'s text is mostly tensor literals (212 000 float32
    // elements in 3.1 MB), which is what printing and parsing a model's constants costs.
    let module = irpass_ir::models::conv_chain(1000);
    let text = module.to_string();
    let mut g = c.benchmark_group("ir_text_conv_chain_1000");
    g.sample_size(10);
    g.bench_function("parse", |b| b.iter(|| Module::parse(&text).unwrap()));
    g.bench_function("print", |b| b.iter(|| module.to_string()));
    g.finish();

    // The MLP chain of 100 000 bindings (constants included), as the redesign's target says.
    let module = irpass_ir::models::mlp_chain(N / 7);
    let text = module.to_string();
    let mut g = c.benchmark_group("ir_text_mlp_chain_100k_bindings");
    g.sample_size(10);
    g.bench_function("parse", |b| b.iter(|| Module::parse(&text).unwrap()));
    g.bench_function("print", |b| b.iter(|| module.to_string()));
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    let text = model(N);
    let base = status_bytes("VmRSS:");
    let module = Module::parse(&text).unwrap();
    let peak = status_bytes("VmHWM:");
    let after = status_bytes("VmRSS:");
    match (base, peak, after) {
        (Some(base), Some(peak), Some(after)) => println!(
            "memory: parsing {N} bindings ({} bytes of text): peak {:.0} bytes/binding above the text, module kept {:.0} bytes/binding",
            text.len(),
            peak.saturating_sub(base) as f64 / N as f64,
            after.saturating_sub(base) as f64 / N as f64
        ),
        _ => println!("memory: /proc/self/status is not available here"),
    }
    drop(module);
    benches();
    Criterion::default().configure_from_args().final_summary();
}
