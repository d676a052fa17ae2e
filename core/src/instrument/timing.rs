//! [`PassTiming`]: a tree of pass timings, rendered like TVM's and as JSON.

use std::collections::HashMap;
use std::error::Error;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::thread::{self, ThreadId};
use std::time::Instant;

use serde::Serialize;

use super::{Sink, SkipReason};
use crate::analysis::AnalysisEvent;
use crate::{ModuleView, PassInfo, Result};

/// One timed pass run, with the passes it ran inside it (children of a Sequential, required
/// passes, passes called from its body).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TimingNode {
    /// The pass's name.
    pub name: String,
    /// Wall time of the whole run, nanoseconds.
    pub total_ns: u64,
    /// Whether the pass failed.
    pub failed: bool,
    /// Why the pass did not run, for a pass that was skipped (its time is zero).
    pub skipped: Option<String>,
    /// The runs nested in it, in order.
    pub children: Vec<TimingNode>,
}

impl TimingNode {
    /// A node with no time and no children yet.
    fn new(name: String) -> Self {
        TimingNode {
            name,
            total_ns: 0,
            failed: false,
            skipped: None,
            children: Vec::new(),
        }
    }

    /// Total time minus the children's total time, nanoseconds.
    pub fn self_ns(&self) -> u64 {
        self.total_ns
            .saturating_sub(self.children.iter().map(|c| c.total_ns).sum())
    }
}

#[derive(Default)]
struct State {
    roots: Vec<TimingNode>,
    open: HashMap<ThreadId, Vec<(TimingNode, Instant)>>,
    /// The thread that last opened a pass: a run finished on another thread with nothing
    /// open of its own (an analysis computed by a parallel function pass's worker) goes under
    /// that thread's innermost open run.
    pass_thread: Option<ThreadId>,
}

impl State {
    /// Opens a run named `name` on thread `id`, timed from now.
    fn open(&mut self, id: ThreadId, name: String) {
        self.open
            .entry(id)
            .or_default()
            .push((TimingNode::new(name), Instant::now()));
    }

    /// Records a pass that was skipped, as a leaf under the innermost open run of thread `id`.
    fn skipped(&mut self, id: ThreadId, name: &str, reason: String) {
        let node = TimingNode {
            skipped: Some(reason),
            ..TimingNode::new(name.to_string())
        };
        match self.open.get_mut(&id).and_then(|stack| stack.last_mut()) {
            Some((parent, _)) => parent.children.push(node),
            None => self.roots.push(node),
        }
    }

    /// Closes the innermost open run of thread `id`; false when it has none.
    fn close(&mut self, id: ThreadId, failed: bool) -> bool {
        let Some(stack) = self.open.get_mut(&id) else {
            return false;
        };
        let Some((mut node, start)) = stack.pop() else {
            return false;
        };
        node.total_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        node.failed = failed;
        match stack.last_mut() {
            Some((parent, _)) => parent.children.push(node),
            None => {
                self.open.remove(&id);
                let pass_parent = self
                    .pass_thread
                    .filter(|&t| t != id)
                    .and_then(|t| self.open.get_mut(&t))
                    .and_then(|stack| stack.last_mut());
                match pass_parent {
                    Some((parent, _)) => parent.children.push(node),
                    None => self.roots.push(node),
                }
            }
        }
        true
    }
}

/// Times every pass that runs and keeps the results as a tree.
///
/// The results stay readable after the context exits ([`PassTiming::roots`],
/// [`PassTiming::render`], [`PassTiming::to_json`]); a failed pass is recorded with its time and
/// marked failed, so the tree is consistent after a failure. [`PassTiming::render`] gives TVM's
/// format: `name: total [self] (percent of all; percent of parent)`, one tab per level. An
/// [analysis](crate::analysis) computed inside a pass is a node under it, `NAME (analysis)`,
/// so the pass's self time excludes it; in the text, one analysis's computations under one
/// pass (once per function) are one row, `NAME (analysis) ×COUNT`, the JSON keeps each. A pass that was skipped (opt level, disabled, vetoed)
/// has no row, as in TVM; it is in the tree ([`TimingNode::skipped`]), the JSON, and
/// [`PassTiming::render_with_skipped`]'s text as `name: skipped (why)`.
///
/// ```
/// use std::sync::Arc;
/// use irpass::{PassContext, Sequential, instrument::PassTiming};
/// use irpass::doc_toy::{Toy, append};
///
/// let timing = Arc::new(PassTiming::new());
/// let ctx = PassContext::builder().instrument_arc(timing.clone()).build().unwrap();
/// let seq = Sequential::named("opt", [append("A", 0, 1), append("B", 0, 2)]).unwrap();
/// seq.run_in(Toy::with_main(), &ctx).unwrap();
/// let roots = timing.roots();
/// assert_eq!(roots[0].name, "opt");
/// assert_eq!(roots[0].children.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["A", "B"]);
/// assert!(timing.render().starts_with("opt: "));
/// ```
///
/// Switched on by name (`IRPASS_INSTRUMENTS=PassTiming`, which builds it with
/// [`Default`]), it prints the tree to stderr when it is dropped with its context, so that a
/// program gets the report without code; [`PassTiming::new`] prints nothing by itself.
pub struct PassTiming {
    state: Mutex<State>,
    /// Where the tree goes when the instrument is dropped (switched on by name: stderr).
    report: Option<Sink>,
}

