//! The parsed form of a textual pipeline, its printing, and building it into a pass.

use std::fmt;

use crate::registry;
use crate::{IrModule, Pass, RegistryError, Sequential};

/// An option value.
#[derive(Clone, Debug, PartialEq)]
pub enum OptionValue {
    /// A number (kept as written, so printing gives it back).
    Number(String),
    /// `true` or `false`.
    Bool(bool),
    /// A string (quoted or a bare word).
    Str(String),
    /// `[a, b, ...]`.
    List(Vec<OptionValue>),
}

impl OptionValue {
    /// The value as JSON, for serde.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            OptionValue::Number(n) => {
                serde_json::from_str(n).unwrap_or_else(|_| serde_json::Value::String(n.clone()))
            }
            OptionValue::Bool(b) => serde_json::Value::Bool(*b),
            OptionValue::Str(s) => serde_json::Value::String(s.clone()),
            OptionValue::List(items) => {
                serde_json::Value::Array(items.iter().map(OptionValue::to_json).collect())
            }
        }
    }
}

/// Whether a string prints as a bare word (no quotes needed).
pub(crate) fn is_bare(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
        && s != "true"
        && s != "false"
}

impl fmt::Display for OptionValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::Number(n) => f.write_str(n),
            OptionValue::Bool(b) => write!(f, "{b}"),
            OptionValue::Str(s) if is_bare(s) => f.write_str(s),
            OptionValue::Str(s) => write!(f, "{}", serde_json::Value::String(s.clone())),
            OptionValue::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// One element of a pipeline.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// A registered pass, with options (`Name{k=v}`) or without.
    Pass {
        /// Its registered name.
        name: String,
        /// Its options, in the order written (`None`: none written).
        options: Option<Vec<(String, OptionValue)>>,
    },
    /// `name(a,b)`: a nested Sequential.
    Nested {
        /// The Sequential's name.
        name: String,
        /// Its elements.
        pipeline: PipelineSpec,
    },
    /// `fixpoint(a,b)` or `fixpoint<N>(a,b)`: the elements run in rounds until one changes
    /// nothing, at most `N` rounds ([`Sequential::fixpoint`]).
    Fixpoint {
        /// The bound written (`None`: [`crate::DEFAULT_MAX_ROUNDS`]).
        max_rounds: Option<u32>,
        /// Its elements.
        pipeline: PipelineSpec,
    },
}

/// A parsed pipeline: steps in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PipelineSpec(pub Vec<Step>);

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Pass { name, options } => {
                f.write_str(name)?;
                if let Some(options) = options {
                    f.write_str("{")?;
                    for (i, (k, v)) in options.iter().enumerate() {
                        if i > 0 {
                            f.write_str(",")?;
                        }
                        write!(f, "{k}={v}")?;
                    }
                    f.write_str("}")?;
                }
                Ok(())
            }
            Step::Nested { name, pipeline } => write!(f, "{name}({pipeline})"),
            Step::Fixpoint {
                max_rounds: None,
                pipeline,
            } => write!(f, "{}({pipeline})", crate::FIXPOINT_NAME),
            Step::Fixpoint {
                max_rounds: Some(n),
                pipeline,
            } => write!(f, "{}<{n}>({pipeline})", crate::FIXPOINT_NAME),
        }
    }
}

impl fmt::Display for PipelineSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

/// Why a parsed pipeline could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildPipelineError {
    /// A name is not registered, or its options do not fit.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A nested Sequential does not resolve (unknown requirement, cycle).
    #[error(transparent)]
    Build(#[from] crate::BuildError),
}

impl BuildPipelineError {
    /// The same error without the link hint (see [`RegistryError::without_link_hint`]).
    pub fn without_link_hint(self) -> Self {
        match self {
            BuildPipelineError::Registry(e) => BuildPipelineError::Registry(e.without_link_hint()),
            BuildPipelineError::Build(e) => BuildPipelineError::Build(e.without_link_hint()),
        }
    }

    /// Whether a pass named in the pipeline is not registered.
    pub fn is_unknown_pass(&self) -> bool {
        matches!(
            self,
            BuildPipelineError::Registry(RegistryError::UnknownPass { .. })
        )
    }
}

impl PipelineSpec {
    /// The pipeline as one pass for IR `M`: a Sequential of the steps (always one, so that
    /// the context's enabling rules apply to every named pass, a single one included).
    ///
    /// # Errors
    /// An unknown pass (with the closest names, or the link idiom when none is close), bad options, or a pipeline
    /// whose requirements do not resolve.
    pub fn build<M: IrModule>(&self) -> Result<Pass<M>, BuildPipelineError> {
        Ok(Sequential::new(self.passes::<M>()?)?.into())
    }

    fn passes<M: IrModule>(&self) -> Result<Vec<Pass<M>>, BuildPipelineError> {
        self.0
            .iter()
            .map(|step| match step {
                Step::Pass {
                    name,
                    options: None,
                } => Ok(registry::lookup::<M>(name)?),
                Step::Pass {
                    name,
                    options: Some(options),
                } => {
                    let json = serde_json::Value::Object(
                        options
                            .iter()
                            .map(|(k, v)| (k.clone(), v.to_json()))
                            .collect(),
                    );
                    Ok(registry::lookup_with_options::<M>(name, &json)?)
                }
                Step::Nested { name, pipeline } => {
                    Ok(Sequential::named(name.clone(), pipeline.passes::<M>()?)?.into())
                }
                Step::Fixpoint {
                    max_rounds,
                    pipeline,
                } => Ok(Sequential::fixpoint(
                    pipeline.passes::<M>()?,
                    max_rounds.unwrap_or(crate::DEFAULT_MAX_ROUNDS),
                )?
                .into()),
            })
            .collect()
    }
}
