//! Streamable HTTP for MCP: rmcp's transport over pi's own reqwest client (one TLS setup for
//! everything, see [`crate::provider::http`]), with the retry rule pi promises — a POST
//! answered 408, 429 or 5xx is sent again, twice at most, after a short pause that grows.
//! rmcp surfaces those statuses but leaves retrying to its caller; a wrapper client is the one
//! place that sees every POST, the handshake's included.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use rmcp::transport::StreamableHttpClientTransport;
use sse_stream::Sse;

use super::client::McpError;

/// Retries after the first attempt.
const RETRIES: usize = 2;

/// pi's HTTP client, retrying POSTs that failed with a transient status.
#[derive(Clone)]
pub struct RetryingHttp {
    inner: reqwest::Client,
}

impl RetryingHttp {
    pub fn new() -> Self {
        RetryingHttp {
            inner: crate::provider::http::client(),
        }
    }
}

impl Default for RetryingHttp {
    fn default() -> Self {
        RetryingHttp::new()
    }
}

/// Whether a failed POST is worth sending again.
fn transient(e: &StreamableHttpError<reqwest::Error>) -> bool {
    let status = match e {
        StreamableHttpError::HttpStatus(s) => Some(s.status),
        StreamableHttpError::Client(e) => e.status().map(|s| s.as_u16()),
        _ => None,
    };
    status.is_some_and(|s| s == 408 || s == 429 || (500..=599).contains(&s))
}

impl StreamableHttpClient for RetryingHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let mut attempt = 0;
        loop {
            let r = self
                .inner
                .post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    auth_header.clone(),
                    custom_headers.clone(),
                    limits,
                )
                .await;
            match r {
                Err(e) if attempt < RETRIES && transient(&e) => {
                    attempt += 1;
                    tracing::debug!(error = %e, attempt, "MCP POST failed; retrying");
                    tokio::time::sleep(Duration::from_millis(200 * attempt as u64)).await;
                }
                other => return other,
            }
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }
}

/// The transport for `url` with the entry's (resolved) headers.
pub fn transport(
    client: RetryingHttp,
    url: &str,
    headers: &[(String, String)],
) -> Result<StreamableHttpClientTransport<RetryingHttp>, McpError> {
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let bad = |reason: String| McpError::Header {
            name: name.clone(),
            reason,
        };
        let n = HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad(e.to_string()))?;
        let v = HeaderValue::from_str(value).map_err(|e| bad(e.to_string()))?;
        custom.insert(n, v);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn ping() -> ClientJsonRpcMessage {
        serde_json::from_value(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .expect("a JSON-RPC request")
    }

    async fn post(server: &MockServer) -> bool {
        RetryingHttp::new()
            .post_message(
                format!("{}/mcp", server.uri()).into(),
                ping(),
                None,
                None,
                HashMap::new(),
            )
            .await
            .map_err(|e| term_eprintln!("post failed: {e}"))
            .is_ok()
    }

    #[tokio::test]
    async fn a_post_answered_503_is_sent_again_twice_at_most() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(503))
            .up_to_n_times(2)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
                "application/json",
            ))
            .mount(&server)
            .await;
        assert!(post(&server).await, "the third attempt succeeds");
        assert_eq!(
            server.received_requests().await.unwrap_or_default().len(),
            3
        );
    }

    #[tokio::test]
    async fn a_post_that_keeps_failing_gives_up_after_three_attempts() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(429))
            .mount(&server)
            .await;
        assert!(!post(&server).await);
        assert_eq!(
            server.received_requests().await.unwrap_or_default().len(),
            3
        );
    }

    #[tokio::test]
    async fn a_client_error_is_not_retried() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(400).set_body_string("bad request"))
            .mount(&server)
            .await;
        assert!(!post(&server).await);
        assert_eq!(
            server.received_requests().await.unwrap_or_default().len(),
            1
        );
    }
}
