//! [`ChromeTrace`]: pass timings as a Chrome trace (opens in Perfetto or `chrome://tracing`).

use std::collections::HashMap;
use std::error::Error;
use std::sync::Mutex;
use std::thread::{self, ThreadId};
use std::time::Instant;

use crate::{ModuleView, PassInfo};

#[derive(Clone, Debug)]
struct Event {
    name: String,
    start_us: f64,
    dur_us: f64,
    tid: u64,
}

/// Records every pass as a complete event (`"ph": "X"`) with its start, duration and thread.
/// Switched on by name (`IRPASS_INSTRUMENTS=ChromeTrace`), it writes the trace when the
/// context exits, to `$IRPASS_CHROME_TRACE`, or `irpass-trace.json` in the working directory.
#[derive(Debug)]
pub struct ChromeTrace {
    epoch: Instant,
    /// Where to write the trace when the context exits (none: the caller reads `to_json`).
    output: Option<std::path::PathBuf>,
    open: Mutex<HashMap<ThreadId, Vec<(String, Instant)>>>,
    events: Mutex<Vec<Event>>,
}

impl Default for ChromeTrace {
    /// The instrument as switched on by name: it writes its file when the context exits.
    fn default() -> Self {
        let path = std::env::var_os("IRPASS_CHROME_TRACE")
            .map_or_else(|| "irpass-trace.json".into(), Into::into);
        ChromeTrace {
            output: Some(path),
            ..ChromeTrace::new()
        }
    }
}

impl ChromeTrace {
    /// An empty trace, read with [`ChromeTrace::to_json`].
    pub fn new() -> Self {
        ChromeTrace {
            epoch: Instant::now(),
            output: None,
            open: Mutex::default(),
            events: Mutex::default(),
        }
    }

    fn close(&self, failed: bool) {
        let id = thread::current().id();
        let Some((name, start)) = self
            .open
            .lock()
            .ok()
            .and_then(|mut o| o.get_mut(&id).and_then(Vec::pop))
        else {
            return;
        };
        let tid = format!("{id:?}")
            .chars()
            .filter(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap_or(0);
        let event = Event {
            name: if failed {
                format!("{name} (failed)")
            } else {
                name
            },
            start_us: start.duration_since(self.epoch).as_secs_f64() * 1e6,
            dur_us: start.elapsed().as_secs_f64() * 1e6,
            tid,
        };
        if let Ok(mut e) = self.events.lock() {
            e.push(event);
        }
    }

    /// The trace in Chrome's JSON format.
    pub fn to_json(&self) -> serde_json::Value {
        let events = self.events.lock().map(|e| e.clone()).unwrap_or_default();
        let list: Vec<serde_json::Value> = events
            .iter()
            .map(|e| {
                serde_json::json!({
                    "name": e.name, "cat": "pass", "ph": "X",
                    "ts": e.start_us, "dur": e.dur_us, "pid": 1, "tid": e.tid,
                })
            })
            .collect();
        serde_json::json!({ "traceEvents": list, "displayTimeUnit": "ms" })
    }
}

/// Records each pass as a Chrome trace event.
#[crate::pass_instrument(default)]
impl ChromeTrace {
    fn run_before_pass(&self, _module: &dyn ModuleView, info: &PassInfo) {
        if let Ok(mut o) = self.open.lock() {
            o.entry(thread::current().id())
                .or_default()
                .push((info.name.to_string(), Instant::now()));
        }
    }
    fn run_after_pass(&self, _module: &dyn ModuleView, _info: &PassInfo) {
        self.close(false);
    }
    fn run_after_pass_failed(
        &self,
        _module: &dyn ModuleView,
        _info: &PassInfo,
        _error: &(dyn Error + 'static),
    ) {
        self.close(true);
    }
    fn exit_pass_ctx(&self) -> crate::Result<()> {
        if let Some(path) = &self.output {
            let json = serde_json::to_string(&self.to_json())?;
            std::fs::write(path, json)
                .map_err(|e| format!("cannot write the Chrome trace `{}`: {e}", path.display()))?;
        }
        Ok(())
    }
}
