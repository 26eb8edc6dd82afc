//! `serve --listen`: `HOST:PORT` with an IP address or a host name (resolved
//! here), `[IPv6]:PORT`, or a bare `PORT` (on 127.0.0.1, the safe default).

use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};

/// The forms `--listen` takes, for the error.
const FORMS: &str = "expected HOST:PORT (127.0.0.1:8080, localhost:8080, [::1]:8080) or a bare PORT (8080, on 127.0.0.1)";

/// Parses a `--listen` value (clap's `value_parser`). A host name resolves
/// to its first IPv4 address, else its first address: one socket is bound,
/// and the log line says which.
pub(super) fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let port = text.parse::<u16>().map_err(|_| format!("port {text} is above 65535"))?;
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    let Some((host, port)) = text.rsplit_once(':') else { return Err(FORMS.to_owned()) };
    let port: u16 = port.parse().map_err(|_| FORMS.to_owned())?;
    if !is_host_name(host) {
        return Err(FORMS.to_owned());
    }
    let addrs: Vec<SocketAddr> =
        (host, port).to_socket_addrs().map_err(|e| format!("cannot resolve host {host}: {e}"))?.collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .ok_or_else(|| format!("host {host} has no address"))
}

/// A DNS host name: dot-separated labels of letters, digits and hyphens.
fn is_host_name(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_names_and_bare_ports_are_accepted() {
        assert_eq!(parse_listen("0.0.0.0:80"), Ok("0.0.0.0:80".parse().unwrap()));
        assert_eq!(parse_listen("[::1]:8080"), Ok("[::1]:8080".parse().unwrap()));
        assert_eq!(parse_listen("8080"), Ok("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(parse_listen(" 0 "), Ok("127.0.0.1:0".parse().unwrap()));
        let local = parse_listen("localhost:8080").unwrap();
        assert!(local.ip().is_loopback() && local.port() == 8080, "{local}");
    }

    #[test]
    fn anything_else_names_the_forms() {
        for bad in ["", "localhost", ":8080", "host:port", "::1:8080", "a b:80", "http://localhost:80", "-x:80"] {
            assert_eq!(parse_listen(bad), Err(FORMS.to_owned()), "{bad}");
        }
        assert_eq!(parse_listen("70000"), Err("port 70000 is above 65535".to_owned()));
        assert!(
            parse_listen("no-such-host.invalid:80").unwrap_err().starts_with("cannot resolve host no-such-host.invalid: ")
        );
    }
}
