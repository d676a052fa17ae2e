//! The link-time registry of passes, instruments and config options, through `inventory`.
//!
//! The macros submit one descriptor per pass ([`PassRegistration`]), instrument
//! ([`InstrumentRegistration`]) and config key ([`ConfigOption`]).
//! The first lookup builds hash tables over all of them; later lookups are O(1).
//!
//! A crate's registrations exist only if the crate is linked, and Rust links a library only
//! when the program names it in code. A program that relies on a pass library's registrations
//! must name it, e.g. `use irpass_passes as _;`. An "unknown name" error says so when no
//! registered name is close to the one asked for.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

use crate::config_key::ConfigOption;
use crate::error::{ConfigError, Duplicate, RegistryError};
use crate::instrument::PassInstrument;
pub use crate::location::Location;
use crate::suggest::closest;
use crate::{IrModule, Pass, PassInfo};

/// Registers a pass built by a function — a pipeline (`Sequential`), a pass with chosen options
/// — under the name in its [`PassInfo`] (a `static`), for IR `M`, so that pipeline text and
/// drivers find it by name: `register_pass!(M, INFO, make)` where `make: fn() -> impl
/// Into<Pass<M>>`. (A pass defined with `#[function_pass]`/`#[module_pass]` is registered by
/// its macro.) The program must link the crate that registers it, as for every registration.
///
/// ```
/// use irpass::doc_toy::Toy;
/// use irpass::{PassInfo, PassKind, Sequential, function_pass, register_pass, registry};
/// use std::sync::Arc;
///
/// /// Doubles every value.
/// #[function_pass(opt_level = 0)]
/// fn double(func: Arc<Vec<i64>>, _module: &Toy) -> Arc<Vec<i64>> {
///     Arc::new(func.iter().map(|v| v * 2).collect())
/// }
///
/// static QUADRUPLE: PassInfo =
///     PassInfo::new_static("Quadruple", 0, PassKind::Sequential, &[], "Doubles twice.");
///
/// fn quadruple() -> Sequential<Toy> {
///     Sequential::named("Quadruple", vec![Double.into(), Double.into()]).expect("builds")
/// }
///
/// register_pass!(Toy, QUADRUPLE, quadruple);
///
/// let mut module = Toy::default();
/// module.insert("main", vec![1, 2]);
/// let out = registry::lookup::<Toy>("Quadruple").unwrap().run(module).unwrap();
/// assert_eq!(out.to_string(), "main = [4, 8]\n");
/// ```
#[macro_export]
macro_rules! register_pass {
    ($ir:ty, $info:path, $make:path $(,)?) => {
        const _: () = {
            fn __irpass_create() -> $crate::registry::ErasedPass {
                $crate::registry::erase::<$ir>($crate::Pass::<$ir>::from($make()))
            }
            $crate::__private::inventory::submit! {
                $crate::registry::PassRegistration::new::<$ir>(
                    &$info,
                    ::core::option::Option::Some(__irpass_create),
                    ::core::option::Option::None,
                    $crate::__location!(),
                )
            }
        };
    };
}

/// Registers an analysis type (one implementing [`Analysis`](crate::analysis::Analysis) and
/// `FunctionAnalysis<M>` or `ModuleAnalysis<M>`) with a description, so that listings
/// (`--list-analyses`) and `--time-passes` show it: `register_analysis!(M, Type, Function,
/// "what it computes")` (`Module` for a module analysis). An analysis defined with
/// `#[function_analysis]`/`#[module_analysis]` is registered by its macro.
///
/// ```
/// use irpass::analysis::{Analysis, FunctionAnalysis};
/// use irpass::doc_toy::Toy;
/// use irpass::{PassContext, register_analysis};
/// use std::sync::Arc;
///
/// struct Total;
/// impl Analysis for Total {
///     const NAME: &'static str = "Total";
/// }
/// impl FunctionAnalysis<Toy> for Total {
///     type Output = i64;
///     fn compute(&self, f: &Arc<Vec<i64>>, _m: &Toy, _ctx: &PassContext) -> i64 {
///         f.iter().sum()
///     }
/// }
/// register_analysis!(Toy, Total, Function, "The sum of a function's values.");
///
/// assert!(irpass::analysis::registered().iter().any(|a| a.name == "Total"));
/// ```
#[macro_export]
macro_rules! register_analysis {
    ($ir:ty, $analysis:ty, $kind:ident, $description:expr $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::analysis::AnalysisRegistration::new::<$ir>(
                <$analysis as $crate::analysis::Analysis>::NAME,
                $description,
                $crate::analysis::AnalysisKind::$kind,
                $crate::__location!(),
            )
        }
    };
}

