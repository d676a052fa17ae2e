//! The driver's output: stderr messages and the result file.

use std::io::Write;
use std::path::Path;

use super::failure::Failure;

/// Writes a message to stderr. A closed or full stderr loses the message but never panics
/// (`eprintln!` would) nor changes the outcome: there is nowhere left to report to.
pub(super) fn say(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.flush());
}

/// Writes the result: to `path` atomically, or to stdout.
///
/// A regular file is written whole to a temporary file beside it, and only then renamed over
/// `path`: a write that fails midway (disk full, a file-size limit) leaves what was at `path`
/// untouched, and no other process ever reads a half-written file. As with compilers (rustc,
/// LLVM's tools) and `cp`, the file is not forced to disk before the rename (no `fsync`): a
/// machine that loses power right after may lose it, and a model's run does not wait for its
/// disk (`fsync` took as long as the rest of the run on a 47 MB model). Anything else at
/// `path` (a device, a pipe) is written in place; a symbolic link stays a link, and the file
/// it points to is replaced. The file keeps the permissions of the one it replaces (a new one
/// gets `rw-r--r--`, before the umask). On stdout, a write error is an error (exit 1), except
/// a closed pipe (`irpass-opt ... | head`), which ends the output quietly.
pub(super) fn write_output(path: Option<&Path>, text: &str) -> Result<(), Failure> {
    write_bytes(path, text.as_bytes())
}

/// Writes the files a format puts beside its output (`-o`'s folder), each atomically, before
/// the output itself: a reader of the output never finds its data missing.
pub(super) fn write_beside(
    output: Option<&Path>,
    files: &[(String, Vec<super::Piece>)],
) -> Result<(), Failure> {
    if files.is_empty() {
        return Ok(());
    }
    let Some(output) = output else {
        return Err(Failure(
            format!(
                "the output has files beside it ({}), so it needs `-o FILE`, not stdout",
                files
                    .iter()
                    .map(|(n, _)| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            2,
        ));
    };
    let dir = output.parent().unwrap_or(Path::new(""));
    for (name, pieces) in files {
        let plain = Path::new(name).components().count() == 1
            && matches!(
                Path::new(name).components().next(),
                Some(std::path::Component::Normal(_))
            );
        if !plain {
            return Err(Failure(
                format!("a file beside the output must be a plain file name, not `{name}`"),
                1,
            ));
        }
        let pieces: Vec<&[u8]> = pieces.iter().map(|p| (**p).as_ref()).collect();
        write_pieces(Some(&dir.join(name)), &pieces)?;
    }
    Ok(())
}

/// Writes `bytes` to `path` (replacing it atomically) or to stdout.
pub(super) fn write_bytes(path: Option<&Path>, text: &[u8]) -> Result<(), Failure> {
    write_pieces(path, &[text])
}

/// Writes `pieces`, one after another, to `io`.
fn write_all_pieces(io: &mut impl Write, pieces: &[&[u8]]) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, io);
    for p in pieces {
        out.write_all(p)?;
    }
    out.flush()
}

/// Pieces at least this large that are a mapped file's bytes ([`crate::mapped`]) are copied
/// from that file by the kernel instead of written from memory.
const KERNEL_COPY: usize = 1 << 20;

/// Writes `pieces`, one after another, to the regular file `file`: a large piece that lies in
/// a mapped file is copied from it file to file (`copy_file_range` on Linux, through
/// `std::io::copy`), so weights that pass through a run unchanged are never read into this
/// process (nor counted in its memory).
fn write_file_pieces(file: &mut std::fs::File, pieces: &[&[u8]]) -> std::io::Result<()> {
    use std::io::{Read, Seek};
    let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut *file);
    let mut at = 0u64;
    for p in pieces {
        let source = (p.len() >= KERNEL_COPY)
            .then(|| crate::mapped::source_of(p))
            .flatten();
        let Some(source) = source else {
            out.write_all(p)?;
            at += p.len() as u64;
            continue;
        };
        out.flush()?;
        // The file mapped, not whatever has its name now (a file renamed over it).
        let mut from = source.file.try_clone()?;
        from.seek(std::io::SeekFrom::Start(source.offset))?;
        let copied = std::io::copy(&mut from.take(p.len() as u64), out.get_mut())?;
        if copied != p.len() as u64 {
            // The file is shorter than its mapping says: it changed under the run.
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("`{}` changed while it was read", source.path.display()),
            ));
        }
        at += copied;
    }
    out.flush()?;
    drop(out);
    debug_assert_eq!(file.stream_position().ok(), Some(at));
    Ok(())
}

/// Writes the concatenation of `pieces` to `path` (replacing it atomically) or to stdout.
pub(super) fn write_pieces(path: Option<&Path>, pieces: &[&[u8]]) -> Result<(), Failure> {
    let Some(path) = path else {
        let mut stdout = std::io::stdout().lock();
        return match write_all_pieces(&mut stdout, pieces) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(e) => Err(Failure(format!("cannot write to stdout: {e}"), 1)),
        };
    };
    let fail = |e: std::io::Error| Failure(format!("cannot write `{}`: {e}", path.display()), 1);
    // A symbolic link stays one: the file it points to is what gets replaced.
    let resolved = std::fs::canonicalize(path).ok();
    let path = match &resolved {
        Some(target) if path.is_symlink() => target.as_path(),
        _ => path,
    };
    let existing = std::fs::metadata(path).ok();
    if existing.as_ref().is_some_and(|m| !m.is_file()) {
        // Not a regular file (`/dev/stdout`, a pipe, a directory): written in place, as
        // renaming over it would replace the device or fail.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(fail)?;
        return write_all_pieces(&mut file, pieces).map_err(fail);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        let what = if dir.exists() {
            "is not a directory"
        } else {
            "does not exist"
        };
        return Err(Failure(
            format!(
                "cannot write `{}`: the directory `{}` {what}",
                path.display(),
                dir.display()
            ),
            1,
        ));
    }
    let mut builder = tempfile::Builder::new();
    builder.prefix(".irpass-out-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = existing.map_or(0o644, |m| m.permissions().mode());
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    let mut file = builder.tempfile_in(dir).map_err(fail)?;
    write_file_pieces(file.as_file_mut(), pieces).map_err(fail)?;
    file.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}
