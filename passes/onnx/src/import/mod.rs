//! Import: an ONNX model becomes a module whose `@main` takes the graph's inputs (those that
//! are not initializers) and returns its outputs (a tuple when there are several).
//! Initializers and `Constant` nodes become constants; each node becomes the operator calls
//! its opset version defines ([`ops`]), in one node loop for the graph and its `If` branches
//! ([`nodes`], [`branch`]). What the importer does not convert is kept whole where its outputs
//! are typed ([`opaque`]; its subgraphs as closures, [`subgraph`]), and refused otherwise,
//! with the reason.

pub(crate) mod attrs;
mod branch;
mod functions;
mod native;
mod nodes;
mod opaque;
mod opaque_types;
mod ops;
mod sequence_types;
mod subgraph;
mod symbolic;
mod wellformed;

pub(crate) use ops::KNOWN;

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use irpass_ir::infer::LocalTyper;
use irpass_ir::{
    ArenaFunction, AttrValue, Attrs, BodyBuilder, ExprId, Function, Module, TensorType, Type,
};
use prost::Message as _;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{OnnxError, Result, Unsupported};
use crate::opset::{self, OPSETS};
use crate::proto::{GraphProto, ModelProto, NodeProto, ValueInfoProto, type_proto};
use crate::tensor::{DataDir, dtype_of, tensor_of};

/// How to import.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Shapes that replace the declared ones of graph inputs (unknown or symbolic dimensions
    /// made static), by input name: onnxsim's `--overwrite-input-shape`.
    pub input_shapes: Vec<(String, Vec<i64>)>,
    /// What errors call the shapes' source (default `--input-shape`, the driver's flag; the
    /// Python package says `input_shapes`).
    pub input_shapes_name: Option<&'static str>,
}

impl ImportOptions {
    fn shapes_name(&self) -> &'static str {
        self.input_shapes_name.unwrap_or("--input-shape")
    }
}

/// What the module keeps of the model, for writing it back: names and opset. Held as
/// attributes of `@main` (`onnx_opset`, `onnx_inputs`, `onnx_outputs`, `onnx_graph`), so they
/// survive every pass and the text format (`--emit=text`, edit, write ONNX again).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelInfo {
    /// The default domain's opset version.
    pub opset: i64,
    /// The graph's input names, in `@main`'s parameter order.
    pub inputs: Vec<String>,
    /// The graph's output names, in order.
    pub outputs: Vec<String>,
    /// The graph's name.
    pub graph_name: String,
}

impl ModelInfo {
    /// The attributes of `@main` that hold this.
    pub fn attrs(&self) -> Attrs {
        let names =
            |v: &[String]| AttrValue::List(v.iter().map(|s| AttrValue::Str(s.clone())).collect());
        Attrs::from_pairs([
            ("onnx_opset", AttrValue::Int(self.opset)),
            ("onnx_inputs", names(&self.inputs)),
            ("onnx_outputs", names(&self.outputs)),
            ("onnx_graph", AttrValue::Str(self.graph_name.clone())),
        ])
    }

    /// What the attributes of a function say, if it came from an ONNX model.
    pub fn of(attrs: &Attrs) -> Option<ModelInfo> {
        let names = |k: &str| -> Option<Vec<String>> {
            match attrs.get(k)? {
                AttrValue::List(v) => v.iter().map(|s| s.as_str().map(str::to_string)).collect(),
                _ => None,
            }
        };
        Some(ModelInfo {
            opset: attrs.get("onnx_opset")?.as_int()?,
            inputs: names("onnx_inputs")?,
            outputs: names("onnx_outputs")?,
            graph_name: attrs
                .get("onnx_graph")
                .and_then(|g| g.as_str())
                .unwrap_or("")
                .to_string(),
        })
    }
}

