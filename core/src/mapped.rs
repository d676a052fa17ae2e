//! Files mapped into memory instead of read: a model's weights are used where they lie (the
//! page cache), and the bytes remember which file and offset they are, so that writing them
//! out again is a copy between files inside the kernel (`copy_file_range` on Linux) that
//! never passes them through this process.
//!
//! ```
//! use std::io::Write;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("weights.bin");
//! std::fs::File::create(&path).unwrap().write_all(&[7u8; 10000]).unwrap();
//! let file = std::fs::File::open(&path).unwrap();
//! let bytes = irpass::mapped::map_file(&file, &path, 4000, 5000).unwrap();
//! assert_eq!(bytes.len(), 5000);
//! // A slice of the mapping knows where it lies in the file.
//! let source = irpass::mapped::source_of(&bytes[100..200]).unwrap();
//! assert_eq!((source.path.as_path(), source.offset), (path.as_path(), 4100));
//! // Bytes that are not a mapping do not.
//! assert!(irpass::mapped::source_of(&[1, 2, 3]).is_none());
//! ```
//!
//! **The assumption**: a mapped file is not changed by anyone while the mapping lives (the
//! run of a pass pipeline). A file truncated meanwhile makes the next read of a page past its
//! end a `SIGBUS`; a file rewritten meanwhile changes the bytes under the run. `irpass-opt`
//! maps its input and the external data it reads; it writes its output to a new file renamed
//! into place, which does not change a mapped file even when it replaces it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;

/// Where mapped bytes come from.
#[derive(Clone, Debug)]
pub struct Source {
    /// The file mapped, by the name it was opened with.
    pub path: Arc<PathBuf>,
    /// The file itself, open since it was mapped (a file renamed over that name since is
    /// another file).
    pub file: Arc<File>,
    /// The offset in the file of the first byte asked about.
    pub offset: u64,
}

/// A live mapping: its address range, file and the file offset of its first byte.
struct Region {
    id: u64,
    start: usize,
    len: usize,
    path: Arc<PathBuf>,
    file: Arc<File>,
    offset: u64,
}

struct Registry {
    next: u64,
    regions: Vec<Region>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    next: 0,
    regions: Vec::new(),
});

fn registry() -> MutexGuard<'static, Registry> {
    // A panic while the lock was held left the list consistent (each change is one push or
    // one removal).
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// The owner of one mapping: unregistered when the last `Bytes` of it goes.
struct Mapping {
    map: memmap2::Mmap,
    id: u64,
}

impl AsRef<[u8]> for Mapping {
    fn as_ref(&self) -> &[u8] {
        &self.map
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        registry().regions.retain(|r| r.id != self.id);
    }
}

/// `len` bytes of `file` (opened from `path`, the name [`source_of`] gives) from `offset`,
/// mapped read-only (see the module's assumption). The caller's open file is the one mapped,
/// not whatever has its name by then. An empty range is an empty buffer, mapping nothing.
///
/// # Errors
/// When the file cannot be mapped, or the range passes its end.
pub fn map_file(file: &File, path: &Path, offset: u64, len: usize) -> std::io::Result<Bytes> {
    let size = file.metadata()?.len();
    let end = offset.checked_add(len as u64);
    if end.is_none_or(|e| e > size) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("bytes {offset}..{offset}+{len} pass the end of the file ({size} bytes)"),
        ));
    }
    if len == 0 {
        return Ok(Bytes::new());
    }
    // A mapping starts on a page: map from the page holding `offset`, and slice.
    let page = page_size();
    let start = offset - offset % page;
    let skip = (offset - start) as usize;
    let mut options = memmap2::MmapOptions::new();
    options.offset(start).len(skip + len);
    // SAFETY: the mapping is read-only and private to this process; what the module's
    // documentation assumes (no one changes the file while the mapping lives) is what makes
    // reading it sound, as for every reader of a memory-mapped file.
    #[allow(unsafe_code)]
    let map = unsafe { options.map(file) }?;
    let path = Arc::new(path.to_path_buf());
    let file = Arc::new(file.try_clone()?);
    let mut reg = registry();
    let id = reg.next;
    reg.next += 1;
    reg.regions.push(Region {
        id,
        start: map.as_ptr() as usize,
        len: map.len(),
        path,
        file,
        offset: start,
    });
    drop(reg);
    Ok(Bytes::from_owner(Mapping { map, id }).slice(skip..))
}

/// Where `bytes` lie in a mapped file, if they are all inside one live mapping made by
/// [`map_file`].
pub fn source_of(bytes: &[u8]) -> Option<Source> {
    if bytes.is_empty() {
        return None;
    }
    let (start, end) = (
        bytes.as_ptr() as usize,
        bytes.as_ptr() as usize + bytes.len(),
    );
    let reg = registry();
    reg.regions
        .iter()
        .find(|r| r.start <= start && end <= r.start + r.len)
        .map(|r| Source {
            path: r.path.clone(),
            file: r.file.clone(),
            offset: r.offset + (start - r.start) as u64,
        })
}

/// The system's page size (the granularity of a mapping's offset).
fn page_size() -> u64 {
    // The common sizes are 4 KiB and 64 KiB; 64 KiB is a multiple of both, and a mapping may
    // start earlier than the offset asked for.
    1 << 16
}

/// A zeroed, writable buffer for a large result (a folded weight), backed by an anonymous
/// mapping with transparent huge pages advised where the OS has them: the kernel zeroes and
/// maps it 2 MiB at a time rather than 4 KiB, a small part of the page faults a `Vec` of the
/// same size takes as it is first written. [`Scratch::freeze`] makes it [`Bytes`] without a
/// copy.
///
/// ```
/// let mut scratch = irpass::mapped::Scratch::zeroed(10).unwrap();
/// scratch.as_mut_slice()[9] = 7;
/// let bytes = scratch.freeze();
/// assert_eq!(&bytes[..], &[0, 0, 0, 0, 0, 0, 0, 0, 0, 7]);
/// // It is not a file's mapping.
/// assert!(irpass::mapped::source_of(&bytes).is_none());
/// ```
pub struct Scratch {
    map: memmap2::MmapMut,
    len: usize,
}

impl Scratch {
    /// `len` zero bytes.
    ///
    /// # Errors
    /// When the OS refuses the mapping (out of address space or memory).
    pub fn zeroed(len: usize) -> std::io::Result<Scratch> {
        // A mapping of no bytes is an error: map one.
        let map = memmap2::MmapOptions::new().len(len.max(1)).map_anon()?;
        // Only advice: where huge pages are not to be had, the mapping works as it is.
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::HugePage);
        Ok(Scratch { map, len })
    }

    /// The bytes, to write.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.map[..self.len]
    }

    /// The bytes, read-only and shareable.
    pub fn freeze(self) -> Bytes {
        let len = self.len;
        Bytes::from_owner(self.map).slice(..len)
    }
}
