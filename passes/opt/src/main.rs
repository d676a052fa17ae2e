//! `irpass-opt`, the opt-style driver of irpass's pass library: reads the reference IR's text or an ONNX model, runs `-O0..-O3` or a textual
//! pipeline, writes the result (text, Graphviz, or ONNX with `-o x.onnx` / `--emit=onnx`).
//! With no input file it optimises a built-in model (the MLP of `examples/models/mlp.relay`)
//! and says so. `irpass-opt --help` lists the flags.

use std::process::ExitCode;

use irpass::driver::{Driver, Format};
use irpass_ir::Module;
use irpass_passes as _;

/// ONNX: a file named `.onnx`, or input that is not text, is read as a model; `-o x.onnx` or
/// `--emit=onnx` writes one.
#[cfg(feature = "onnx")]
const FORMATS: &[Format<Module>] = &[Format {
    name: "onnx",
    extension: "onnx",
    detect: |path, bytes| {
        path.is_some_and(|p| p.extension().is_some_and(|e| e == "onnx"))
            || std::str::from_utf8(bytes).is_err()
    },
    read: |_, path, bytes, read| {
        let options = irpass_onnx::ImportOptions {
            input_shapes: read.input_shapes.clone(),
            input_shapes_name: None,
        };
        let imported = irpass_onnx::import_bytes_from(bytes, path, &options)?;
        if !imported.opaque.is_empty() {
            let kept: Vec<String> = imported
                .opaque
                .iter()
                .map(|(op, n)| format!("{op} ×{n}"))
                .collect();
            if read.strict {
                return Err(format!(
                    "`--strict`: the model has operators irpass does not convert: {}",
                    kept.join(", ")
                )
                .into());
            }
            eprintln!(
                "irpass-opt: kept opaque (not converted; written back as they came): {}",
                kept.join(", ")
            );
        }
        Ok(imported.module)
    },
    write: |m, options| {
        let export = irpass_onnx::ExportOptions {
            opset: options.version,
            ..irpass_onnx::ExportOptions::default()
        };
        let model = irpass_onnx::export_module(m, None, &export)?;
        let file_name = options.output_file_name();
        let files = irpass_onnx::model_files(model, file_name.as_deref(), options.external_data)?;
        Ok(irpass::driver::Written {
            pieces: files.model.into_iter().map(|b| Box::new(b) as _).collect(),
            beside: files
                .data
                .into_iter()
                .map(|(name, pieces)| {
                    (name, pieces.into_iter().map(|b| Box::new(b) as _).collect())
                })
                .collect(),
        })
    },
    // Every flag of a model format means something to ONNX.
    flags: &irpass::driver::FormatFlag::ALL,
}];

#[cfg(not(feature = "onnx"))]
const FORMATS: &[Format<Module>] = &[];

/// `--list-ops`: every operator of the reference IR, its arity, fusion pattern and description.
fn operators() -> String {
    irpass_ir::Op::all()
        .into_iter()
        .map(|op| {
            let def = op.def();
            format!(
                "{:<28} {:<10} {:<18} {}\n",
                op.name(),
                def.arity.to_string(),
                format!("{:?}", def.pattern),
                def.description.trim()
            )
        })
        .collect()
}

/// `--check N`: `@main` before and after, on N random input sets, within NumPy's
/// `allclose(rtol=1e-3, atol=1e-4)`.
fn check(before: &Module, after: &Module, n: usize) -> Result<String, irpass::BoxError> {
    let tolerance = irpass_ir::eval::Tolerance::default();
    let report = irpass_ir::eval::check_equivalent(before, after, "main", n, tolerance)?;
    Ok(report.to_string())
}

fn main() -> ExitCode {
    Driver::<Module> {
        name: "irpass-opt",
        about: "irpass-opt: optimises tensor programs (the Relay-style reference IR's text, or ONNX models) with irpass's pass library, as LLVM's opt does",
        operators: Some(operators),
        parse: |source, text| Module::parse_named(source, text).map_err(Into::into),
        print: |m| m.to_string(),
        default_input: Some((
            "mlp.relay",
            // A copy of `examples/models/mlp.relay` inside the crate, so the published package has it
            // (`passes/tests/cli.rs` checks that the two stay the same).
            include_str!("mlp.relay"),
        )),
        dot: Some(irpass_ir::module_dot),
        version: Some(env!("CARGO_PKG_VERSION")),
        formats: FORMATS,
        check: Some(check),
    }
    .main()
}