/// An imported model: the module and what export needs of the original.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The module (one function, `@main`).
    pub module: Module,
    /// Names and opset of the model.
    pub info: ModelInfo,
    /// The operators kept opaque (not converted; written back as they came), with how many
    /// nodes of each, by name (`Acos`, `com.microsoft.FusedConv`).
    pub opaque: Vec<(String, usize)>,
}

/// Decodes a `ModelProto` from protobuf bytes.
///
/// # Errors
/// Bytes that are not a model: truncated, random, or another message.
pub fn decode_model(bytes: &[u8]) -> Result<ModelProto> {
    decode_buf(bytes)
}

/// [`decode_model`] of a shared buffer: the tensors' raw data are views of `bytes`, not
/// copies (a model costs its file's memory once, not twice).
///
/// # Errors
/// As [`decode_model`].
pub fn decode_model_shared(bytes: Bytes) -> Result<ModelProto> {
    decode_buf(bytes)
}

fn decode_buf(bytes: impl bytes::Buf) -> Result<ModelProto> {
    let model = ModelProto::decode(bytes).map_err(|e| OnnxError::Decode(e.to_string()))?;
    if model.graph.is_none() || model.ir_version.is_none() {
        return Err(OnnxError::Decode(
            "the message has no graph or no IR version (a protobuf that is not a model?)".into(),
        ));
    }
    Ok(model)
}

