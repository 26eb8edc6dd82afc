//! The main database file's methods: the default VFS's own, with fetch,
//! unfetch, the mapping-size control and close replaced.
//!
//! SQLite gives a file object this VFS's `szOsFile` bytes. The default
//! VFS's file fills the front (so its methods, called with the same
//! pointer, find their own state); this crate's [`Extra`] follows it.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::ffi;

use crate::shared_file::SharedFile;

/// What a wrapped file holds beyond the default VFS's file object.
struct Extra {
    shared: Arc<SharedFile>,
    /// The connection's `PRAGMA mmap_size`: how much of the mapping it reads.
    limit: i64,
    /// The default VFS's methods for this file, which the rest delegate to.
    original: *const ffi::sqlite3_io_methods,
}

/// Where [`Extra`] starts in a file object; set by [`outer_size`] before
/// the VFS is registered, so before any file is opened through it.
static EXTRA_OFFSET: AtomicUsize = AtomicUsize::new(0);

/// The file object size this VFS asks SQLite for: the default VFS's, then
/// [`Extra`], aligned.
pub(crate) fn outer_size(inner: c_int) -> c_int {
    let offset = usize::try_from(inner).unwrap_or(0).next_multiple_of(align_of::<Extra>());
    EXTRA_OFFSET.store(offset, Ordering::Relaxed);
    c_int::try_from(offset + size_of::<Extra>()).expect("a file object is a few hundred bytes")
}

fn extra(file: *mut ffi::sqlite3_file) -> *mut Extra {
    file.cast::<u8>().wrapping_add(EXTRA_OFFSET.load(Ordering::Relaxed)).cast()
}

/// This crate's method tables, one per table of the default VFS's they
/// were made from (the unix VFS has one for every file it opens here).
static TABLES: Mutex<Vec<(usize, &'static ffi::sqlite3_io_methods)>> = Mutex::new(Vec::new());

fn table_for(original: *const ffi::sqlite3_io_methods) -> Option<&'static ffi::sqlite3_io_methods> {
    // SAFETY: the methods of an open file: a static table of the default VFS.
    let base = unsafe { *original };
    if base.iVersion < 3 {
        return None; // no xFetch: SQLite would never map the file.
    }
    let mut tables = TABLES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, table)) = tables.iter().find(|(from, _)| *from == original as usize) {
        return Some(table);
    }
    let table: &'static _ = Box::leak(Box::new(ffi::sqlite3_io_methods {
        xClose: Some(close),
        xFileControl: Some(file_control),
        xFetch: Some(fetch),
        xUnfetch: Some(unfetch),
        ..base
    }));
    tables.push((original as usize, table));
    Some(table)
}

/// Gives an open main database file the shared mapping and this crate's
/// methods; leaves it as it is if its methods cannot map.
///
/// # Safety
///
/// `file` is a file object of this VFS's size that the default VFS has
/// just opened successfully.
pub(crate) unsafe fn wrap(file: *mut ffi::sqlite3_file, shared: Arc<SharedFile>) {
    // SAFETY: an open file has its methods set.
    let original = unsafe { (*file).pMethods };
    let Some(table) = table_for(original) else { return };
    // SAFETY: the bytes after the default VFS's file object are this
    // crate's (see `outer_size`), aligned for `Extra` and not yet used.
    unsafe { extra(file).write(Extra { shared, limit: 0, original }) };
    // SAFETY: as above; from here SQLite calls this crate's methods.
    unsafe { (*file).pMethods = table };
}

/// `xClose`: the default VFS closes the file, then the mapping is let go
/// (unmapped if this was the last connection holding it).
unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: `wrap` wrote the Extra; SQLite calls no method after xClose.
    let extra = unsafe { extra(file).read() };
    // SAFETY: the default VFS's own close of its own file object.
    let rc = unsafe {
        match (*extra.original).xClose {
            Some(x_close) => x_close(file),
            None => ffi::SQLITE_OK,
        }
    };
    drop(extra);
    rc
}

/// `xFileControl`: `SQLITE_FCNTL_MMAP_SIZE` sets how much of the shared
/// mapping this connection reads (answering the previous value, as the
/// unix VFS does); everything else goes to the default VFS.
unsafe extern "C" fn file_control(file: *mut ffi::sqlite3_file, op: c_int, arg: *mut c_void) -> c_int {
    if op == ffi::SQLITE_FCNTL_MMAP_SIZE {
        // SAFETY: `wrap` wrote the Extra; one connection's calls never overlap.
        let extra = unsafe { &mut *extra(file) };
        let asked = arg.cast::<i64>();
        // SAFETY: for this op SQLite passes a pointer to an i64, in and out.
        let wanted = unsafe { asked.read() };
        // SAFETY: as above.
        unsafe { asked.write(extra.limit) };
        if wanted >= 0 {
            extra.limit = wanted.min(crate::MAP_BYTES as i64);
        }
        return ffi::SQLITE_OK;
    }
    // SAFETY: `wrap` wrote the Extra.
    let original = unsafe { (*extra(file)).original };
    // SAFETY: the default VFS's own method on its own file object.
    unsafe {
        match (*original).xFileControl {
            Some(x_file_control) => x_file_control(file, op, arg),
            None => ffi::SQLITE_NOTFOUND,
        }
    }
}

/// `xFetch`: the page's address in the shared mapping, or null (SQLite then
/// reads it with `xRead`).
unsafe extern "C" fn fetch(file: *mut ffi::sqlite3_file, offset: i64, amount: c_int, page: *mut *mut c_void) -> c_int {
    // SAFETY: `wrap` wrote the Extra.
    let extra = unsafe { &*extra(file) };
    let found = match (u64::try_from(offset), u64::try_from(amount), u64::try_from(extra.limit)) {
        (Ok(offset), Ok(amount), Ok(limit)) if limit > 0 => extra.shared.page(offset, amount, limit),
        _ => None,
    };
    // SAFETY: SQLite's out pointer for the page.
    unsafe { page.write(found.map_or(std::ptr::null_mut(), |p| p.cast_mut().cast())) };
    ffi::SQLITE_OK
}

/// `xUnfetch`: nothing. A page handed out stays valid while the file is
/// open, and the mapping outlives a commit (the unix VFS unmaps here, after
/// every commit by another connection; see the crate's documentation).
unsafe extern "C" fn unfetch(_file: *mut ffi::sqlite3_file, _offset: i64, _page: *mut c_void) -> c_int {
    ffi::SQLITE_OK
}
