//! Running modules (with wasmi) to show a pipeline kept what they compute: the driver's
//! `--check N` and the tests use it.

use std::fmt::Write as _;

use irpass::BoxError;
use wasmi::{Config, Engine, ExternType, Linker, Module, Store, TrapCode, Val, ValType};

use crate::Wasm;

/// What one call did: the results' bits, or the trap's message ([`OUT_OF_FUEL`] for a call
/// stopped after [`FUEL`] units of work).
pub type Outcome = Result<Vec<u64>, String>;

/// The work one call may do (wasmi's fuel, about one unit an instruction): a loop driven by a
/// large argument is stopped instead of run for hours.
pub const FUEL: u64 = 1_000_000;

/// The outcome of a call that ran out of fuel: not compared, since a pipeline changes how much
/// work a call takes.
pub const OUT_OF_FUEL: &str = "out of fuel";

/// Calls every exported function of the binary module `bytes` `n` times, in export order, on
/// arguments drawn from a fixed seed (so two modules get the same calls), in one instance;
/// imported functions return zeros; each call may do [`FUEL`] units of work.
///
/// # Errors
/// A module wasmi cannot compile or instantiate.
pub fn run_exports(bytes: &[u8], n: usize) -> Result<Vec<(String, Vec<Outcome>)>, BoxError> {
    let engine = Engine::new(Config::default().consume_fuel(true));
    let module = Module::new(&engine, bytes)?;
    let mut linker = <Linker<()>>::new(&engine);
    for import in module.imports() {
        if let ExternType::Func(ty) = import.ty() {
            let results: Vec<ValType> = ty.results().to_vec();
            linker.func_new(
                import.module(),
                import.name(),
                ty.clone(),
                move |_, _, out| {
                    for (slot, ty) in out.iter_mut().zip(&results) {
                        *slot = Val::default_for_ty(*ty);
                    }
                    Ok(())
                },
            )?;
        }
    }
    let mut store = Store::new(&engine, ());
    store.set_fuel(FUEL)?;
    let instance = linker.instantiate_and_start(&mut store, &module)?;
    let funcs: Vec<(String, wasmi::Func)> = instance
        .exports(&store)
        .filter_map(|e| Some((e.name().to_string(), e.into_func()?)))
        .collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut all = Vec::new();
    for (name, func) in funcs {
        let ty = func.ty(&store);
        let mut outcomes = Vec::with_capacity(n);
        for _ in 0..n {
            let args: Vec<Val> = ty.params().iter().map(|t| draw(*t, &mut seed)).collect();
            let mut out: Vec<Val> = ty
                .results()
                .iter()
                .map(|t| Val::default_for_ty(*t))
                .collect();
            store.set_fuel(FUEL)?;
            outcomes.push(match func.call(&mut store, &args, &mut out) {
                Ok(()) => Ok(out.iter().map(bits).collect()),
                Err(e) if e.as_trap_code() == Some(TrapCode::OutOfFuel) => Err(OUT_OF_FUEL.into()),
                Err(e) => Err(e.to_string()),
            });
        }
        all.push((name, outcomes));
    }
    Ok(all)
}

/// How two modules' runs agreed ([`compare`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Agreement {
    /// The exported functions run.
    pub exports: usize,
    /// Calls that ran to the end in both modules, each with the same outcome.
    pub compared: usize,
    /// Calls that ran out of fuel in either module, not compared.
    pub out_of_fuel: usize,
}

/// Runs both binary modules' exports `n` times each ([`run_exports`]) and compares the
/// outcomes of the calls that ran to the end in both.
///
/// # Errors
/// A module that cannot be run, exports that differ, or the first call whose outcome differs.
pub fn compare(before: &[u8], after: &[u8], n: usize) -> Result<Agreement, BoxError> {
    let (before, after) = (run_exports(before, n)?, run_exports(after, n)?);
    if before
        .iter()
        .map(|(f, _)| f)
        .ne(after.iter().map(|(f, _)| f))
    {
        return Err("the exported functions differ".into());
    }
    let mut agreement = Agreement {
        exports: before.len(),
        compared: 0,
        out_of_fuel: 0,
    };
    for ((name, a), (_, b)) in before.iter().zip(&after) {
        for (i, (a, b)) in a.iter().zip(b).enumerate() {
            let out_of_fuel = |o: &Outcome| o.as_ref().err().is_some_and(|e| e == OUT_OF_FUEL);
            if out_of_fuel(a) || out_of_fuel(b) {
                agreement.out_of_fuel += 1;
                continue;
            }
            if a != b {
                return Err(format!("`{name}`, call {i}: {a:?} before, {b:?} after").into());
            }
            agreement.compared += 1;
        }
    }
    Ok(agreement)
}

/// The driver's `--check N`: [`compare`] on both modules, written, as a one-line summary.
///
/// # Errors
/// A module that cannot be written, or what [`compare`] says.
pub fn check(before: &Wasm, after: &Wasm, n: usize) -> Result<String, BoxError> {
    let a = compare(&before.write()?, &after.write()?, n)?;
    let mut summary = format!("{} calls of {} exports agree", a.compared, a.exports);
    if a.out_of_fuel > 0 {
        let _ = write!(
            summary,
            " ({} more ran out of fuel, not compared)",
            a.out_of_fuel
        );
    }
    Ok(summary)
}

/// An argument of type `ty`: small and edge values first, then pseudo-random ones.
fn draw(ty: ValType, seed: &mut u64) -> Val {
    *seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    let r = *seed >> 11;
    let pick = match r % 4 {
        0 => r % 17,
        1 => u64::MAX - r % 17,
        2 => 1 << (r % 63),
        _ => r,
    };
    match ty {
        ValType::I32 => Val::I32(pick as i32),
        ValType::I64 => Val::I64(pick as i64),
        ValType::F32 => Val::F32((pick as f32).into()),
        ValType::F64 => Val::F64((pick as f64).into()),
        other => Val::default_for_ty(other),
    }
}

/// A value's bits, for comparing (NaNs compare by their bits).
fn bits(v: &Val) -> u64 {
    match v {
        Val::I32(x) => u64::from(*x as u32),
        Val::I64(x) => *x as u64,
        Val::F32(x) => u64::from(x.to_bits()),
        Val::F64(x) => x.to_bits(),
        _ => 0,
    }
}
