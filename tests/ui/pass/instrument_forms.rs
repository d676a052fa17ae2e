//! Every accepted form of `#[pass_instrument]`.

use std::error::Error;
use std::sync::Mutex;

use irpass::doc_toy::{Toy, append, failing};
use irpass::analysis::AnalysisEvent;
use irpass::instrument::{Locked, SkipReason};
use irpass::{ModuleView, PassContext, PassInfo, pass_instrument, registry};

/// Every hook, `&self`, values and `Result`s returned.
#[derive(Default)]
struct Everything(Mutex<Vec<String>>);

impl Everything {
    fn log(&self, s: String) {
        self.0.lock().unwrap().push(s);
    }
}

/// Logs every hook.
#[pass_instrument(default, name = "LogAll")]
impl Everything {
    fn enter_pass_ctx(&self) -> irpass::Result<()> {
        self.log("enter".into());
        Ok(())
    }
    fn exit_pass_ctx(&self) {
        self.log("exit".into());
    }
    fn should_run(&self, _module: &dyn ModuleView, info: &PassInfo) -> Result<bool, String> {
        Ok(info.name != "Skipped")
    }
    fn run_before_pass(&self, module: &dyn ModuleView, info: &PassInfo) {
        self.log(format!("before {} ({} functions)", info.name, module.dyn_function_count()));
    }
    fn run_after_pass(&self, _module: &dyn ModuleView, info: &PassInfo) {
        self.log(format!("after {}", info.name));
    }
    fn run_after_pass_failed(&self, _module: &dyn ModuleView, info: &PassInfo, _error: &(dyn Error + 'static)) {
        self.log(format!("failed {}", info.name));
    }
    fn run_skipped_pass(&self, _module: &dyn ModuleView, info: &PassInfo, reason: &SkipReason) {
        self.log(format!("skipped {}: {reason}", info.name));
    }
    fn on_analysis(&self, _event: &AnalysisEvent<'_>) {}
}

/// `&self` and `&mut self` mixed: used through `Locked`.
#[derive(Default)]
struct Mixed {
    count: usize,
}

#[pass_instrument]
impl Mixed {
    fn should_run(&self, _module: &dyn ModuleView, _info: &PassInfo) -> bool {
        self.count < 100
    }
    fn run_after_pass(&mut self, _module: &dyn ModuleView, _info: &PassInfo) {
        self.count += 1;
    }
}

fn main() {
    let ctx = PassContext::builder()
        .instrument(Everything::default())
        .instrument(Locked::new(Mixed::default()))
        .build()
        .unwrap();
    {
        let _guard = ctx.enter().unwrap();
        append("A", 0, 1).run(Toy::with_main()).unwrap();
        append("Skipped", 0, 1).run(Toy::with_main()).unwrap();
        assert!(failing("Bad").run(Toy::with_main()).is_err());
    }
    let log = ctx.instrument::<Everything>().unwrap().0.lock().unwrap().clone();
    assert_eq!(
        log,
        [
            "enter",
            "before A (1 functions)",
            "after A",
            "skipped Skipped: instrument `LogAll` said it should not run",
            "before Bad (1 functions)",
            "failed Bad",
            "exit",
        ]
    );
    assert_eq!(ctx.instrument::<Locked<Mixed>>().unwrap().lock().count, 1);
    assert_eq!(registry::lookup_instrument("LogAll").unwrap().name(), "LogAll");
}
