//! [`Sink`]: where printing instruments write (stderr by default).

use std::fmt;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

/// A shareable writer for instruments that print: stderr, stdout, a file, or a buffer.
#[derive(Clone)]
pub struct Sink(Arc<Mutex<Box<dyn Write + Send>>>);

impl Sink {
    /// Standard error (the default).
    pub fn stderr() -> Self {
        Sink::writer(io::stderr())
    }

    /// Standard output.
    pub fn stdout() -> Self {
        Sink::writer(io::stdout())
    }

    /// Any writer.
    pub fn writer(w: impl Write + Send + 'static) -> Self {
        Sink(Arc::new(Mutex::new(Box::new(w))))
    }

    /// A sink writing into a buffer, and the buffer (to read what was written).
    pub fn buffer() -> (Self, SharedBuffer) {
        let buffer = SharedBuffer::default();
        (Sink::writer(buffer.clone()), buffer)
    }

    /// Writes `text` in one piece (so lines from several threads do not interleave).
    pub fn write_str(&self, text: &str) -> io::Result<()> {
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        w.write_all(text.as_bytes())?;
        w.flush()
    }
}

impl Default for Sink {
    fn default() -> Self {
        Sink::stderr()
    }
}

impl fmt::Debug for Sink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sink")
    }
}

/// A cloneable in-memory buffer that implements `Write` (clones share the bytes).
#[derive(Clone, Default, Debug)]
pub struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

impl SharedBuffer {
    /// What was written so far, as text (invalid UTF-8 replaced).
    pub fn contents(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    /// Empties the buffer.
    pub fn clear(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

impl Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
