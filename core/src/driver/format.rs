//! Binary formats of modules (ONNX for the reference IR): how the driver reads and writes them,
//! and what the command line tells their readers and writers.

use std::path::Path;

use crate::BoxError;

/// Reads a module of a binary format: `source` names the input in messages, `path` is its
/// file (for data beside it), `bytes` its content (given, so a reader can keep views of it
/// instead of copies).
pub type ReadFn<M> = fn(
    source: &str,
    path: Option<&Path>,
    bytes: super::Bytes,
    options: &ReadOptions,
) -> Result<M, BoxError>;

/// Writes a module in a binary format.
pub type WriteFn<M> = fn(module: &M, options: &WriteOptions<'_>) -> Result<Written, BoxError>;

/// What the command line tells a binary format's reader.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// `--input-shape NAME:D1,D2,...`: shapes that replace the declared ones of the model's
    /// inputs (unknown or symbolic dimensions made static), by input name.
    pub input_shapes: Vec<(String, Vec<i64>)>,
    /// `--strict`: refuse an input that the reader could hold only in part opaque (ONNX:
    /// nodes irpass does not convert), instead of keeping those parts and saying so.
    pub strict: bool,
}

impl ReadOptions {
    /// Reads `--input-shape` values (`NAME:1,3,224,224`).
    ///
    /// # Errors
    /// A value that is not `NAME:` followed by comma-separated integers.
    pub fn with_input_shapes(values: &[String]) -> Result<ReadOptions, String> {
        let mut input_shapes = Vec::new();
        for v in values {
            let bad = || {
                format!(
                    "`--input-shape {v}`: expected NAME:D1,D2,... (an input's name, a colon, its \
                     dimensions), e.g. `input:1,3,224,224`"
                )
            };
            let (name, dims) = v.rsplit_once(':').ok_or_else(bad)?;
            if name.is_empty() {
                return Err(bad());
            }
            let dims = if dims.trim().is_empty() {
                Vec::new()
            } else {
                dims.split(',')
                    .map(|d| d.trim().parse::<i64>().map_err(|_| bad()))
                    .collect::<Result<Vec<_>, _>>()?
            };
            input_shapes.push((name.to_string(), dims));
        }
        Ok(ReadOptions {
            input_shapes,
            strict: false,
        })
    }
}

/// What the command line tells a binary format's writer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions<'a> {
    /// `--opset N`: the version of the format to write (ONNX: the default domain's opset);
    /// `None` keeps the input's.
    pub version: Option<i64>,
    /// `--external-data[=BYTES]`: tensors of at least this many bytes go to a data file beside
    /// the output instead of into it.
    pub external_data: Option<u64>,
    /// The file being written (`-o`), `None` for stdout: a writer names the files it puts
    /// beside it ([`Written::beside`]) after it.
    pub output: Option<&'a Path>,
}

impl WriteOptions<'_> {
    /// The output's file name (`model.onnx` for `-o out/model.onnx`), if it goes to a file.
    pub fn output_file_name(&self) -> Option<String> {
        self.output
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
    }
}

/// What a writer produced: the output's bytes and any files that go beside it (external
/// data), each a plain file name in the output's folder and its bytes. A piece that is the
/// bytes of a mapped file ([`crate::mapped`], a model's weights as read) is copied from that
/// file by the kernel.
#[derive(Default)]
pub struct Written {
    /// The output file's bytes, as pieces written one after another: a writer can hand over
    /// data it already holds (a model's weights) instead of copying it into one buffer.
    pub pieces: Vec<Piece>,
    /// Files written into the output's folder before it, by file name, each as pieces.
    pub beside: Vec<(String, Vec<Piece>)>,
}

/// A piece of a written output: any owner of bytes (`Vec<u8>`, `bytes::Bytes`, ...).
pub type Piece = Box<dyn AsRef<[u8]> + Send>;

impl std::fmt::Debug for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Written")
            .field(
                "bytes",
                &self
                    .pieces
                    .iter()
                    .map(|p| (**p).as_ref().len())
                    .sum::<usize>(),
            )
            .field(
                "beside",
                &self.beside.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl From<Vec<u8>> for Written {
    fn from(bytes: Vec<u8>) -> Written {
        Written {
            pieces: vec![Box::new(bytes)],
            beside: Vec::new(),
        }
    }
}

/// Compares the module the driver read with the one its pipeline made (`--check N`): runs
/// both on `n` random inputs and returns a one-line summary, or an error saying where they
/// differ.
pub type CheckFn<M> = fn(before: &M, after: &M, n: usize) -> Result<String, BoxError>;

/// A flag of the driver that only a format gives meaning to: a driver lists and accepts it
/// only when one of its formats declares it ([`Format::flags`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatFlag {
    /// `--input-shape NAME:DIMS`: sizes for an input's unknown dimensions, when reading.
    InputShape,
    /// `--strict`: refuse an input held only with parts kept opaque, when reading.
    Strict,
    /// `--opset N`: the version of the format to write.
    Version,
    /// `--external-data[=BYTES]`: large tensors into a file beside the output.
    ExternalData,
}

impl FormatFlag {
    /// Every flag, in the order `--help` lists them.
    pub const ALL: [FormatFlag; 4] = [
        FormatFlag::InputShape,
        FormatFlag::Strict,
        FormatFlag::Version,
        FormatFlag::ExternalData,
    ];

    /// The flag as written on the command line (`--opset`).
    pub fn flag(self) -> &'static str {
        match self {
            FormatFlag::InputShape => "--input-shape",
            FormatFlag::Strict => "--strict",
            FormatFlag::Version => "--opset",
            FormatFlag::ExternalData => "--external-data",
        }
    }

    /// Its argument's id in [`Args`](super::Args)'s command.
    pub(crate) fn arg_id(self) -> &'static str {
        match self {
            FormatFlag::InputShape => "input_shape",
            FormatFlag::Strict => "strict",
            FormatFlag::Version => "opset",
            FormatFlag::ExternalData => "external_data",
        }
    }

    /// Whether `args` gives it.
    pub(crate) fn given(self, args: &super::Args) -> bool {
        match self {
            FormatFlag::InputShape => !args.input_shape.is_empty(),
            FormatFlag::Strict => args.strict,
            FormatFlag::Version => args.opset.is_some(),
            FormatFlag::ExternalData => args.external_data.is_some(),
        }
    }
}

/// A binary format of modules, read and written by the driver.
pub struct Format<M> {
    /// The name `--emit` takes (`onnx`).
    pub name: &'static str,
    /// The file extension that selects it for `-o` (`onnx`).
    pub extension: &'static str,
    /// Whether an input (its path, if it came from a file, and its bytes) is in this format.
    pub detect: fn(path: Option<&Path>, bytes: &[u8]) -> bool,
    /// Reads a module; `path` is the file's (for data beside it).
    pub read: ReadFn<M>,
    /// Writes a module.
    pub write: WriteFn<M>,
    /// The flags it gives meaning to: the driver lists and accepts only those some format of
    /// it declares (`--opset` means nothing to a driver without a versioned format).
    pub flags: &'static [FormatFlag],
}