/// Reads and imports the model at `path`; external data is read from its folder.
///
/// # Errors
/// As [`import_model`], and a file that cannot be read.
pub fn import_file(path: &Path, options: &ImportOptions) -> Result<Imported> {
    let bytes = std::fs::read(path).map_err(|e| OnnxError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let model = decode_model_shared(Bytes::from(bytes))?;
    let dir = folder_of(path);
    import_model(&model, DataDir(Some(dir)), options)
}

/// Imports a model given as bytes read from `path` (external data is read from its folder),
/// or from no file (then it cannot have external data). The bytes are taken, not copied
/// (a `Vec<u8>` or `Bytes`): the tensors are read from them in place.
///
/// # Errors
/// As [`import_model`].
pub fn import_bytes_from(
    bytes: impl Into<Bytes>,
    path: Option<&Path>,
    options: &ImportOptions,
) -> Result<Imported> {
    let dir = path.map(folder_of);
    let model = decode_model_shared(bytes.into())?;
    import_model(&model, DataDir(dir), options)
}

/// Imports a model given as bytes (it cannot have external data).
///
/// # Errors
/// As [`import_model`].
pub fn import_bytes(bytes: &[u8], options: &ImportOptions) -> Result<Imported> {
    import_model(&decode_model(bytes)?, DataDir(None), options)
}

/// Imports a decoded model.
///
/// # Errors
/// An opset outside [`OPSETS`], operators that are not supported at the model's opset (all of
/// them listed),
/// duplicate or malformed inputs, tensors that cannot be read, a graph that uses a value
/// nothing defines.
pub fn import_model(
    model: &ModelProto,
    dir: DataDir<'_>,
    options: &ImportOptions,
) -> Result<Imported> {
    let opset = default_opset(model)?;
    let graph = model.graph.as_ref().expect("decode_model checks the graph");
    let inlined = functions::inline_local_functions(model, graph, opset)?;
    let mut imp = Importer::new(opset);
    imp.domains = model
        .opset_import
        .iter()
        .filter_map(|o| Some((o.domain.clone().unwrap_or_default(), o.version?)))
        .collect();
    imp.graph(inlined.as_ref().unwrap_or(graph), dir, options)
}

/// The folder a model file's external data is read from (`.` for a bare file name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// `Op`, or `domain.Op` outside the default domain.
pub(crate) fn qualified_op(n: &NodeProto) -> String {
    match n.domain() {
        "" | "ai.onnx" => n.op_type().to_string(),
        d => format!("{d}.{}", n.op_type()),
    }
}

/// The default domain's opset version, checked against [`OPSETS`] (each operator's version is
/// checked with the operator).
fn default_opset(model: &ModelProto) -> Result<i64> {
    let declared = model
        .opset_import
        .iter()
        .find(|o| matches!(o.domain.as_deref(), None | Some("" | "ai.onnx")))
        .and_then(|o| o.version);
    let uses_default = || {
        model
            .graph
            .iter()
            .flat_map(|g| &g.node)
            .any(|n| matches!(n.domain(), "" | "ai.onnx"))
    };
    let version = match declared {
        Some(v) => v,
        // A model entirely of other domains (`ai.onnx.ml`): its nodes are kept opaque, and
        // what irpass writes around them is at the newest opset it implements.
        None if !uses_default() => *opset::IMPLEMENTED.end(),
        None => {
            return Err(OnnxError::Invalid(
                "the model imports no default-domain opset".into(),
            ));
        }
    };
    if !OPSETS.contains(&version) {
        return Err(OnnxError::Invalid(format!(
            "opset {version} is not supported: irpass imports opsets {} to {} (its table of \
             ONNX's operators ends at {})",
            OPSETS.start(),
            OPSETS.end(),
            OPSETS.end()
        )));
    }
    Ok(version)
}

/// The state of one import: the function being built and the values by name.
pub(crate) struct Importer {
    pub(crate) b: BodyBuilder,
    pub(crate) typer: LocalTyper,
    pub(crate) opset: i64,
    values: FxHashMap<String, ExprId>,
    /// Outputs of nodes that the importer does not compute (Dropout's mask), with what they are.
    unconverted: FxHashMap<String, String>,
    /// Values computed at import time from constants (shape arithmetic), by node.
    folded: FxHashMap<ExprId, Option<Arc<irpass_ir::Tensor>>>,
    /// The model's opset version of each domain it imports.
    domains: FxHashMap<String, i64>,
    /// The operators kept opaque so far, with how many nodes of each.
    kept: std::collections::BTreeMap<String, usize>,
    /// Shape values as sizes, static or named, by node ([`Importer::dims_value`]).
    symbolic: FxHashMap<ExprId, Option<Vec<symbolic::Size>>>,
    /// For each named size, a graph input that has it and the axis where
    /// ([`Importer::shape_value`]).
    sizes: FxHashMap<irpass_ir::Symbol, (ExprId, usize)>,
}

impl Importer {
    fn new(opset: i64) -> Importer {
        Importer {
            b: BodyBuilder::new(),
            typer: LocalTyper::new(),
            opset,
            values: FxHashMap::default(),
            unconverted: FxHashMap::default(),
            folded: FxHashMap::default(),
            domains: FxHashMap::default(),
            kept: Default::default(),
            symbolic: FxHashMap::default(),
            sizes: FxHashMap::default(),
        }
    }

    fn graph(
        &mut self,
        g: &GraphProto,
        dir: DataDir<'_>,
        options: &ImportOptions,
    ) -> Result<Imported> {
        wellformed::check(g)?;
        let mut initialized = FxHashSet::default();
        for (k, t) in g.initializer.iter().enumerate() {
            let name = t.name.clone().unwrap_or_default();
            let e = self.initializer(t, dir, g.node.len() + k)?;
            initialized.insert(name.clone());
            self.values.insert(name, e);
        }
        let mut params = Vec::new();
        let mut input_names = Vec::new();
        let mut seen = FxHashSet::default();
        for input in g.input.iter().filter(|i| !initialized.contains(i.name())) {
            let name = input.name().to_string();
            if !seen.insert(name.clone()) {
                return Err(OnnxError::Invalid(format!(
                    "graph input `{name}` is declared twice"
                )));
            }
            let ty = input_type(input, options)?;
            let v = self.b.var(&name, Some(ty.clone()), None);
            self.typer.set_var(v, &ty);
            let e = self.b.use_var(v);
            if let Type::Tensor(t) = &ty {
                for (axis, d) in t.shape.iter().enumerate() {
                    if let Some(s) = d.symbol() {
                        self.sizes.entry(s).or_insert((e, axis));
                    }
                }
            }
            self.values.insert(name.clone(), e);
            params.push(v);
            input_names.push(name);
        }
        for (name, _) in &options.input_shapes {
            if !seen.contains(name) {
                return Err(OnnxError::Invalid(format!(
                    "{} names `{name}`, which is not a graph input (inputs: {})",
                    options.shapes_name(),
                    input_names.join(", ")
                )));
            }
        }
        // (Value names are unique in the whole model, subgraphs included.)
        let declared = opaque::declared_types(g);
        let read = nodes::values_read(g);
        let scope = Scope {
            dir,
            declared: &declared,
            read: &read,
        };
        let mut next_index = g.node.len() + g.initializer.len();
        self.nodes(g, 0, &scope, &mut next_index)?;
        let mut results = Vec::new();
        let mut output_names = Vec::new();
        for out in &g.output {
            // (Every output is defined: `wellformed::check`.)
            let Some(&e) = self.values.get(out.name()) else {
                let what = self.unconverted.get(out.name());
                return Err(OnnxError::Invalid(format!(
                    "graph output `{}` is {}",
                    out.name(),
                    what.map_or("not converted", String::as_str)
                )));
            };
            results.push(e);
            output_names.push(out.name().to_string());
        }
        let root = match results.as_slice() {
            [one] => *one,
            _ => self.b.tuple(&results),
        };
        let b = std::mem::take(&mut self.b);
        let code = ArenaFunction {
            body: b.finish(),
            params,
            root,
        };
        let info = ModelInfo {
            opset: self.opset,
            inputs: input_names,
            outputs: output_names,
            graph_name: g.name.clone().unwrap_or_default(),
        };
        let main = Function::new(code, None, info.attrs(), None);
        Ok(Imported {
            module: Module::from_functions([("main", main)]),
            info,
            opaque: std::mem::take(&mut self.kept).into_iter().collect(),
        })
    }

    /// The nodes to keep opaque: those of an operator the importer does not convert (another
    /// domain, an unknown operator, a version it does not read). Each must have its outputs'
    /// types declared; the error lists every one that has not, at once.
    fn plan_opaque(
        &self,
        g: &GraphProto,
        base: usize,
        cannot_keep: &dyn Fn(&NodeProto) -> Option<String>,
    ) -> Result<FxHashSet<usize>> {
        let mut keep = FxHashSet::default();
        let mut problems = Vec::new();
        for (i, n) in g.node.iter().enumerate() {
            let default_domain = matches!(n.domain(), "" | "ai.onnx");
            // An `If` is decided at its turn: inlined where its condition is known then, an
            // IR `if` otherwise.
            if nodes::is_if(n) {
                continue;
            }
            if crate::native::get(n.domain(), n.op_type())
                .is_some_and(|d| d.implements(self.opset_of(d.domain)))
            {
                continue;
            }
            let reason = if !default_domain || !ops::known(n.op_type()) {
                None
            } else {
                match opset::check(n.op_type(), self.opset) {
                    Ok(()) => continue,
                    Err(why) => Some(why),
                }
            };
            match cannot_keep(n) {
                None => {
                    keep.insert(base + i);
                }
                Some(why) => problems.push(Unsupported {
                    op_type: qualified_op(n),
                    opset: self.opset,
                    node: node_name(n, i),
                    reason: Some(format!(
                        "{}{why}, so the node cannot be kept opaque",
                        reason.map(|r| format!("{r}; ")).unwrap_or_default()
                    )),
                }),
            }
        }
        if problems.is_empty() {
            Ok(keep)
        } else {
            Err(OnnxError::Unsupported(problems))
        }
    }

    /// The tensor type of `e`, if known.
    pub(crate) fn tensor_type(&mut self, e: ExprId) -> Option<Arc<TensorType>> {
        self.typer.tensor(self.b.body(), e)
    }

    /// The static shape of `e`.
    pub(crate) fn static_shape(&mut self, e: ExprId) -> Option<Vec<usize>> {
        self.tensor_type(e)?.static_shape()
    }

    /// The value of `e` if it is known at import time: a constant, the shape of a value whose
    /// shape is static, or a small operator call on such values (shape arithmetic).
    pub(crate) fn constant(&mut self, e: ExprId) -> Option<Arc<irpass_ir::Tensor>> {
        if let Some(v) = self.folded.get(&e) {
            return v.clone();
        }
        let v = self.compute_constant(e);
        self.folded.insert(e, v.clone());
        v
    }

    fn compute_constant(&mut self, e: ExprId) -> Option<Arc<irpass_ir::Tensor>> {
        use irpass_ir::{Node, Value};
        let body = self.b.body();
        match body.node(e) {
            Node::Constant(k) => Some(body.constant(*k).clone()),
            Node::CallOp { .. } => {
                let (op, args, attrs) = body.op_call(e)?;
                let (args, attrs) = (args.to_vec(), attrs.clone());
                // The shape queries need only their operand's static shape.
                if matches!(op.name(), "shape_of" | "ndarray_size") {
                    let shape = self.static_shape(args[0])?;
                    let dtype = attrs
                        .get("dtype")
                        .and_then(|d| d.as_str())
                        .and_then(irpass_ir::DType::from_name)
                        .unwrap_or(irpass_ir::DType::Int32);
                    let t = if op.name() == "shape_of" {
                        let values = shape.iter().map(|&d| d as f64).collect();
                        irpass_ir::Tensor::from_vec(dtype, &[shape.len()], values).ok()?
                    } else {
                        irpass_ir::Tensor::scalar(dtype, shape.iter().product::<usize>() as f64)
                    };
                    return Some(Arc::new(t));
                }
                let ty = self.tensor_type(e)?;
                if ty.num_elements()? > MAX_IMPORT_FOLD {
                    return None;
                }
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    let v = match self.constant(a) {
                        Some(v) => v,
                        // A static element of a symbolic shape (`Shape(x)[2]` where only that
                        // size of `x` is static).
                        None => self.static_dims_value(a)?,
                    };
                    values.push(Value::Tensor(v));
                }
                match op.eval(&values, &attrs).ok()? {
                    Value::Tensor(t) => Some(t),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// The largest value (in elements) the importer computes from constants itself: enough for
/// shape arithmetic, far below any weight.
const MAX_IMPORT_FOLD: usize = 4096;

/// What the node loop of every graph of one model shares: where external data is, the
/// types the model declares for its values, and the names something reads.
pub(crate) struct Scope<'m> {
    pub(crate) dir: DataDir<'m>,
    pub(crate) declared: &'m FxHashMap<String, Type>,
    pub(crate) read: &'m FxHashSet<&'m str>,
}

impl Importer {
    /// The value of initializer `t`: a constant, or, for an element type the IR does not
    /// carry (strings), a `Constant` node kept whole, numbered `id` among the kept nodes.
    fn initializer(
        &mut self,
        t: &crate::proto::TensorProto,
        dir: DataDir<'_>,
        id: usize,
    ) -> Result<ExprId> {
        match tensor_of(t, dir) {
            Ok(tensor) => Ok(self.b.constant(Arc::new(tensor))),
            Err(_) if opaque::is_opaque_tensor(t) => self.opaque_constant(t, id),
            Err(e) => Err(e),
        }
    }

    /// The branch an `If` takes when its condition is known at import time (a comparison of
    /// static sizes, as exporters and ONNX's function expansions write): the graph whose nodes
    /// replace it.
    fn taken_branch<'g>(&mut self, node: &'g NodeProto) -> Option<&'g GraphProto> {
        if !nodes::is_if(node) {
            return None;
        }
        let cond = *self.values.get(node.input.first()?)?;
        let taken = self.constant(cond)?.scalar_value()? != 0.0;
        let name = if taken { "then_branch" } else { "else_branch" };
        let branch = node
            .attribute
            .iter()
            .find(|a| a.name() == name)?
            .g
            .as_ref()?;
        (branch.output.len() == node.output.len()).then_some(branch)
    }
}

/// `g` and every subgraph in it, at any depth.
fn with_subgraphs(g: &GraphProto) -> Vec<&GraphProto> {
    let mut out = vec![g];
    let mut k = 0;
    while k < out.len() {
        let inner = out[k].node.iter().flat_map(|n| &n.attribute);
        out.extend(inner.flat_map(|a| a.g.iter().chain(&a.graphs)));
        k += 1;
    }
    out
}

/// A node's name, or `#index` when it has none.
fn node_name(n: &crate::proto::NodeProto, i: usize) -> String {
    match n.name.as_deref() {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => format!("#{i}"),
    }
}

/// The declared type of a graph input, with `--input-shape` applied.
fn input_type(input: &ValueInfoProto, options: &ImportOptions) -> Result<Type> {
    let name = input.name();
    let Some(proto) = input.r#type.as_ref() else {
        return Err(OnnxError::Invalid(format!(
            "graph input `{name}` has no type"
        )));
    };
    // A value the IR does not model (a sequence, a tensor of strings): an opaque parameter.
    let tensor = match &proto.value {
        Some(type_proto::Value::TensorType(t)) => dtype_of(t.elem_type.unwrap_or(0))
            .ok()
            .map(|dtype| (t, dtype)),
        _ => None,
    };
    let Some((t, dtype)) = tensor else {
        let ty = crate::value_type::ir_type(proto).ok_or_else(|| {
            OnnxError::Invalid(format!(
                "graph input `{name}` has a type irpass cannot read"
            ))
        })?;
        if options.input_shapes.iter().any(|(n, _)| n == name) {
            return Err(OnnxError::Invalid(format!(
                "{} names `{name}`, whose type {ty} is not a tensor's",
                options.shapes_name()
            )));
        }
        return Ok(ty);
    };
    if let Some((_, shape)) = options.input_shapes.iter().find(|(n, _)| n == name) {
        let flag = options.shapes_name();
        if let Some(d) = shape.iter().find(|&&d| d < 0) {
            return Err(OnnxError::Invalid(format!(
                "{flag} for `{name}` has a negative dimension {d}"
            )));
        }
        // The shape replaces the declared sizes (a static batch may change, as onnxsim's
        // `--overwrite-input-shape` allows); it cannot change the rank.
        if let Some(declared) = t.shape.as_ref().filter(|d| d.dim.len() != shape.len()) {
            let dims: Vec<String> = declared
                .dim
                .iter()
                .map(|d| crate::dims::dim_of(d).map_or("?".into(), |d| d.to_string()))
                .collect();
            return Err(OnnxError::Invalid(format!(
                "{flag} for `{name}` is {shape:?}, but the model's input has rank {} ({})",
                declared.dim.len(),
                dims.join(", ")
            )));
        }
        return Ok(Type::Tensor(Arc::new(TensorType::new(shape, dtype))));
    }
    let Some(shape) = &t.shape else {
        return Err(OnnxError::Invalid(format!(
            "graph input `{name}` has no shape (not even a rank): give one with {}",
            match options.input_shapes_name {
                None => format!("--input-shape {name}:..."),
                Some(n) => format!("{n}={{\"{name}\": [...]}}"),
            }
        )));
    };
    let mut dims = Vec::with_capacity(shape.dim.len());
    for d in &shape.dim {
        dims.push(crate::dims::dim_of(d).map_err(|v| {
            OnnxError::Invalid(format!("graph input `{name}` has a negative dimension {v}"))
        })?);
    }
    Ok(Type::with_dims(dims, dtype))
}
