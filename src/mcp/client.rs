//! One connection to one MCP server, on the official SDK (rmcp): the handshake over a stdio
//! child or streamable HTTP, listing tools and resources, and calls with what pi needs around
//! them — a per-request timeout that progress notifications reset, progress forwarded to the
//! tool's updates, and `notifications/cancelled` when pi aborts. Results leave here as the
//! wire's JSON (see [`super::result`]); nothing above this module touches rmcp's types.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[allow(deprecated)]
use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientCapabilities, ClientConfig,
    ClientRequest, Implementation, LoggingMessageNotificationParam, ProgressNotificationParam,
    ReadResourceRequestParams, Request, ServerResult,
};
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::http::RetryingHttp;
use super::log::McpLog;
use super::spawn::{self, SpawnError, StdioLaunch, StdioProcess};

/// What a connection is made from.
pub enum Endpoint {
    Stdio(StdioLaunch),
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    #[error("{0}")]
    Config(String),
    #[error("invalid header {name:?}: {reason}")]
    Header { name: String, reason: String },
    #[error("initialize failed: {0}")]
    Initialize(String),
    #[error("did not answer initialize within {} s", .0.as_secs())]
    InitializeTimeout(Duration),
    #[error("no answer within {} s", .0.as_secs())]
    Timeout(Duration),
    #[error("the connection is closed")]
    Closed,
    #[error("{0}")]
    Server(String),
    #[error("aborted")]
    Aborted,
}

impl McpError {
    /// Whether the connection itself is gone (the next call should reconnect).
    pub fn is_disconnect(&self) -> bool {
        matches!(self, McpError::Closed)
    }
}

fn service_error(e: rmcp::ServiceError) -> McpError {
    match e {
        rmcp::ServiceError::Timeout { timeout } => McpError::Timeout(timeout),
        rmcp::ServiceError::TransportClosed => McpError::Closed,
        rmcp::ServiceError::McpError(data) => McpError::Server(data.message.to_string()),
        other => {
            let text = other.to_string();
            if text.contains("closed") {
                McpError::Closed
            } else {
                McpError::Server(text)
            }
        }
    }
}

/// A request that must answer within `timeout`.
async fn bounded<T>(
    timeout: Duration,
    request: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
) -> Result<T, McpError> {
    tokio::time::timeout(timeout, request)
        .await
        .map_err(|_| McpError::Timeout(timeout))?
        .map_err(service_error)
}

/// rmcp's typed items as the wire's JSON (what everything above this module works on).
fn as_values<T: serde::Serialize>(items: Vec<T>) -> Vec<Value> {
    items
        .into_iter()
        .filter_map(|x| serde_json::to_value(x).ok())
        .collect()
}

/// Progress of one call: `(progress, total, message)`.
pub type Progress = (f64, Option<f64>, Option<String>);
type ProgressSink = tokio::sync::mpsc::UnboundedSender<Progress>;

/// What the server tells pi outside of answers.
struct Shared {
    server: String,
    stdio: bool,
    log: McpLog,
    progress: Mutex<HashMap<String, ProgressSink>>,
    tools_changed: Box<dyn Fn() + Send + Sync>,
}

#[derive(Clone)]
struct Handler(Arc<Shared>);

