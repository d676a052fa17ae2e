//! Pass *types*: what lets `required = [SomeType]` name a pass by its Rust type, checked by rustc.

use crate::{IrModule, Pass};

/// A pass type with a fixed name that can be built without arguments.
///
/// `#[function_pass]` / `#[module_pass]` implement it for the struct of a pass defined on a
/// function, and for an impl-block pass marked `default`; `required = [SomeType]` takes any
/// type that implements it (the name goes into [`PassInfo::required`](crate::PassInfo), the
/// pass built by [`DefaultPass::default_pass`] is what runs first). A hand-written pass can
/// implement it too.
///
/// ```
/// use irpass::doc_toy::Toy;
/// use irpass::{DefaultPass, Pass};
///
/// /// Does nothing.
/// #[irpass::module_pass(opt_level = 0)]
/// fn keep(module: Toy) -> Toy { module }
///
/// assert_eq!(<Keep as DefaultPass<Toy>>::NAME, "Keep");
/// let pass: Pass<Toy> = Keep::default_pass();
/// assert_eq!(pass.info().description, "Does nothing.");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be named in `required = [...]` of a pass on `{M}`",
    label = "not a pass on `{M}` that can be built without arguments",
    note = "`required` takes pass types made by `#[function_pass]` / `#[module_pass]` on a function, impl-block passes marked `default`, or a pass name as a string literal"
)]
pub trait DefaultPass<M: IrModule> {
    /// The pass's registered name.
    const NAME: &'static str;

    /// Builds the pass.
    fn default_pass() -> Pass<M>;
}