impl Default for PassTiming {
    /// The instrument as switched on by name: it prints its tree to stderr when dropped.
    fn default() -> Self {
        PassTiming::new().report_to(Sink::stderr())
    }
}

impl Drop for PassTiming {
    fn drop(&mut self) {
        let Some(sink) = &self.report else { return };
        let roots = self.roots();
        if !roots.is_empty() {
            let _ = sink.write_str(&render(&roots));
        }
    }
}

impl PassTiming {
    /// An empty timing instrument, read with [`PassTiming::roots`], [`PassTiming::render`] or
    /// [`PassTiming::to_json`].
    pub fn new() -> Self {
        PassTiming {
            state: Mutex::default(),
            report: None,
        }
    }

    /// Also prints the tree to `sink` when the instrument is dropped (what switching it on by
    /// name does, with stderr).
    pub fn report_to(mut self, sink: Sink) -> Self {
        self.report = Some(sink);
        self
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The finished top-level runs, in order.
    pub fn roots(&self) -> Vec<TimingNode> {
        self.state().roots.clone()
    }

    /// Forgets everything recorded so far.
    pub fn clear(&self) {
        *self.state() = State::default();
    }

    /// The tree as text, in TVM's format (microseconds; percentages of the total and of the
    /// parent, two decimals): one row per pass that ran.
    pub fn render(&self) -> String {
        render(&self.roots())
    }

    /// [`PassTiming::render`] with a row `name: skipped (why)` for each pass that did not run.
    pub fn render_with_skipped(&self) -> String {
        render_with_skipped(&self.roots())
    }

    /// The tree as JSON: a list of `{name, total_ns, self_ns, failed, skipped, children}`
    /// (`skipped` is the reason, or null).
    pub fn to_json(&self) -> serde_json::Value {
        fn node(n: &TimingNode) -> serde_json::Value {
            serde_json::json!({
                "name": n.name,
                "total_ns": n.total_ns,
                "self_ns": n.self_ns(),
                "failed": n.failed,
                "skipped": n.skipped,
                "children": n.children.iter().map(node).collect::<Vec<_>>(),
            })
        }
        serde_json::Value::Array(self.roots().iter().map(node).collect())
    }
}

/// Nanoseconds as whole microseconds, rounded to nearest as TVM prints them (`%.0f` of the
/// microseconds; a tie goes to the even neighbour, as printf does), not truncated.
fn micros(ns: u64) -> String {
    format!("{:.0}", ns as f64 / 1000.0)
}

/// Renders timing trees in TVM's text format: one row per pass that ran.
pub fn render(roots: &[TimingNode]) -> String {
    render_rows(roots, false)
}

/// [`render`], with a row `name: skipped (why)` for each pass that did not run.
pub fn render_with_skipped(roots: &[TimingNode]) -> String {
    render_rows(roots, true)
}

fn render_rows(roots: &[TimingNode], skipped: bool) -> String {
    fn percent(part: u64, whole: u64) -> f64 {
        if whole == 0 {
            0.0
        } else {
            part as f64 * 100.0 / whole as f64
        }
    }
    fn walk(
        out: &mut String,
        node: &TimingNode,
        count: usize,
        depth: usize,
        parent: u64,
        all: u64,
        skipped: bool,
    ) {
        if let Some(reason) = &node.skipped {
            if skipped {
                let _ = writeln!(
                    out,
                    "{}{}: skipped ({reason})",
                    "\t".repeat(depth),
                    node.name
                );
            }
            return;
        }
        let times = if count > 1 {
            format!(" ×{count}")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{}{}{times}: {}us [{}us] ({:.2}%; {:.2}%){}",
            "\t".repeat(depth),
            node.name,
            micros(node.total_ns),
            micros(node.self_ns()),
            percent(node.total_ns, all),
            percent(node.total_ns, parent),
            if node.failed { " FAILED" } else { "" }
        );
        for (child, count) in merge_analyses(&node.children) {
            walk(out, &child, count, depth + 1, node.total_ns, all, skipped);
        }
    }
    let all: u64 = roots.iter().map(|r| r.total_ns).sum();
    let mut out = String::new();
    for (root, count) in merge_analyses(roots) {
        walk(&mut out, &root, count, 0, all, all, skipped);
    }
    out
}

/// `nodes` with the computations of one analysis (`NAME (analysis)`, once per function of a
/// function analysis) merged into one node at the first one's place, with their count: a pass
/// over a thousand functions has one analysis row, not a thousand.
fn merge_analyses(nodes: &[TimingNode]) -> Vec<(TimingNode, usize)> {
    let mut out: Vec<(TimingNode, usize)> = Vec::with_capacity(nodes.len());
    for n in nodes {
        let analysis = n.skipped.is_none() && n.name.ends_with(" (analysis)");
        let same = out
            .iter_mut()
            .find(|(m, _)| analysis && m.skipped.is_none() && m.name == n.name);
        match same {
            Some((m, count)) => {
                m.total_ns = m.total_ns.saturating_add(n.total_ns);
                m.failed |= n.failed;
                m.children.extend(n.children.iter().cloned());
                *count += 1;
            }
            None => out.push((n.clone(), 1)),
        }
    }
    out
}

/// Times every pass and keeps the results as a tree (TVM's text format, JSON).
#[crate::pass_instrument(default)]
impl PassTiming {
    fn run_before_pass(&self, _module: &dyn ModuleView, info: &PassInfo) -> Result<()> {
        let mut state = self.state();
        state.open(thread::current().id(), info.name.to_string());
        state.pass_thread = Some(thread::current().id());
        Ok(())
    }

