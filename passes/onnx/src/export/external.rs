//! External data: large initializers moved out of the model into one data file beside it, as
//! ONNX's `save_model(..., save_as_external_data=True)` writes them.

use bytes::Bytes;
use prost::Message as _;

use crate::proto::tensor_proto::DataLocation;
use crate::proto::{ModelProto, StringStringEntryProto};

/// The size protobuf cannot encode a message beyond (2 GiB); a model whose encoding would
/// reach it must keep its large tensors outside.
pub const PROTOBUF_LIMIT: usize = (1 << 31) - 1;

/// ONNX's default threshold: tensors of at least this many bytes go outside.
pub const DEFAULT_THRESHOLD: u64 = 1024;

/// Tensors of at least this many bytes start at a multiple of [`PAGE`] in the data file, so a
/// reader can map them (ONNX Runtime maps page-aligned external data instead of copying it).
const PAGE: usize = 4096;

/// Zeros that pad the data file to a tensor's alignment.
static ZEROS: [u8; PAGE] = [0; PAGE];

/// Moves the raw data of every initializer of at least `threshold` bytes into one data file,
/// which the model then names as `location` (a file beside the model), and returns the
/// file's bytes as pieces to write one after another: the tensors' own bytes (views, not
/// copies: weights mapped from a file are copied to the new one by the kernel when written)
/// and the padding between them. Tensors stay in the order the graph lists them; each tensor
/// of a page or more starts on a page boundary.
pub fn move_to_external(model: &mut ModelProto, location: &str, threshold: u64) -> Vec<Bytes> {
    let mut pieces = Vec::new();
    let mut len = 0usize;
    let Some(graph) = model.graph.as_mut() else {
        return pieces;
    };
    for t in &mut graph.initializer {
        let Some(raw) = t.raw_data.as_ref() else {
            continue;
        };
        if (raw.len() as u64) < threshold.max(1) {
            continue;
        }
        let align = if raw.len() >= PAGE { PAGE } else { 16 };
        let pad = len.next_multiple_of(align) - len;
        if pad > 0 {
            pieces.push(Bytes::from_static(&ZEROS[..pad]));
            len += pad;
        }
        let offset = len;
        len += raw.len();
        let entry = |k: &str, v: String| StringStringEntryProto {
            key: Some(k.into()),
            value: Some(v),
        };
        t.external_data = vec![
            entry("location", location.into()),
            entry("offset", offset.to_string()),
            entry("length", raw.len().to_string()),
        ];
        t.data_location = Some(DataLocation::External as i32);
        pieces.extend(t.raw_data.take());
    }
    pieces
}

/// Whether the model's encoding reaches protobuf's limit (it must have external data).
pub fn exceeds_protobuf_limit(model: &ModelProto) -> bool {
    model.encoded_len() >= PROTOBUF_LIMIT
}
