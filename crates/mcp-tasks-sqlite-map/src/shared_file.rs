//! One read-only mapping of a database file per process, shared by every
//! connection that opened the file through this VFS and kept until the last
//! of them closes it.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use memmap2::{Mmap, MmapOptions};

/// Bytes of a database file the shared mapping covers: address space, not
/// memory (what a mapping uses is the operating system's page cache). A
/// page beyond it is read with `xRead`, as is everything when a connection's
/// `PRAGMA mmap_size` is 0.
pub const MAP_BYTES: usize = 1 << 30;

/// SQLite may read a few bytes past a page of a corrupt file; like the unix
/// VFS, a fetch is answered only where this much of the file follows it.
const EOF_BUFFER: u64 = 256;

/// The mapped files, by device and inode (two paths to one file share its
/// mapping; a file replaced under the same path gets a new one).
static FILES: Mutex<BTreeMap<(u64, u64), Weak<SharedFile>>> = Mutex::new(BTreeMap::new());

/// What the VFS has done with one file's mapping, for tests and
/// diagnostics ([`file_stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStats {
    /// Where the mapping starts: the same for every connection to the file,
    /// and across commits, while any of them holds it open.
    pub address: usize,
    /// Connections holding the file open through this VFS.
    pub connections: usize,
    /// Pages answered from the mapping.
    pub pages_served: u64,
    /// Pages asked for beyond the file's end or what the connection maps
    /// (SQLite reads those with `xRead`).
    pub pages_declined: u64,
}

/// The mapping of the file at `path`, if a connection holds it open
/// through this VFS.
pub fn file_stats(path: &Path) -> Option<FileStats> {
    let meta = std::fs::metadata(path).ok()?;
    let shared = FILES.lock().unwrap_or_else(PoisonError::into_inner).get(&(meta.dev(), meta.ino()))?.upgrade()?;
    Some(FileStats {
        address: shared.map.as_ptr() as usize,
        // Less the one just taken here.
        connections: Arc::strong_count(&shared) - 1,
        pages_served: shared.counters.pages_served(),
        pages_declined: shared.counters.pages_declined.load(Ordering::Relaxed),
    })
}

/// A file's counters. Every fetch counts one page served, from whichever
/// thread reads, so the count is spread over slots on cache lines of their
/// own, a thread keeping to one slot: a shared counter would send its line
/// between the cores at every page a poll reads.
#[derive(Default)]
struct Counters {
    pages_served: [Slot; SLOTS],
    pages_declined: AtomicU64,
}

const SLOTS: usize = 8;

#[repr(align(64))]
#[derive(Default)]
struct Slot(AtomicU64);

impl Counters {
    fn served(&self) {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        thread_local! {
            static SLOT: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SLOTS;
        }
        SLOT.with(|&slot| self.pages_served[slot].0.fetch_add(1, Ordering::Relaxed));
    }

    fn pages_served(&self) -> u64 {
        self.pages_served.iter().map(|slot| slot.0.load(Ordering::Relaxed)).sum()
    }
}

/// A database file and its one mapping in this process.
pub(crate) struct SharedFile {
    /// Opened by this VFS, read-only: only ever asked its length.
    file: File,
    map: Mmap,
    /// The file's length when last asked: a fetch within it needs no system
    /// call. Only grows (in WAL mode the file never shrinks under a reader
    /// that could still ask for the pages cut off).
    known_len: AtomicU64,
    counters: Counters,
}

impl SharedFile {
    /// The mapping of the file at `path`, made if no connection holds one.
    pub(crate) fn open(path: &Path) -> std::io::Result<Arc<SharedFile>> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        let key = (meta.dev(), meta.ino());
        let mut files = FILES.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(shared) = files.get(&key).and_then(Weak::upgrade) {
            return Ok(shared);
        }
        files.retain(|_, w| w.strong_count() > 0);
        // SAFETY: a shared read-only mapping; the only access to it is
        // through `page`, which hands out addresses within the file's
        // length, and SQLite writes the file only through `pwrite`, which a
        // shared mapping sees at once.
        let map = unsafe { MmapOptions::new().len(MAP_BYTES).map(&file)? };
        let shared =
            Arc::new(SharedFile { file, map, known_len: AtomicU64::new(meta.len()), counters: Counters::default() });
        files.insert(key, Arc::downgrade(&shared));
        Ok(shared)
    }

    /// The address of the `len` bytes at `offset` in the mapping, if they
    /// are within `limit` (the connection's `mmap_size`), the mapping, and
    /// the file (with [`EOF_BUFFER`] after them).
    pub(crate) fn page(&self, offset: u64, len: u64, limit: u64) -> Option<*const u8> {
        let end = offset.checked_add(len)?.checked_add(EOF_BUFFER)?;
        if end > limit.min(MAP_BYTES as u64) || !self.within_file(end) {
            self.counters.pages_declined.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        self.counters.served();
        // `offset < MAP_BYTES`, checked above: an address inside the mapping.
        Some(self.map.as_ptr().wrapping_add(offset as usize))
    }

    /// Whether the file is at least `end` bytes long, asking the operating
    /// system only when the length last seen is shorter (the file grew).
    fn within_file(&self, end: u64) -> bool {
        if end <= self.known_len.load(Ordering::Relaxed) {
            return true;
        }
        match self.file.metadata() {
            Ok(meta) => {
                self.known_len.fetch_max(meta.len(), Ordering::Relaxed);
                end <= meta.len()
            }
            Err(_) => false,
        }
    }
}
