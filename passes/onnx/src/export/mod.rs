//! Export: a module's `@main` becomes an ONNX model: parameters the graph's inputs, the result
//! (or each field of a result tuple) its outputs, constants initializers (a constant shared,
//! or repeated bit for bit, is written once), operator calls ONNX nodes in the form the output
//! opset defines. Calls of function literals are inlined; from opset 15 the groups FuseOps
//! made (`Primitive` functions) are then outlined as model-local ONNX functions ([`functions`]).
//! An `if` is ONNX's `If`, and an opaque call's closure arguments its graph attributes, each
//! written as a subgraph ([`subgraph`]).
//! A convolution followed by a constant per-channel bias add becomes `Conv` with its bias
//! input, and a dense layer followed by a constant bias `Gemm` with `C` ([`fuse`]); a constant
//! per-channel scale and shift one `BatchNormalization` ([`batch_norm`]). (A layer
//! normalisation is one `LayerNormalization` from opset 17 when the IR has it as one
//! `nn.layer_norm`: the `FuseLayerNorm` pass of irpass-passes makes it one again.)

mod batch_norm;
mod external;
mod functions;
mod fuse;
mod gelu;
mod graph;
mod native;
mod opaque;
mod ops;
mod pieces;
mod rms_norm;
mod subgraph;
mod view;
mod walk;

use irpass_ir::Module;
use prost::Message as _;

pub use external::{DEFAULT_THRESHOLD, PROTOBUF_LIMIT, move_to_external};
pub use functions::FUNCTION_DOMAIN;
pub use pieces::encode_model_pieces;

use crate::error::{OnnxError, Result};
use crate::import::ModelInfo;
use crate::opset::{self, OPSETS};
use crate::proto::{ModelProto, NodeProto, OperatorSetIdProto};

/// How to export.
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// The default domain's opset version of the written model (default: the imported
    /// model's, or 17).
    pub opset: Option<i64>,
    /// Write FuseOps's groups as model-local functions (from opset 15; below, they are always
    /// inline), so that a model viewer shows the fusion. Off by default: ONNX Runtime inlines
    /// local functions when it loads a model, and yet runs the session it builds from them
    /// 0.3-3 % slower than from the same graph written inline (transformer exports, one
    /// thread; the graphs it optimises to are identical).
    pub local_functions: bool,
}

/// The ONNX IR version that goes with an opset version.
fn ir_version(opset: i64) -> i64 {
    // (IR 4 below opset 9 too: the writer does not list initializers among the inputs, as
    // IR 3 required.)
    match opset {
        ..=9 => 4,
        10 => 5,
        11 => 6,
        12..=14 => 7,
        15..=18 => 8,
        19..=20 => 9,
        21..=22 => 10,
        23 => 11,
        24 => 12,
        25..=27 => 13,
        _ => 14,
    }
}

