//! Pass statistics, as LLVM's `STATISTIC` and `-stats`: named counters a pass increments
//! ("calls folded"), printed per pass after a run (`irpass-opt --stats`).
//!
//! A counter is a `static` declared with [`statistic!`](crate::statistic), registered at link
//! time; counting is one relaxed atomic add, and nothing else happens until someone reads
//! them. Like LLVM's, the counters are process-wide: [`reset`] before a run and [`collected`]
//! after it give that run's counts (runs that overlap in time share them).
//!
//! ```
//! irpass::statistic! {
//!     /// Calls evaluated at compile time.
//!     static CALLS_FOLDED: "MyFold", "calls folded";
//! }
//!
//! irpass::stats::reset();
//! CALLS_FOLDED.add(3);
//! CALLS_FOLDED.inc();
//! let stats = irpass::stats::collected();
//! assert!(stats.iter().any(|s| s.pass == "MyFold" && s.value() == 4));
//! assert!(irpass::stats::render(&stats).contains("4 MyFold - calls folded"));
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

/// One counter: the pass it belongs to, what it counts, and its value.
#[derive(Debug)]
pub struct Statistic {
    /// The pass that counts (the name its report is grouped under).
    pub pass: &'static str,
    /// What is counted, as a short phrase ("constants folded").
    pub description: &'static str,
    value: AtomicU64,
}

impl Statistic {
    /// A counter at zero (what [`statistic!`](crate::statistic) declares).
    pub const fn new(pass: &'static str, description: &'static str) -> Self {
        Statistic {
            pass,
            description,
            value: AtomicU64::new(0),
        }
    }

    /// Adds `n`.
    pub fn add(&self, n: u64) {
        self.value.fetch_add(n, Ordering::Relaxed);
    }

    /// Adds one.
    pub fn inc(&self) {
        self.add(1);
    }

    /// The current value.
    pub fn value(&self) -> u64 {
        self.value.load(Ordering::Relaxed)
    }

    fn reset(&self) {
        self.value.store(0, Ordering::Relaxed);
    }
}

/// A registered counter (what [`statistic!`](crate::statistic) submits).
#[derive(Debug)]
pub struct Registered(pub &'static Statistic);

inventory::collect!(Registered);

/// Declares a counter and registers it: `static NAME: "Pass", "what is counted";`, with doc
/// comments and a visibility as for any `static`.
///
/// ```
/// irpass::statistic! {
///     /// Bindings removed.
///     pub static REMOVED: "MyDce", "bindings removed";
/// }
///
/// REMOVED.add(2);
/// assert!(REMOVED.value() >= 2);
/// assert_eq!(REMOVED.pass, "MyDce");
/// ```
#[macro_export]
macro_rules! statistic {
    ($(#[$meta:meta])* $vis:vis static $name:ident: $pass:literal, $description:literal;) => {
        $(#[$meta])*
        $vis static $name: $crate::stats::Statistic =
            $crate::stats::Statistic::new($pass, $description);
        $crate::__private::inventory::submit! {
            $crate::stats::Registered(&$name)
        }
    };
}

/// Sets every registered counter to zero.
pub fn reset() {
    for r in inventory::iter::<Registered>() {
        r.0.reset();
    }
}

/// Every registered counter, by pass, then by description (a library's counters exist only
/// when the program links it, as for passes).
pub fn registered() -> Vec<&'static Statistic> {
    let mut out: Vec<&'static Statistic> = inventory::iter::<Registered>().map(|r| r.0).collect();
    out.sort_by_key(|s| (s.pass, s.description));
    out
}

/// The counters that are not zero, by pass, then by description.
pub fn collected() -> Vec<&'static Statistic> {
    let mut out = registered();
    out.retain(|s| s.value() > 0);
    out
}

/// The counters as LLVM prints `-stats`: a banner, then `VALUE PASS - DESCRIPTION`, values
/// right-aligned; nothing at all when no counter moved.
pub fn render(stats: &[&Statistic]) -> String {
    if stats.is_empty() {
        return String::new();
    }
    let width = stats
        .iter()
        .map(|s| s.value().to_string().len())
        .max()
        .unwrap_or(1);
    let rule = "===-------------------------------------------------------------------------===";
    let title = "... Statistics Collected ...";
    let indent = " ".repeat((rule.len() - title.len()) / 2);
    let mut out = format!("{rule}\n{indent}{title}\n{rule}\n\n");
    for s in stats {
        out.push_str(&format!(
            "{:>width$} {} - {}\n",
            s.value(),
            s.pass,
            s.description
        ));
    }
    out
}
