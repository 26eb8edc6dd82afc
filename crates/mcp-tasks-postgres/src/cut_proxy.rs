//! [`CutProxy`]: a TCP proxy in front of the test database that a test can
//! cut, so a store "loses the database" (its connections die, new ones are
//! refused) while the process and the server live on, and then get it back.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// A loopback proxy to one upstream `host:port`, up until [`down`](CutProxy::down).
#[derive(Debug)]
pub struct CutProxy {
    address: SocketAddr,
    up: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<AbortHandle>>>,
}

impl CutProxy {
    /// A proxy in front of the server `url` names, and `url` pointed at it;
    /// `None` (after printing why) when `url` does not reach its server over
    /// TCP at an explicit `host:port`.
    ///
    /// # Panics
    /// When `url` does not parse, no loopback port can be bound, or (under
    /// `CI=true`, where tests must run, never skip) `url` cannot be proxied.
    pub async fn in_front_of(url: &str) -> Option<(CutProxy, String)> {
        let config: tokio_postgres::Config = url.parse().expect("a PostgreSQL URL");
        let Some(tokio_postgres::config::Host::Tcp(host)) = config.get_hosts().first() else {
            return skip("the test server is not reached over TCP");
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let upstream = format!("{host}:{port}");
        let proxy = CutProxy::start(upstream.clone()).await;
        let proxied = url.replacen(&upstream, &proxy.address.to_string(), 1);
        if proxied == url {
            return skip(&format!("the test URL does not name {upstream} explicitly"));
        }
        Some((proxy, proxied))
    }

    /// A proxy to `upstream` (`host:port`) on a free loopback port.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub async fn start(upstream: String) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let address = listener.local_addr().expect("the bound address");
        let up = Arc::new(AtomicBool::new(true));
        let links: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let (accepting, open) = (up.clone(), links.clone());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if !accepting.load(Ordering::SeqCst) {
                    // Refused: the connection is dropped at once.
                    continue;
                }
                let upstream = upstream.clone();
                let link = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                open.lock().unwrap_or_else(|p| p.into_inner()).push(link.abort_handle());
            }
        });
        CutProxy { address, up, links }
    }

    /// Where clients connect.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The database goes away: open links are cut, new ones refused.
    pub fn down(&self) {
        self.up.store(false, Ordering::SeqCst);
        for link in self.links.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
            link.abort();
        }
    }

    /// The database comes back: new connections pass again.
    pub fn up(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

/// Skips a test that cannot be proxied, or fails it under `CI=true`.
fn skip<T>(why: &str) -> Option<T> {
    assert!(!std::env::var("CI").is_ok_and(|v| v == "true"), "cannot put a proxy in front of the test database: {why}");
    eprintln!("skipping: {why}");
    None
}