/// A pass behind `Any`: a `Pass<M>` for the registration's IR.
pub type ErasedPass = Box<dyn Any + Send + Sync>;

/// Puts a pass behind `Any` for a [`PassRegistration`].
pub fn erase<M: IrModule>(pass: Pass<M>) -> ErasedPass {
    Box::new(pass)
}

/// Builds a pass from options given as JSON, or says what is wrong with them.
pub type OptionsFactory = fn(&serde_json::Value) -> Result<ErasedPass, String>;

/// One option of a pass built from options (`Name{key=value}` in pipeline text): what
/// `--list-passes` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionDoc {
    /// The key.
    pub name: &'static str,
    /// The value type as written (`u64`, `Option<bool>`, `Vec<String>`); empty when unknown.
    pub type_name: &'static str,
    /// What a pass built without the option uses, as text; empty when unknown.
    pub default: String,
    /// What the option does.
    pub doc: &'static str,
}

/// Describes a pass's options for `--list-passes`: implement it on a pass declared with
/// `options` (its fields are the options); without it the listing shows the option names only.
///
/// ```
/// use irpass::registry::{OptionDoc, PassOptions};
///
/// #[derive(Default, serde::Deserialize)]
/// #[serde(default)]
/// struct Unroll { factor: u32 }
///
/// impl PassOptions for Unroll {
///     fn options() -> Vec<OptionDoc> {
///         vec![OptionDoc { name: "factor", type_name: "u32", default: "0".into(), doc: "How often." }]
///     }
/// }
/// assert_eq!(Unroll::options()[0].name, "factor");
/// ```
pub trait PassOptions {
    /// The options, in declaration order.
    fn options() -> Vec<OptionDoc>;
}

/// A registered pass: what `#[module_pass]` / `#[function_pass]` submit.
pub struct PassRegistration {
    /// The pass's metadata.
    pub info: &'static PassInfo,
    /// The IR's name.
    pub ir_name: fn() -> &'static str,
    /// The IR's module type.
    pub ir_type: fn() -> TypeId,
    /// Builds the pass with no arguments (`None` when it needs options).
    pub create: Option<fn() -> ErasedPass>,
    /// Builds the pass from options given as JSON (`None` when it takes none).
    pub with_options: Option<OptionsFactory>,
    /// Its options, described (empty when it takes none).
    pub options: fn() -> Vec<OptionDoc>,
    /// Where the pass is defined.
    pub location: Location,
}

fn no_options() -> Vec<OptionDoc> {
    Vec::new()
}

impl PassRegistration {
    /// A registration for a pass on IR `M` (the IR name and type are taken from `M`).
    pub const fn new<M: IrModule>(
        info: &'static PassInfo,
        create: Option<fn() -> ErasedPass>,
        with_options: Option<OptionsFactory>,
        location: Location,
    ) -> Self {
        PassRegistration {
            info,
            ir_name: M::ir_name,
            ir_type: TypeId::of::<M>,
            create,
            with_options,
            options: no_options,
            location,
        }
    }

    /// The registration, its options described by `options`.
    pub const fn describing(mut self, options: fn() -> Vec<OptionDoc>) -> Self {
        self.options = options;
        self
    }
}

impl fmt::Debug for PassRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PassRegistration")
            .field("info", self.info)
            .field("ir", &(self.ir_name)())
            .field("location", &self.location)
            .finish()
    }
}

/// A registered instrument: what `#[pass_instrument]` submits for a `Default` instrument.
pub struct InstrumentRegistration {
    /// The name it is switched on by.
    pub name: &'static str,
    /// What it does (its doc comment).
    pub description: &'static str,
    /// Builds it.
    pub create: fn() -> Arc<dyn PassInstrument>,
    /// Where it is defined.
    pub location: Location,
}

