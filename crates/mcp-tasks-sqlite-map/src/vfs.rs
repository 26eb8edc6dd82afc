//! The VFS object: the default (unix) VFS with its `xOpen` wrapped, so a
//! main database file opened through it gets this crate's methods.

use std::ffi::{CStr, OsStr, c_char, c_int};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

use rusqlite::ffi;

use crate::file_methods;
use crate::shared_file::SharedFile;

/// The name to open a read connection with
/// (`Connection::open_with_flags_and_vfs`), once [`register`] succeeded.
pub const VFS_NAME: &str = "mcp-tasks-shared-map";

const VFS_NAME_C: &CStr = c"mcp-tasks-shared-map";

/// Why the VFS could not be registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterError(String);

impl std::fmt::Display for RegisterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot register the SQLite VFS {VFS_NAME}: {}", self.0)
    }
}

impl std::error::Error for RegisterError {}

static REGISTERED: OnceLock<Result<(), RegisterError>> = OnceLock::new();

/// Registers the VFS with SQLite (once per process; later calls answer the
/// first one's outcome) and answers its name.
pub fn register() -> Result<&'static str, RegisterError> {
    REGISTERED.get_or_init(register_now).clone().map(|()| VFS_NAME)
}

fn register_now() -> Result<(), RegisterError> {
    // SAFETY: initialising SQLite is allowed at any time and idempotent.
    let rc = unsafe { ffi::sqlite3_initialize() };
    if rc != ffi::SQLITE_OK {
        return Err(RegisterError(format!("sqlite3_initialize failed ({rc})")));
    }
    // SAFETY: a null name asks for the default VFS.
    let inner = unsafe { ffi::sqlite3_vfs_find(std::ptr::null()) };
    if inner.is_null() {
        return Err(RegisterError("SQLite has no default VFS".to_owned()));
    }
    // SAFETY: a registered VFS object lives as long as the process.
    let base = unsafe { *inner };
    // SAFETY: a VFS's name is a NUL-terminated string it owns.
    let base_name = unsafe { CStr::from_ptr(base.zName) }.to_string_lossy().into_owned();
    // The methods other than xOpen are copied as they are: the unix VFS's
    // ignore the VFS object they are called through.
    if !base_name.starts_with("unix") {
        return Err(RegisterError(format!("the default VFS is {base_name:?}, not one of SQLite's unix VFSes")));
    }
    let vfs = ffi::sqlite3_vfs {
        szOsFile: file_methods::outer_size(base.szOsFile),
        pNext: std::ptr::null_mut(),
        zName: VFS_NAME_C.as_ptr(),
        pAppData: inner.cast(),
        xOpen: Some(open),
        ..base
    };
    // SAFETY: SQLite keeps the pointer for the life of the process, which
    // the leaked box outlives; 0: not the default VFS.
    let rc = unsafe { ffi::sqlite3_vfs_register(Box::leak(Box::new(vfs)), 0) };
    if rc != ffi::SQLITE_OK {
        return Err(RegisterError(format!("sqlite3_vfs_register failed ({rc})")));
    }
    Ok(())
}

/// `xOpen`: the default VFS opens the file; a main database file opened
/// read-only then gets the shared mapping and this crate's methods (or, if
/// the file cannot be mapped, stays the default VFS's file and reads as
/// SQLite always does). A file opened for writing keeps the default VFS's
/// methods: the kept mapping is sound only for a file this process does not
/// truncate, and a read connection still opens one for writing — the
/// target of its `VACUUM INTO`.
unsafe extern "C" fn open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite calls a VFS's xOpen with the VFS itself, whose
    // pAppData `register_now` set to the default VFS.
    let inner = unsafe { (*vfs).pAppData.cast::<ffi::sqlite3_vfs>() };
    // SAFETY: the default VFS gets SQLite's own arguments; `file` has room
    // for its file object (this VFS's szOsFile is larger).
    let rc = unsafe {
        match (*inner).xOpen {
            Some(x_open) => x_open(inner, name, file, flags, out_flags),
            None => ffi::SQLITE_INTERNAL,
        }
    };
    let read_only_main_db = flags & ffi::SQLITE_OPEN_MAIN_DB != 0 && flags & ffi::SQLITE_OPEN_READONLY != 0;
    if rc != ffi::SQLITE_OK || !read_only_main_db || name.is_null() {
        return rc;
    }
    // SAFETY: a main database file's name is SQLite's full path, a
    // NUL-terminated string it keeps while the file is open.
    let path = Path::new(OsStr::from_bytes(unsafe { CStr::from_ptr(name as *const c_char) }.to_bytes()));
    if let Ok(shared) = SharedFile::open(path) {
        // SAFETY: the default VFS just opened `file` successfully.
        unsafe { file_methods::wrap(file, shared) };
    }
    rc
}
