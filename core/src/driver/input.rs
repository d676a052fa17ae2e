//! The driver's input: a file (a model's weights read once, into memory a format's reader
//! can keep views of), stdin, or nothing.

use std::io::{Read, Seek};
use std::path::Path;

use bytes::Bytes;

use super::failure::Failure;

/// Files at least this large are read into memory backed by huge pages where the system
/// offers them (Linux's transparent huge pages): one page fault per 2 MiB instead of per
/// 4 KiB, which is most of what reading a model's weights into fresh memory costs.
const LARGE_FILE: u64 = 4 << 20;

/// The whole content of the file at `path`.
///
/// # Errors
/// When the file cannot be opened or read.
pub(super) fn read_file(path: &Path) -> std::io::Result<Bytes> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len >= LARGE_FILE
        && let Ok(len) = usize::try_from(len)
    {
        if let Some(bytes) = read_large(&mut file, len)? {
            return Ok(bytes);
        }
        file.rewind()?;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(Bytes::from(bytes))
}

/// `len` bytes of `file` in an anonymous mapping advised to use huge pages, or `None` when the
/// file's length is not `len` any more (it changed while being read: the caller reads it
/// again the plain way) or the system has no such mapping to give.
fn read_large(file: &mut std::fs::File, len: usize) -> std::io::Result<Option<Bytes>> {
    let Ok(mut memory) = memmap2::MmapOptions::new().len(len).map_anon() else {
        return Ok(None);
    };
    #[cfg(target_os = "linux")]
    {
        // Advice only: without huge pages the memory is still good, in 4 KiB pages.
        let _ = memory.advise(memmap2::Advice::HugePage);
    }
    match file.read_exact(&mut memory) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    if file.read(&mut [0u8])? != 0 {
        return Ok(None);
    }
    Ok(Some(Bytes::from_owner(memory.make_read_only()?)))
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
