//! The one HTTP client setup pi uses, for model providers and MCP servers alike: rustls with
//! the `ring` provider and the Mozilla root certificates compiled in (`webpki-roots`).
//!
//! Compiled-in roots cost no I/O: the platform verifier reads the whole system certificate
//! directory (about 150 files here) when a client is built, which every run does at start-up,
//! even one that never opens a TLS connection. reqwest is built without a default TLS
//! provider, so [`builder`] hands it a complete rustls configuration.

use std::time::Duration;

/// Install `ring` as rustls' process-wide provider, once. Installing it a second time is
/// refused by rustls and harmless.
pub fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A client with pi's connect timeout; connections are pooled per client, so callers keep
/// and share the one they get.
pub fn client() -> reqwest::Client {
    builder().build().unwrap_or_else(|e| {
        // Only a broken TLS setup fails here; a client without the timeout still works.
        tracing::warn!(error = %e, "HTTP client with pi's settings could not be built");
        reqwest::Client::new()
    })
}

/// [`client`]'s settings, for callers that add their own.
pub fn builder() -> reqwest::ClientBuilder {
    install_tls_provider();
    let b = reqwest::Client::builder().connect_timeout(Duration::from_secs(30));
    match tls_config() {
        Some(tls) => b.tls_backend_preconfigured(tls),
        None => b,
    }
}

/// TLS 1.2 and 1.3 with `ring`, the compiled-in roots, and ALPN for HTTP/2 and HTTP/1.1.
fn tls_config() -> Option<rustls::ClientConfig> {
    let roots = rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| tracing::warn!(error = %e, "TLS configuration"))
        .ok()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Some(config)
}

#[cfg(test)]
mod tests {
    /// Building a client must not fail (a broken TLS setup would silently drop pi's timeout).
    #[test]
    fn a_client_with_pis_tls_builds() {
        assert!(super::builder().build().is_ok());
        assert!(super::tls_config().is_some());
    }
}
