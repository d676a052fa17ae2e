//! Compiles the ONNX schema (`proto/onnx.proto`) into Rust messages with `protox` and
//! `prost-build`: no `protoc` binary is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/onnx.proto");
    let files = protox::compile(["onnx.proto"], ["proto"])?;
    // A tensor's raw data is `bytes::Bytes`: decoded from a `Bytes` buffer it is a view of the
    // file's bytes, not a copy, and written from a tensor it can be a view of the tensor.
    prost_build::Config::new()
        .bytes([".onnx.TensorProto.raw_data"])
        .compile_fds(files)?;
    Ok(())
}
