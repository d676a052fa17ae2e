//! The irpass guide (documentation only: no items).
#![doc = include_str!("guide/mod.md")]

#[doc = include_str!("guide/concepts.md")]
pub mod concepts {}

#[doc = include_str!("guide/semantics.md")]
pub mod semantics {}

#[doc = include_str!("guide/reference_ir.md")]
pub mod reference_ir {}

#[doc = include_str!("guide/rewrites.md")]
pub mod rewrites {}

#[doc = include_str!("guide/onnx.md")]
pub mod onnx {}

#[doc = include_str!("guide/analyses.md")]
pub mod analyses {}

#[doc = include_str!("guide/own_ir.md")]
pub mod own_ir {}

#[doc = include_str!("guide/python.md")]
pub mod python {}

#[doc = include_str!("guide/driver.md")]
pub mod driver {}

#[doc = include_str!("guide/debugging.md")]
pub mod debugging {}

#[doc = include_str!("guide/downstream.md")]
pub mod downstream {}
