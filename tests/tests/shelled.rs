//! `irpass::shell`: an IR edited in place, made a module value by taking its bodies out of a
//! shared shell. What the framework needs an older module for keeps working: the module a
//! failing pass was given is written whole, functions dropped by a later value included.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use irpass::shell::{Shell, Shelled, TakenOut};
use irpass::{
    FunctionPass, IrModule, ModulePass, Pass, PassContext, PassInfo, PassKind, Sequential,
};

/// An in-place IR: functions by number, each a list of values, one declared without a body;
/// it counts its writes, and refuses to write a module that drops function 0.
struct Slots {
    bodies: Vec<(u32, Vec<i64>)>,
    extern_fn: u32,
    writes: AtomicUsize,
    /// What the last write was told to leave out.
    last_dropped: Vec<u32>,
}

impl Shell for Slots {
    type Key = u32;
    type Body = Vec<i64>;
    type Written = String;
    fn ir_name() -> &'static str {
        "slots"
    }
    fn take_out(&self) -> TakenOut<u32, Vec<i64>> {
        TakenOut {
            functions: self.bodies.iter().rev().cloned().collect(),
            declarations: vec![self.extern_fn],
        }
    }
    fn write(&mut self, bodies: &[(&u32, &Vec<i64>)], dropped: &[u32]) -> irpass::Result<String> {
        self.writes.fetch_add(1, Ordering::Relaxed);
        self.last_dropped = dropped.to_vec();
        if dropped.contains(&0) {
            return Err("function 0 is the entry point".into());
        }
        Ok(bodies
            .iter()
            .map(|(k, b)| format!("f{k} = {b:?}\n"))
            .collect())
    }
    fn print(written: &String, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(written)
    }
}

fn module() -> Shelled<Slots> {
    Shelled::new(Slots {
        bodies: vec![(0, vec![1]), (1, vec![2, 3]), (2, vec![4])],
        extern_fn: 9,
        writes: AtomicUsize::new(0),
        last_dropped: Vec::new(),
    })
}

struct Double(PassInfo);
impl FunctionPass<Shelled<Slots>> for Double {
    fn info(&self) -> &PassInfo {
        &self.0
    }
    fn transform_function(
        &self,
        f: Arc<Vec<i64>>,
        _: &Shelled<Slots>,
        _: &PassContext,
    ) -> irpass::Result<Arc<Vec<i64>>> {
        Ok(Arc::new(f.iter().map(|v| v * 2).collect()))
    }
}

/// Drops the functions whose key is `self.1` or more, then fails if `self.2`.
struct DropFrom(PassInfo, u32, bool);
impl ModulePass<Shelled<Slots>> for DropFrom {
    fn info(&self) -> &PassInfo {
        &self.0
    }
    fn transform_module(
        &self,
        mut m: Shelled<Slots>,
        _: &PassContext,
    ) -> irpass::Result<Shelled<Slots>> {
        m.retain(|k, _| *k < self.1);
        if self.2 {
            return Err("gave up".into());
        }
        Ok(m)
    }
}

fn double() -> Pass<Shelled<Slots>> {
    Pass::function(Double(PassInfo::new("Double", 0, PassKind::Function)))
}

fn drop_from(from: u32, fail: bool) -> Pass<Shelled<Slots>> {
    Pass::module(DropFrom(
        PassInfo::new("DropFrom", 0, PassKind::Module),
        from,
        fail,
    ))
}

#[test]
fn functions_are_in_key_order_and_declarations_apart() {
    let m = module();
    let keys: Vec<u32> = m.functions().map(|(k, _)| *k).collect();
    assert_eq!(keys, [0, 1, 2], "taken out in reverse, kept in key order");
    assert_eq!(m.declarations().copied().collect::<Vec<_>>(), [9]);
    assert_eq!(m.function(&1).map(|b| b.as_slice()), Some(&[2, 3][..]));
}

#[test]
fn a_function_pass_replaces_bodies_by_key_and_the_runner_sees_the_change() {
    let m = module();
    let out = double().run(m.clone()).unwrap();
    assert_eq!(out.to_string(), "f0 = [2]\nf1 = [4, 6]\nf2 = [8]\n");
    assert!(!out.same_as(&m));
    assert_eq!(
        m.to_string(),
        "f0 = [1]\nf1 = [2, 3]\nf2 = [4]\n",
        "the input value is unchanged"
    );
}

#[test]
fn a_failing_pass_keeps_the_module_it_was_given_which_is_written_whole() {
    let doubled_then_failing = Sequential::new([double(), drop_from(1, true)]).unwrap();
    let err = Pass::from(doubled_then_failing).run(module()).unwrap_err();
    assert_eq!(err.module().function_count(), 3);
    assert_eq!(
        err.module().to_string(),
        "f0 = [2]\nf1 = [4, 6]\nf2 = [8]\n"
    );
    // A later value dropped functions; the earlier one still writes them.
    let m = module();
    let smaller = drop_from(2, false).run(m.clone()).unwrap();
    assert_eq!(smaller.to_string(), "f0 = [1]\nf1 = [2, 3]\n");
    assert_eq!(m.to_string(), "f0 = [1]\nf1 = [2, 3]\nf2 = [4]\n");
}

#[test]
fn a_module_the_shell_cannot_write_fails_verification_and_says_why() {
    let broken = drop_from(0, false).run(module()).unwrap();
    let err = broken.verify().unwrap_err().to_string();
    assert!(err.contains("function 0 is the entry point"), "{err}");
    assert!(broken.to_string().contains("cannot be written"));
}

#[test]
fn nothing_is_written_unless_asked() {
    let m = module();
    let out = Sequential::new([double(), double()]).unwrap();
    let out = Pass::from(out).run(m).unwrap();
    assert_eq!(out.shell().writes.load(Ordering::Relaxed), 0);
    assert!(out.verify().is_ok());
    assert_eq!(out.shell().writes.load(Ordering::Relaxed), 1);
}

#[test]
fn a_function_added_by_one_value_is_left_out_by_the_others() {
    let m = module();
    let mut grown = m.clone();
    grown.insert(7, vec![70]);
    assert_eq!(grown.function_count(), 4);
    assert_eq!(
        grown.to_string(),
        "f0 = [1]\nf1 = [2, 3]\nf2 = [4]\nf7 = [70]\n"
    );
    assert_eq!(m.to_string(), "f0 = [1]\nf1 = [2, 3]\nf2 = [4]\n");
    assert_eq!(
        m.shell().last_dropped,
        [7],
        "the older value's write leaves f7 out"
    );
    let _ = grown.to_string();
    assert!(grown.shell().last_dropped.is_empty());
    // Inserting an existing key replaces its body.
    grown.insert(1, vec![9]);
    assert!(grown.to_string().contains("f1 = [9]\n"));
}