impl fmt::Debug for InstrumentRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InstrumentRegistration")
            .field("name", &self.name)
            .field("location", &self.location)
            .finish()
    }
}

inventory::collect!(PassRegistration);
inventory::collect!(InstrumentRegistration);
inventory::collect!(ConfigOption);

struct Entry<T: 'static> {
    item: &'static T,
    duplicate: Option<&'static T>,
}

struct PassEntry {
    entry: Entry<PassRegistration>,
    default: OnceLock<Option<ErasedPass>>,
}

struct Table {
    passes: FxHashMap<TypeId, FxHashMap<&'static str, PassEntry>>,
    instruments: FxHashMap<&'static str, Entry<InstrumentRegistration>>,
    configs: FxHashMap<&'static str, Entry<ConfigOption>>,
}

fn insert<T>(map: &mut FxHashMap<&'static str, Entry<T>>, name: &'static str, item: &'static T) {
    map.entry(name)
        .and_modify(|e| {
            e.duplicate.get_or_insert(item);
        })
        .or_insert(Entry {
            item,
            duplicate: None,
        });
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut passes: FxHashMap<TypeId, FxHashMap<&'static str, PassEntry>> =
            FxHashMap::default();
        for reg in inventory::iter::<PassRegistration> {
            let per_ir = passes.entry((reg.ir_type)()).or_default();
            per_ir
                .entry(&reg.info.name)
                .and_modify(|e| {
                    e.entry.duplicate.get_or_insert(reg);
                })
                .or_insert(PassEntry {
                    entry: Entry {
                        item: reg,
                        duplicate: None,
                    },
                    default: OnceLock::new(),
                });
        }
        let mut instruments = FxHashMap::default();
        for reg in inventory::iter::<InstrumentRegistration> {
            insert(&mut instruments, reg.name, reg);
        }
        let mut configs = FxHashMap::default();
        for opt in inventory::iter::<ConfigOption> {
            insert(&mut configs, opt.name, opt);
        }
        Table {
            passes,
            instruments,
            configs,
        }
    })
}

fn pass_duplicate(reg: &PassRegistration, dup: &PassRegistration) -> RegistryError {
    Duplicate::error(
        format!("pass for IR `{}`", (reg.ir_name)()),
        &reg.info.name,
        reg.location,
        dup.location,
    )
}

fn find_pass<M: IrModule>(name: &str) -> Result<&'static PassEntry, RegistryError> {
    let per_ir = table().passes.get(&TypeId::of::<M>());
    match per_ir.and_then(|m| m.get(name)) {
        Some(e) => match e.entry.duplicate {
            Some(dup) => Err(pass_duplicate(e.entry.item, dup)),
            None => Ok(e),
        },
        None => {
            let suggestions = closest(name, per_ir.into_iter().flat_map(|m| m.keys().copied()));
            Err(RegistryError::UnknownPass {
                name: name.to_string(),
                ir: M::ir_name(),
                link_hint: suggestions.is_empty(),
                suggestions,
            })
        }
    }
}

fn downcast<M: IrModule>(name: &str, erased: &ErasedPass) -> Result<Pass<M>, RegistryError> {
    erased
        .downcast_ref::<Pass<M>>()
        .cloned()
        .ok_or_else(|| RegistryError::Construct {
            name: name.to_string(),
            message: format!(
                "its registration does not build a pass for IR `{}`",
                M::ir_name()
            ),
        })
}

/// The pass registered under `name` for IR `M`, built with no arguments.
///
/// The pass is built once and then shared (passes are immutable values).
///
/// ```
/// use irpass::doc_toy::Toy;
/// let err = irpass::registry::lookup::<Toy>("NoSuchPass").unwrap_err();
/// assert!(err.to_string().contains("use irpass_passes as _;"));
/// ```
pub fn lookup<M: IrModule>(name: &str) -> Result<Pass<M>, RegistryError> {
    let entry = find_pass::<M>(name)?;
    let built = entry
        .default
        .get_or_init(|| entry.entry.item.create.map(|create| create()));
    match built {
        Some(erased) => downcast(name, erased),
        None => Err(RegistryError::Construct {
            name: name.to_string(),
            message: "it has no default and must be given options (`Name{key=value}`)".to_string(),
        }),
    }
}

