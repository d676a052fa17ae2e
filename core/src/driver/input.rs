//! The driver's input: a file (a large one mapped, so that a format's reader keeps views of
//! its weights where they lie), stdin, or nothing.

use std::io::Read;
use std::path::Path;

use bytes::Bytes;

use super::failure::Failure;

/// Files at least this large are mapped ([`crate::mapped`]) instead of read: their bytes
/// stay in the page cache, shared with every other reader, and a writer can hand them to the
/// kernel to copy into its output.
const LARGE_FILE: u64 = 1 << 20;

/// The whole content of the file at `path`.
///
/// # Errors
/// When the file cannot be opened or read.
pub(super) fn read_file(path: &Path) -> std::io::Result<Bytes> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len >= LARGE_FILE
        && let Ok(n) = usize::try_from(len)
        && let Ok(bytes) = crate::mapped::map_file(&file, path, 0, n)
    {
        return Ok(bytes);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(Bytes::from(bytes))
}

/// The bytes on stdin, named `<stdin>` in messages.
pub(super) fn read_stdin() -> Result<(String, Bytes), Failure> {
    let mut t = Vec::new();
    std::io::stdin()
        .read_to_end(&mut t)
        .map_err(|e| Failure(format!("cannot read stdin: {e}"), 1))?;
    Ok(("<stdin>".to_string(), Bytes::from(t)))
}

/// Whether stdin is a pipe or a file (`cat X | irpass-opt`, `irpass-opt < X`), rather than a
/// terminal, `/dev/null` or closed.
pub(super) fn stdin_has_input() -> bool {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata("/dev/stdin").is_ok_and(|m| {
            let t = m.file_type();
            t.is_fifo() || t.is_file() || t.is_socket()
        })
    }
    #[cfg(not(unix))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_file_reads_whole_and_a_small_one_too() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0, 17, LARGE_FILE as usize + 4097] {
            let content: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let path = dir.path().join(format!("f{len}"));
            std::fs::write(&path, &content).unwrap();
            assert_eq!(
                read_file(&path).unwrap(),
                Bytes::from(content),
                "{len} bytes"
            );
        }
        assert!(read_file(&dir.path().join("missing")).is_err());
    }
}
