//! `--list-passes`, `--list-configs`, `--list-instruments` and `--list-analyses`.

use crate::{IrModule, Pass, PassKind, registry};

/// The registered passes of IR `M`, one entry each: name, kind, opt level, requirements and
/// the first paragraph of the description. A registered Sequential (a named pipeline) also
/// says what it runs, read from the pipeline itself so the listing cannot drift from it.
pub(super) fn passes<M: IrModule>() -> String {
    let mut out = String::new();
    for reg in registry::passes::<M>() {
        let i = reg.info;
        let req: Vec<&str> = i.required_names().collect();
        let req = if req.is_empty() {
            String::new()
        } else {
            format!(" requires {}", req.join(", "))
        };
        out.push_str(&format!(
            "{:<26} {:<10} opt {}{}\n",
            i.name,
            i.kind.to_string(),
            i.opt_level,
            req,
        ));
        out.push_str(&wrap(i.summary(), "    ", "    "));
        if i.kind == PassKind::Sequential
            && let Ok(pass) = registry::lookup::<M>(&i.name)
        {
            out.push_str(&wrap(
                &format!("runs: {}", outline(&pass)),
                "    ",
                "        ",
            ));
        }
        for option in (reg.options)() {
            out.push_str(&option_line(&i.name, &option));
        }
    }
    out
}

/// The width `--list-passes` wraps its text at.
const WIDTH: usize = 100;

/// `text` in lines of at most [`WIDTH`] columns (a longer word gets a line of its own), the
/// first indented by `first`, the others by `rest`; each line ends with a newline.
fn wrap(text: &str, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = String::from(first);
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = String::from(rest);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    if !empty {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `    Name{key=...}: TYPE, default DEFAULT — what it does` (type and default when known),
/// wrapped.
fn option_line(pass: &str, o: &registry::OptionDoc) -> String {
    let mut line = format!("{pass}{{{}=...}}", o.name);
    if !o.type_name.is_empty() {
        line.push_str(&format!(": {}", o.type_name));
    }
    if !o.default.is_empty() {
        line.push_str(&format!(", default {}", o.default));
    }
    if !o.doc.is_empty() {
        line.push_str(&format!(" — {}", o.doc));
    }
    wrap(&line, "    ", "        ")
}

/// What a Sequential runs, as `A, B, C(D, E)` (a nested Sequential with its passes in
/// parentheses), then `; each after what it requires: X, Y` when passes require others.
pub(super) fn outline<M: IrModule>(pass: &Pass<M>) -> String {
    let mut required = Vec::new();
    let body = children(pass, &mut required);
    if required.is_empty() {
        body
    } else {
        format!(
            "{body}; each after what it requires: {}",
            required.join(", ")
        )
    }
}

fn children<M: IrModule>(pass: &Pass<M>, required: &mut Vec<String>) -> String {
    let parts: Vec<String> = pass
        .passes()
        .map(|p| {
            for r in p.info().required_names() {
                if !required.iter().any(|x| x == r) {
                    required.push(r.to_string());
                }
            }
            if p.info().kind == PassKind::Sequential {
                format!("{}({})", p.info().name, children(p, required))
            } else {
                p.info().name.to_string()
            }
        })
        .collect();
    parts.join(", ")
}

/// The registered config keys: name, value type, first line of the doc.
pub(super) fn configs() -> String {
    registry::list_configs()
        .into_iter()
        .map(|c| {
            format!(
                "{:<44} {:<20} {}\n",
                c.name,
                c.type_name,
                c.doc.lines().next().unwrap_or("")
            )
        })
        .collect()
}

/// The registered instruments: name and first line of the description.
pub(super) fn instruments() -> String {
    registry::instruments()
        .into_iter()
        .map(|i| {
            format!(
                "{:<20} {}\n",
                i.name,
                i.description.lines().next().unwrap_or("")
            )
        })
        .collect()
}

/// The registered analyses of IR `M`: name, kind and the first line of the description.
pub(super) fn analyses<M: IrModule>() -> String {
    crate::analysis::registered()
        .into_iter()
        .filter(|a| (a.ir_name)() == M::ir_name())
        .map(|a| {
            format!(
                "{:<20} {:<9} {}\n",
                a.name,
                a.kind.to_string(),
                a.description.lines().next().unwrap_or("")
            )
        })
        .collect()
}