    fn run_after_pass(&self, _module: &dyn ModuleView, _info: &PassInfo) -> Result<()> {
        self.state().close(thread::current().id(), false);
        Ok(())
    }

    fn run_after_pass_failed(
        &self,
        _module: &dyn ModuleView,
        _info: &PassInfo,
        _error: &(dyn Error + 'static),
    ) -> Result<()> {
        self.state().close(thread::current().id(), true);
        Ok(())
    }

    /// An analysis computed while a pass runs is a node under it, named `NAME (analysis)`.
    fn on_analysis(&self, event: &AnalysisEvent<'_>) {
        match event {
            AnalysisEvent::Computing { analysis, .. } => {
                self.state()
                    .open(thread::current().id(), format!("{analysis} (analysis)"));
            }
            AnalysisEvent::Computed { .. } => {
                self.state().close(thread::current().id(), false);
            }
            _ => {}
        }
    }

    fn run_skipped_pass(&self, _module: &dyn ModuleView, info: &PassInfo, reason: &SkipReason) {
        self.state()
            .skipped(thread::current().id(), &info.name, reason.to_string());
    }

    fn exit_pass_ctx(&self) -> Result<()> {
        // Runs left open (a thread that stopped mid-pass) are closed as failed.
        let mut state = self.state();
        let ids: Vec<ThreadId> = state.open.keys().copied().collect();
        for id in ids {
            while state.close(id, true) {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{TimingNode, render, render_with_skipped};

    fn node(name: &str, total_ns: u64, children: Vec<TimingNode>) -> TimingNode {
        TimingNode {
            total_ns,
            children,
            ..TimingNode::new(name.to_string())
        }
    }

    #[test]
    fn microseconds_are_rounded_as_tvm_prints_them_not_truncated() {
        let tree = node(
            "seq",
            1_999_600,
            vec![node("A", 1_499_400, vec![]), node("B", 2_500, vec![])],
        );
        let text = render(&[tree]);
        let lines: Vec<&str> = text.lines().collect();
        // 1 999.6 us rounds to 2000; its own time, 497.7 us, to 498.
        assert!(lines[0].starts_with("seq: 2000us [498us] "), "{text}");
        assert!(lines[1].starts_with("\tA: 1499us [1499us] "), "{text}");
        // 2.5 us: a tie, to the even neighbour as `%.0f` does.
        assert!(lines[2].starts_with("\tB: 2us [2us] "), "{text}");
    }

    #[test]
    fn an_analysis_computed_for_many_functions_is_one_row_with_its_count() {
        let runs: Vec<TimingNode> = (0..1000)
            .map(|_| node("Types (analysis)", 2_000, vec![]))
            .chain([node("Uses (analysis)", 500, vec![])])
            .collect();
        let tree = node("Fold", 3_000_000, runs);
        let text = render(&[tree]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[1].starts_with("\tTypes (analysis) ×1000: 2000us [2000us] "),
            "{text}"
        );
        assert!(lines[2].starts_with("\tUses (analysis): 0us "), "{text}");
        // The pass's own time excludes them all.
        assert!(lines[0].starts_with("Fold: 3000us [1000us] "), "{text}");
    }

    #[test]
    fn skipped_passes_have_rows_only_when_asked_for() {
        let skipped = TimingNode {
            skipped: Some("its opt level 9 is above the context's 2".to_string()),
            ..TimingNode::new("B".to_string())
        };
        let tree = node("seq", 3_000, vec![node("A", 1_000, vec![]), skipped]);
        let tvm = render(std::slice::from_ref(&tree));
        assert_eq!(tvm.lines().count(), 2, "{tvm}");
        assert!(!tvm.contains("B"), "{tvm}");
        for line in tvm.lines() {
            let row = line.trim_start_matches('\t');
            assert!(
                row.ends_with("%)") && row.contains("us ["),
                "not TVM's row format: {row}"
            );
        }
        let all = render_with_skipped(&[tree]);
        assert!(
            all.lines()
                .any(|l| l == "\tB: skipped (its opt level 9 is above the context's 2)"),
            "{all}"
        );
    }
}