/// The pass registered under `name` for IR `M`, built from options given as JSON.
pub fn lookup_with_options<M: IrModule>(
    name: &str,
    options: &serde_json::Value,
) -> Result<Pass<M>, RegistryError> {
    let reg = find_pass::<M>(name)?.entry.item;
    let build = reg.with_options.ok_or_else(|| RegistryError::Construct {
        name: name.to_string(),
        message: "it takes no options".to_string(),
    })?;
    let erased = build(options).map_err(|message| RegistryError::Construct {
        name: name.to_string(),
        message,
    })?;
    downcast(name, &erased)
}

/// The passes registered for IR `M`, sorted by name.
pub fn passes<M: IrModule>() -> Vec<&'static PassRegistration> {
    let mut list: Vec<_> = table()
        .passes
        .get(&TypeId::of::<M>())
        .into_iter()
        .flat_map(|m| m.values().map(|e| e.entry.item))
        .collect();
    list.sort_by(|a, b| a.info.name.cmp(&b.info.name));
    list
}

/// Every registered pass for every IR, sorted by IR name then pass name.
pub fn all_passes() -> Vec<&'static PassRegistration> {
    let mut list: Vec<_> = inventory::iter::<PassRegistration>.into_iter().collect();
    list.sort_by(|a, b| ((a.ir_name)(), &a.info.name).cmp(&((b.ir_name)(), &b.info.name)));
    list
}

/// The registered instruments, sorted by name.
pub fn instruments() -> Vec<&'static InstrumentRegistration> {
    let mut list: Vec<_> = table().instruments.values().map(|e| e.item).collect();
    list.sort_by_key(|r| r.name);
    list
}

/// A new instance of the instrument registered under `name`.
pub fn lookup_instrument(name: &str) -> Result<Arc<dyn PassInstrument>, RegistryError> {
    let instruments = &table().instruments;
    match instruments.get(name) {
        Some(Entry {
            item,
            duplicate: None,
        }) => Ok((item.create)()),
        Some(Entry {
            item,
            duplicate: Some(dup),
        }) => Err(Duplicate::error(
            "instrument".to_string(),
            name,
            item.location,
            dup.location,
        )),
        None => {
            let suggestions = closest(name, instruments.keys().copied());
            Err(RegistryError::UnknownInstrument {
                name: name.to_string(),
                link_hint: suggestions.is_empty(),
                suggestions,
            })
        }
    }
}

/// Every registered config key, sorted by name, with its type and doc.
pub fn list_configs() -> Vec<&'static ConfigOption> {
    let mut list: Vec<_> = table().configs.values().map(|e| e.item).collect();
    list.sort_by_key(|o| o.name);
    list
}

/// The registered config key called `name`.
pub fn config_option(name: &str) -> Result<&'static ConfigOption, ConfigError> {
    let configs = &table().configs;
    match configs.get(name) {
        Some(Entry {
            item,
            duplicate: None,
        }) => Ok(item),
        Some(Entry {
            item,
            duplicate: Some(dup),
        }) => Err(Duplicate::error(
            "config option".to_string(),
            name,
            item.location,
            dup.location,
        )
        .into()),
        None => Err(ConfigError::UnknownKey {
            key: name.to_string(),
            suggestions: closest(name, configs.keys().copied()),
        }),
    }
}

/// Every name defined twice (passes per IR, instruments, config keys), as errors naming both
/// definitions. A program can call this at start-up to fail early.
pub fn check() -> Result<(), Vec<RegistryError>> {
    let t = table();
    let mut errors: Vec<RegistryError> = t
        .passes
        .values()
        .flat_map(|m| m.values())
        .filter_map(|e| {
            e.entry
                .duplicate
                .map(|dup| pass_duplicate(e.entry.item, dup))
        })
        .collect();
    for (name, e) in &t.instruments {
        if let Some(dup) = e.duplicate {
            errors.push(Duplicate::error(
                "instrument".to_string(),
                name,
                e.item.location,
                dup.location,
            ));
        }
    }
    for (name, e) in &t.configs {
        if let Some(dup) = e.duplicate {
            errors.push(Duplicate::error(
                "config option".to_string(),
                name,
                e.item.location,
                dup.location,
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}