fn token_key(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

// Logging is deprecated in the newest protocol revision, but the servers people run today
// still send it, and it is what `mcp.log` is for.
#[allow(deprecated)]
impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let key = token_key(&params.progress_token);
        let sink = self
            .0
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned();
        if let Some(sink) = sink {
            let _ = sink.send((params.progress, params.total, params.message.clone()));
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let data = match &params.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let level = serde_json::to_value(params.level).unwrap_or(Value::Null);
        let level = level.as_str().unwrap_or("log");
        self.0.log.line(&self.0.server, &format!("{level}: {data}"));
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.log.line(&self.0.server, "tools/list_changed");
        (self.0.tools_changed)();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("pi", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A live connection. Calls share it; [`Connection::close`] ends it for everyone.
pub struct Connection {
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    process: Mutex<Option<StdioProcess>>,
    shared: Arc<Shared>,
}

/// One tool as the server lists it (wire JSON fields).
#[derive(Debug, Clone)]
pub struct ListedTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

impl Connection {
    /// Start (or reach) the server and complete the handshake within `init_timeout`.
    /// `tools_changed` runs when the server says its tool list changed.
    pub async fn open(
        server: &str,
        endpoint: Endpoint,
        init_timeout: Duration,
        log: McpLog,
        tools_changed: Box<dyn Fn() + Send + Sync>,
    ) -> Result<Connection, McpError> {
        let shared = Arc::new(Shared {
            server: server.to_string(),
            stdio: matches!(endpoint, Endpoint::Stdio(_)),
            log,
            progress: Mutex::default(),
            tools_changed,
        });
        let handler = Handler(shared.clone());
        let (service, process) = match endpoint {
            Endpoint::Stdio(launch) => {
                let (process, (stdout, stdin)) = spawn::spawn(&launch, server, &shared.log).await?;
                let served =
                    tokio::time::timeout(init_timeout, handler.serve((stdout, stdin))).await;
                match served {
                    Ok(Ok(s)) => (s, Some(process)),
                    Ok(Err(e)) => {
                        let how = process.stop().await;
                        shared.log.line(server, &how);
                        return Err(McpError::Initialize(e.to_string()));
                    }
                    Err(_) => {
                        let how = process.stop().await;
                        shared.log.line(server, &how);
                        return Err(McpError::InitializeTimeout(init_timeout));
                    }
                }
            }
            Endpoint::Http { url, headers } => {
                let transport = super::http::transport(RetryingHttp::new(), &url, &headers)?;
                match tokio::time::timeout(init_timeout, handler.serve(transport)).await {
                    Ok(Ok(s)) => (s, None),
                    Ok(Err(e)) => return Err(McpError::Initialize(e.to_string())),
                    Err(_) => return Err(McpError::InitializeTimeout(init_timeout)),
                }
            }
        };
        Ok(Connection {
            peer: service.peer().clone(),
            service: tokio::sync::Mutex::new(Some(service)),
            process: Mutex::new(process),
            shared,
        })
    }

    /// Whether the transport has closed (the server exited or the HTTP session ended).
    pub fn is_closed(&self) -> bool {
        if self.peer.is_transport_closed() {
            return true;
        }
        self.shared.stdio
            && self
                .process
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
                .is_none_or(StdioProcess::exited)
    }

    /// The server's name and version from the handshake.
    pub fn server_version(&self) -> Option<String> {
        let info = self.peer.peer_info()?;
        let v = serde_json::to_value(info.as_ref()).ok()?;
        let si = v.get("serverInfo")?;
        Some(format!(
            "{} {}",
            si.get("name")?.as_str()?,
            si.get("version").and_then(Value::as_str).unwrap_or("")
        ))
    }

    /// The instructions the server gave in its handshake, if any.
    pub fn instructions(&self) -> Option<String> {
        let info = self.peer.peer_info()?;
        let v = serde_json::to_value(info.as_ref()).ok()?;
        v.get("instructions")?.as_str().map(str::to_string)
    }

    pub async fn list_tools(&self, timeout: Duration) -> Result<Vec<ListedTool>, McpError> {
        let tools = bounded(timeout, self.peer.list_all_tools()).await?;
        Ok(as_values(tools)
            .into_iter()
            .filter_map(|v| {
                Some(ListedTool {
                    name: v.get("name")?.as_str()?.to_string(),
                    description: v
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    input_schema: v
                        .get("inputSchema")
                        .cloned()
                        .unwrap_or_else(|| serde_json::json!({"type": "object"})),
                })
            })
            .collect())
    }

    /// `tools/call`: the result object as JSON. `timeout` restarts at every progress
    /// notification, which also goes to `progress`; `cancel` sends `notifications/cancelled`.
    pub async fn call_tool(
        &self,
        name: &str,
        args: Value,
        timeout: Duration,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
    ) -> Result<Value, McpError> {
        let mut params = CallToolRequestParams::new(name.to_string());
        params.arguments = match args {
            Value::Object(m) => Some(m),
            Value::Null => None,
            other => {
                return Err(McpError::Server(format!(
                    "arguments must be an object, got {other}"
                )))
            }
        };
        let request = ClientRequest::CallToolRequest(Request::new(params));
        match self.request(request, timeout, cancel, progress).await? {
            ServerResult::CallToolResult(r) => {
                serde_json::to_value(r).map_err(|e| McpError::Server(e.to_string()))
            }
            other => Err(McpError::Server(format!(
                "unexpected answer to tools/call: {}",
                serde_json::to_string(&other).unwrap_or_default()
            ))),
        }
    }

    async fn request(
        &self,
        request: ClientRequest,
        timeout: Duration,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
    ) -> Result<ServerResult, McpError> {
        let peer = self.peer.clone();
        let options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(service_error)?;
        let key = token_key(&handle.progress_token);
        if let Some(sink) = progress {
            self.progress_map().insert(key.clone(), sink);
        }
        let id = handle.id.clone();
        let outcome = tokio::select! {
            r = handle.await_response() => r.map_err(service_error),
            _ = cancel.cancelled() => {
                let note = CancelledNotificationParam::new(Some(id), Some("aborted by the user".into()));
                let _ = peer.notify_cancelled(note).await;
                Err(McpError::Aborted)
            }
        };
        self.progress_map().remove(&key);
        outcome
    }

    fn progress_map(&self) -> std::sync::MutexGuard<'_, HashMap<String, ProgressSink>> {
        self.shared
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// `resources/list`, all pages, as JSON objects.
    pub async fn list_resources(&self, timeout: Duration) -> Result<Vec<Value>, McpError> {
        Ok(as_values(
            bounded(timeout, self.peer.list_all_resources()).await?,
        ))
    }

    /// `resources/templates/list`, all pages, as JSON objects.
    pub async fn list_resource_templates(&self, timeout: Duration) -> Result<Vec<Value>, McpError> {
        Ok(as_values(
            bounded(timeout, self.peer.list_all_resource_templates()).await?,
        ))
    }

    /// `resources/read`: the result object as JSON.
    pub async fn read_resource(&self, uri: &str, timeout: Duration) -> Result<Value, McpError> {
        let params = ReadResourceRequestParams::new(uri.to_string());
        let r = bounded(timeout, self.peer.read_resource(params)).await?;
        serde_json::to_value(r).map_err(|e| McpError::Server(e.to_string()))
    }

    /// Close the connection: the transport first (a stdio server sees stdin close), then the
    /// process, by signals if it does not exit. Calls in flight end with [`McpError::Closed`].
    pub async fn close(&self) {
        let service = self.service.lock().await.take();
        if let Some(mut s) = service {
            let _ = s.close_with_timeout(Duration::from_secs(2)).await;
            drop(s);
        }
        let process = self
            .process
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(p) = process {
            let how = p.stop().await;
            self.shared.log.line(&self.shared.server, &how);
        }
    }
}
