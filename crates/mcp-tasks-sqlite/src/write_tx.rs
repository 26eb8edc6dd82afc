//! What a write runs on: the writer thread's connection, inside the open
//! group-commit transaction, and the count changes of that transaction
//! not yet written to the count tables (`tally.rs`).

use std::cell::{RefCell, RefMut};
use std::ops::Deref;

use rusqlite::Connection;

use crate::tally::Tally;

/// The writer's connection and its transaction's pending count changes.
/// Dereferences to the connection, so a write that counts nothing takes a
/// `&Connection` as before.
pub(crate) struct WriteTx {
    conn: Connection,
    tally: RefCell<Tally>,
}

impl WriteTx {
    /// Wraps the writer thread's connection.
    pub(crate) fn new(conn: Connection) -> WriteTx {
        WriteTx { conn, tally: RefCell::new(Tally::default()) }
    }

    /// The pending count changes (borrowed for one step; never held across
    /// another write).
    pub(crate) fn tally(&self) -> RefMut<'_, Tally> {
        self.tally.borrow_mut()
    }
}

impl Deref for WriteTx {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        &self.conn
    }
}
