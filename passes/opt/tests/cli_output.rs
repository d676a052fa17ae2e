//! `irpass-opt`'s output under faults: a write that fails midway leaves the previous output
//! file as it was, a full stdout is an error, a closed stdout pipe ends quietly, and a full
//! stderr never turns into a panic. Real processes, real files and pipes.

mod cli_support;

use cli_support::{irpass_opt, model, text};

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

/// The files in `dir`.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_write_cut_short_by_a_file_size_limit_leaves_the_previous_output_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.relay");
    let previous = "#[version = \"0.0.5\"]\ndef @main(%x: float32) { %x }\n";
    std::fs::write(&out, previous).unwrap();
    // A 1-block file-size limit (512 bytes in `sh`'s units) with SIGXFSZ ignored, so the
    // write fails with an error instead of a signal; the module's text is several kilobytes.
    let run = Command::new("sh")
        .args(["-c", "trap '' XFSZ; ulimit -f 1; exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_irpass-opt"))
        .args([&model("resnet_block"), "-O0", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cannot write") && err.contains("out.relay"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), previous);
    assert_eq!(
        listing(dir.path()),
        ["out.relay"],
        "no temporary file is left behind"
    );
}

#[test]
fn a_complete_write_replaces_the_output_and_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.relay");
    std::fs::write(&out, "old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    let run = irpass_opt()
        .args([&model("mlp"), "-O3", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .starts_with("#[version")
    );
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    assert_eq!(listing(dir.path()), ["out.relay"]);
    // A new file gets rw-r--r-- (less the umask, which may only remove bits).
    let fresh = dir.path().join("fresh.relay");
    let run = irpass_opt()
        .args([&model("mlp"), "-O0", "-o"])
        .arg(&fresh)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run.stderr));
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & !0o644, 0, "{mode:o}");
    assert_ne!(mode & 0o600, 0, "{mode:o}");
}

#[test]
fn an_output_that_is_a_symbolic_link_stays_one_and_its_target_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.relay");
    let link = dir.path().join("link.relay");
    std::fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let run = irpass_opt()
        .args([&model("mlp"), "-O0", "-o"])
        .arg(&link)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(link.is_symlink(), "the link was replaced by a file");
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .starts_with("#[version")
    );
    assert_eq!(listing(dir.path()), ["link.relay", "target.relay"]);
}

#[test]
fn a_directory_in_the_way_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let run = irpass_opt()
        .args([&model("mlp"), "-O0", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(err.starts_with("irpass-opt: error: cannot write"), "{err}");
    assert!(dir.path().is_dir());
}

#[test]
fn an_output_in_a_missing_directory_says_the_directory_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("no/such/out.relay");
    let run = irpass_opt()
        .args([&model("mlp"), "-O0", "-o"])
        .arg(&target)
        .output()
        .unwrap();
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    let wanted = format!(
        "cannot write `{}`: the directory `{}` does not exist",
        target.display(),
        dir.path().join("no/such").display()
    );
    assert!(err.contains(&wanted), "{err}");
    assert!(
        !err.contains(".irpass-out-"),
        "no temporary file's name: {err}"
    );
}

#[test]
fn a_full_stdout_is_an_error_not_a_silent_success() {
    let run = irpass_opt()
        .args([&model("mlp"), "-O3"])
        .stdout(File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write to stdout"), "{err}");
}

#[test]
fn a_closed_stdout_pipe_ends_the_output_quietly() {
    // Output far larger than a pipe's buffer, and the reading end closed before reading: the
    // writer must meet the closed pipe.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.relay");
    std::fs::write(
        &input,
        irpass_passes::ir::models::mlp_chain(3000).to_string(),
    )
    .unwrap();
    let mut child = irpass_opt()
        .arg(&input)
        .arg("-O0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(err, "");
}

#[test]
fn a_full_stderr_never_panics_and_the_output_is_still_written() {
    // Without an input the driver says on stderr which model it optimises, and the timing
    // tree goes there too: both writes fail.
    let run = irpass_opt()
        .args(["-O3", "--time-passes"])
        .stderr(File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0));
    assert!(text(&run.stdout).starts_with("#[version = \"0.0.5\"]"));
}
