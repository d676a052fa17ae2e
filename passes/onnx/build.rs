//! Compiles the ONNX schema (`proto/onnx.proto`) into Rust messages with `protox` and
//! `prost-build`: no `protoc` binary is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/onnx.proto");
    let files = protox::compile(["onnx.proto"], ["proto"])?;
    prost_build::Config::new().compile_fds(files)?;
    Ok(())
}