/// The model computing `module`'s `@main`. The input and output names and the opset are those
/// `info` gives, else those `@main`'s attributes recorded when it was imported
/// ([`ModelInfo::of`]).
///
/// # Errors
/// No `@main`, an opset outside the supported range, or a construct or operator with no ONNX
/// form (a call of another global, an operator irpass does not export).
pub fn export_module(
    module: &Module,
    info: Option<&ModelInfo>,
    options: &ExportOptions,
) -> Result<ModelProto> {
    let recorded = module.get("main").and_then(|f| ModelInfo::of(&f.attrs));
    let info = info.or(recorded.as_ref());
    let opset = options.opset.or(info.map(|i| i.opset)).unwrap_or(17);
    if !OPSETS.contains(&opset) {
        return Err(OnnxError::Export(format!(
            "opset {opset} is not supported: irpass writes opsets {} to {}",
            OPSETS.start(),
            OPSETS.end()
        )));
    }
    let outline = opset >= 15 && options.local_functions;
    let walk::Written {
        mut graph,
        last_dims,
        opaque,
        domains,
        unchecked_broadcast,
    } = walk::graph(module, info, opset, outline)?;
    batch_norm::fuse(&mut graph, &last_dims, &opaque);
    if opset >= gelu::GELU_SINCE {
        gelu::fuse(&mut graph, &opaque);
    }
    fuse::fuse(&mut graph, &opaque);
    // After `fuse`, which makes the product by a reciprocal square root a division.
    if opset >= rms_norm::RMS_NORM_SINCE {
        rms_norm::fuse(&mut graph, &last_dims, &opaque);
        fuse::drop_unused_initializers(&mut graph);
    }
    // Before opset 7: an attribute-broadcasting operator written unchecked that is still there.
    for (out, op) in &unchecked_broadcast {
        if graph.node.iter().any(|n| n.output.contains(out)) {
            return Err(OnnxError::Export(format!(
                "cannot write opset {opset}: the model needs {op} where its version there \
                 (broadcasting only by attribute) cannot be checked to broadcast as needed; \
                 write opset 7 or later"
            )));
        }
    }
    // (The walk marks groups only when they are outlined.)
    let functions = if outline {
        functions::outline(&mut graph, opset)
    } else {
        Vec::new()
    };
    // Each operator written must exist at the opset (`Mod` is not in opset 9), and outside the
    // opsets the writer implements be one whose version there differs from an implemented
    // one only in types.
    // (An opaque node is written as it came, at its own opset, subgraphs included.)
    let converted =
        |n: &&NodeProto| matches!(n.domain(), "" | "ai.onnx") && !opaque.contains(n.name());
    let mut nodes: Vec<&NodeProto> = graph
        .node
        .iter()
        .chain(functions.iter().flat_map(|f| &f.node))
        .filter(converted)
        .collect();
    // The nodes of the `If` branches written, at any depth.
    let mut k = 0;
    while k < nodes.len() {
        if nodes[k].op_type() == "If" {
            let inner = nodes[k].attribute.iter().filter_map(|a| a.g.as_ref());
            nodes.extend(inner.flat_map(|b| &b.node).filter(converted));
        }
        k += 1;
    }
    // (A native operator's node is checked where it is written.)
    let native = |n: &&&NodeProto| {
        crate::native::get(n.domain(), n.op_type()).is_some_and(|d| d.implements(opset))
    };
    for n in nodes.iter().filter(|n| !native(n)) {
        opset::check(n.op_type(), opset)
            .map_err(|why| OnnxError::Export(format!("cannot write opset {opset}: {why}")))?;
    }
    let mut opset_import = vec![OperatorSetIdProto {
        domain: Some(String::new()),
        version: Some(opset),
    }];
    opset_import.extend(
        domains
            .into_iter()
            .map(|(domain, version)| OperatorSetIdProto {
                domain: Some(domain),
                version: Some(version),
            }),
    );
    if !functions.is_empty() {
        opset_import.push(OperatorSetIdProto {
            domain: Some(FUNCTION_DOMAIN.into()),
            version: Some(1),
        });
    }
    Ok(ModelProto {
        ir_version: Some(ir_version(opset)),
        opset_import,
        functions,
        producer_name: Some("irpass".into()),
        producer_version: Some(env!("CARGO_PKG_VERSION").into()),
        graph: Some(graph),
        ..ModelProto::default()
    })
}

/// The model's protobuf bytes.
pub fn encode_model(model: &ModelProto) -> Vec<u8> {
    model.encode_to_vec()
}

/// A model as files: the model's bytes and, when it has external data, the data file's name
/// (beside the model) and bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelFiles {
    /// The model file's bytes, as pieces to write one after another ([`encode_model_pieces`]:
    /// the weights are not copied into one buffer).
    pub model: Vec<bytes::Bytes>,
    /// The external data file: its name, relative to the model's folder, and its bytes as
    /// pieces to write one after another ([`move_to_external`]).
    pub data: Option<(String, Vec<bytes::Bytes>)>,
}

/// Encodes `model` to be saved as `file_name`: initializers of at least `external_threshold`
/// bytes go to the data file `FILE_NAME.data` ([`DEFAULT_THRESHOLD`] is ONNX's choice), and
/// a model that protobuf could not encode in one message (2 GiB) gets external data with
/// the default threshold whether asked or not.
///
/// # Errors
/// External data is needed (asked for, or the model is too large) but there is no file name
/// to put it beside (the model goes to a stream).
pub fn model_files(
    mut model: ModelProto,
    file_name: Option<&str>,
    external_threshold: Option<u64>,
) -> Result<ModelFiles> {
    let threshold = match external_threshold {
        Some(t) => Some(t),
        None if external::exceeds_protobuf_limit(&model) => Some(DEFAULT_THRESHOLD),
        None => None,
    };
    let Some(threshold) = threshold else {
        return Ok(ModelFiles {
            model: encode_model_pieces(model),
            data: None,
        });
    };
    let Some(file_name) = file_name else {
        return Err(OnnxError::Export(if external_threshold.is_some() {
            "external data goes into a file beside the model, so the model must be written to \
             a file, not a stream"
                .into()
        } else {
            "the model is over protobuf's 2 GiB limit, so its tensors go into a file beside it: \
             write it to a file, not a stream"
                .into()
        }));
    };
    let location = format!("{file_name}.data");
    let data = move_to_external(&mut model, &location, threshold);
    if external::exceeds_protobuf_limit(&model) {
        return Err(OnnxError::Export(
            "the model is over protobuf's 2 GiB limit even with its tensors in external data"
                .into(),
        ));
    }
    Ok(ModelFiles {
        model: encode_model_pieces(model),
        data: (!data.is_empty()).then_some((location, data)),
    })
}
