//! `rules!`: rewrite rules for irpass's reference IR ([irpass-ir](https://docs.rs/irpass-ir)),
//! the pattern and the replacement written in the IR's own text syntax with holes, checked when
//! the crate compiles. Generated code names only `::irpass_ir::...` paths; through
//! `irpass_passes::rules!` it names `::irpass_passes::ir::...` instead, so a crate that
//! depends on the pass library alone can write rules.

mod rules;

use proc_macro::TokenStream;

/// Declares rule sets: `static`s of type `irpass_ir::pattern::RuleSet`, each a list of rules
/// `name: "PATTERN" [if GUARD] => REPLACEMENT;`.
///
/// - `PATTERN` is a pattern in the IR's syntax with holes (`"multiply(?x, 1f)"`; the grammar
///   is `irpass_ir::pattern::parse`'s).
/// - `REPLACEMENT` is a template over the holes (`"?x"`, `"multiply(?x, 2f)"`) or Rust code (a
///   block, a call) that computes the replacement, an `Option<ExprId>` (`None`: leave the match
///   alone).
/// - `GUARD` is a Rust condition. In guards and blocks, each hole is an `ExprId` variable of its
///   name, `root` is the matched node, `m` the match and `cx` the
///   `irpass_ir::pattern::RuleCx` (types, constants, a builder).
/// - `once name: ...` applies a rule in the first round only (TVM's `rewrite_once`).
/// - `exclusive name: ...` rewrites only matches whose inner values nothing outside the match
///   uses (a fusion that would otherwise compute a shared value twice); `cx.uses(e)` gives a
///   guard the count itself.
/// - `#[pass(name = "...", opt_level = N)]` on a set also registers it as a function pass of
///   that name (its doc comment is the pass's description).
///
/// A syntax error in a pattern or a template, a replacement using a hole the pattern does not
/// bind, a hole that is not a Rust identifier, or two rules of one name is a compile error on
/// the string or name at fault. An operator name no operator has is an error when the set is
/// first used (operators register at link time), with the closest names.
///
/// ```
/// use irpass_ir::Module;
/// use irpass_ir_macros::rules;
///
/// rules! {
///     /// Identities of multiplication.
///     pub static MUL: RuleSet = {
///         mul_one: "multiply(?x, ?one)" if cx.is_all(one, 1.0) && cx.same_type(x, root) => "?x";
///         double: "add(?x, ?x)" if cx.dtype(x).is_some_and(|d| d.is_float()) => "multiply(?x, 2f)";
///     };
/// }
///
/// let m = Module::parse("def @main(%a: float32) { add(multiply(%a, 1f), multiply(%a, 1f)) }").unwrap();
/// let f = m.get("main").unwrap();
/// let out = MUL.apply(&f.code, None).unwrap();
/// let text = Module::from_functions([("main", f.with_code(out))]).to_string();
/// assert!(text.contains("multiply(%a, 2f)"), "{text}");
/// ```
#[proc_macro]
pub fn rules(input: TokenStream) -> TokenStream {
    rules::expand(input.into()).into()
}
