//! The one HTTP client setup pi uses, for model providers and MCP servers alike: rustls with
//! the `ring` provider (pure Rust and assembly, no C toolchain beyond the one `ring` needs) and
//! the platform's certificate store, so a corporate root CA the system trusts works here too.
//!
//! reqwest is built without a default TLS provider, so one must be installed before any client
//! is built; [`client`] does that first, once per process.

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
    reqwest::Client::builder().connect_timeout(Duration::from_secs(30))
}
