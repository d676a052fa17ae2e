//! Every accepted form of the pass attributes on an impl block.

use std::sync::Arc;

use irpass::doc_toy::Toy;
use irpass::{Pass, PassContext, function_pass, module_pass, registry};
use serde::Deserialize;

type F = Arc<Vec<i64>>;

/// Built with `Default` and from options.
#[derive(Default, Deserialize)]
struct AddValue {
    value: i64,
}

/// Adds `value`.
#[function_pass(opt_level = 0, default, options)]
impl AddValue {
    fn transform_function(&self, func: F, _module: &Toy, _ctx: &PassContext) -> irpass::Result<F> {
        Ok(Arc::new(func.iter().map(|v| v + self.value).collect()))
    }
}

/// Built from options only.
#[derive(Deserialize)]
struct Rename {
    to: String,
}

/// Copies `main` under a new name.
#[module_pass(opt_level = 1, options, name = "CopyMain")]
impl Rename {
    fn transform_module(&self, mut module: Toy) -> Toy {
        module.insert(&self.to, vec![9]);
        module
    }

    fn unrelated_helper(&self) -> usize {
        self.to.len()
    }
}

/// A value in code only.
struct Fixed(i64);

#[function_pass(opt_level = 0, ir = Toy)]
impl Fixed {
    /// Sets every value.
    fn transform_function(&self, func: F) -> F {
        Arc::new(func.iter().map(|_| self.0).collect())
    }
}

fn main() {
    let mut module = Toy::default();
    module.insert("main", vec![1, 2]);
    let add = registry::lookup_with_options::<Toy>("AddValue", &serde_json::json!({"value": 10})).unwrap();
    let module = add.run(module).unwrap();
    assert_eq!(module.to_string(), "main = [11, 12]\n");
    assert!(registry::lookup::<Toy>("AddValue").is_ok());

    let copy = registry::lookup_with_options::<Toy>("CopyMain", &serde_json::json!({"to": "other"})).unwrap();
    let module = copy.run(module).unwrap();
    assert_eq!(module.to_string(), "main = [11, 12]\nother = [9]\n");
    assert!(registry::lookup::<Toy>("CopyMain").is_err(), "needs options");
    assert_eq!(Rename { to: "ab".into() }.unrelated_helper(), 2);

    let fixed: Pass<Toy> = Fixed(0).into();
    assert_eq!(fixed.info().description, "Sets every value.");
    assert_eq!(fixed.run(module).unwrap().to_string(), "main = [0, 0]\nother = [0]\n");
}
