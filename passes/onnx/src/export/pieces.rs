//! A model's encoding as pieces, so that writing it copies no weight: the initializers' raw
//! data (views of the tensors, see [`crate::tensor::proto_of_shared`]) are pieces of their
//! own, and everything around them is encoded into small buffers.
//!
//! The pieces are the protobuf encoding of the same message, with the graph written after the
//! model's other fields and the initializers after the graph's other fields (protobuf readers
//! take fields in any order).

use bytes::Bytes;
use prost::Message as _;
use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint, key_len};

use crate::proto::{GraphProto, ModelProto, TensorProto};

/// The field numbers written by hand (`onnx.proto`).
const MODEL_GRAPH: u32 = 7;
const GRAPH_INITIALIZER: u32 = 5;
const TENSOR_RAW_DATA: u32 = 9;

/// The encoding of `model`, as pieces to be written one after another.
pub fn encode_model_pieces(mut model: ModelProto) -> Vec<Bytes> {
    let Some(mut graph) = model.graph.take() else {
        return vec![Bytes::from(model.encode_to_vec())];
    };
    let mut out = Pieces::default();
    model.encode(&mut out.buf).expect("a Vec grows");
    let initializers = std::mem::take(&mut graph.initializer);
    let tensors: Vec<(Vec<u8>, Option<Bytes>)> = initializers
        .into_iter()
        .map(|mut t: TensorProto| {
            let raw = t.raw_data.take();
            (t.encode_to_vec(), raw)
        })
        .collect();
    let tensor_len = |(meta, raw): &(Vec<u8>, Option<Bytes>)| {
        meta.len()
            + raw.as_ref().map_or(0, |r| {
                key_len(TENSOR_RAW_DATA) + encoded_len_varint(r.len() as u64) + r.len()
            })
    };
    let graph_len = graph.encoded_len()
        + tensors
            .iter()
            .map(|t| {
                let n = tensor_len(t);
                key_len(GRAPH_INITIALIZER) + encoded_len_varint(n as u64) + n
            })
            .sum::<usize>();
    encode_key(MODEL_GRAPH, WireType::LengthDelimited, &mut out.buf);
    encode_varint(graph_len as u64, &mut out.buf);
    GraphProto::encode(&graph, &mut out.buf).expect("a Vec grows");
    for t in &tensors {
        encode_key(GRAPH_INITIALIZER, WireType::LengthDelimited, &mut out.buf);
        encode_varint(tensor_len(t) as u64, &mut out.buf);
        out.buf.extend_from_slice(&t.0);
        if let Some(raw) = &t.1 {
            encode_key(TENSOR_RAW_DATA, WireType::LengthDelimited, &mut out.buf);
            encode_varint(raw.len() as u64, &mut out.buf);
            out.push(raw.clone());
        }
    }
    out.finish()
}

/// Pieces being gathered: small encodings accumulate in `buf` until a large piece is added.
#[derive(Default)]
struct Pieces {
    list: Vec<Bytes>,
    buf: Vec<u8>,
}

impl Pieces {
    /// Adds `data`: copied into the buffer when small, a piece of its own otherwise.
    fn push(&mut self, data: Bytes) {
        if data.len() < 4096 {
            self.buf.extend_from_slice(&data);
            return;
        }
        if !self.buf.is_empty() {
            self.list.push(Bytes::from(std::mem::take(&mut self.buf)));
        }
        self.list.push(data);
    }

    fn finish(mut self) -> Vec<Bytes> {
        if !self.buf.is_empty() {
            self.list.push(Bytes::from(self.buf));
        }
        self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::NodeProto;

    #[test]
    fn the_pieces_decode_to_the_same_model() {
        let tensor = |name: &str, n: usize| TensorProto {
            name: Some(name.into()),
            dims: vec![n as i64],
            data_type: Some(1),
            raw_data: Some(Bytes::from(vec![7u8; n * 4])),
            ..TensorProto::default()
        };
        let model = ModelProto {
            ir_version: Some(8),
            producer_name: Some("irpass".into()),
            graph: Some(GraphProto {
                node: vec![NodeProto {
                    op_type: Some("Relu".into()),
                    ..NodeProto::default()
                }],
                initializer: vec![
                    tensor("small", 3),
                    tensor("large", 5000),
                    TensorProto {
                        name: Some("typed".into()),
                        float_data: vec![1.0, 2.0],
                        ..TensorProto::default()
                    },
                ],
                ..GraphProto::default()
            }),
            ..ModelProto::default()
        };
        let pieces = encode_model_pieces(model.clone());
        // The large tensor's data is a piece of its own (not copied).
        assert!(pieces.iter().any(|p| p.len() == 20_000));
        let bytes: Vec<u8> = pieces.iter().flat_map(|p| p.iter().copied()).collect();
        assert_eq!(bytes.len(), model.encoded_len());
        assert_eq!(ModelProto::decode(&bytes[..]).unwrap(), model);
    }
}
