//! Every configured MCP server of a run: connecting them in the background at start-up, their
//! state (for `/mcp`, the system prompt and the first prompt's wait), their tools in the tool
//! registry's dynamic layer, reconnecting a dropped server on its next call, re-listing tools
//! when a server says they changed, and stopping them all when pi exits.
//!
//! A server's tools enter the registry only once it has connected and listed them, and leave
//! it when it fails, so the model is never offered a tool whose server is known to be gone.
//! `resources` reaches their resources; `wait` is how callers wait for servers to connect.

mod resources;
mod wait;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::client::{Connection, McpError, Progress};
use super::config::ServerConfig;
use super::launch;
pub use super::launch::describe;
use super::log::McpLog;
use super::tool::McpTool;
use crate::tools::shell_env::ShellEnvironment;
use crate::tools::{DynamicTools, Exposure};

/// The longest the first prompt waits for servers with direct tools.
pub const FIRST_PROMPT_WAIT: Duration = Duration::from_secs(10);

/// Where a server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Disabled,
    Connecting,
    Connected,
    Failed(String),
    Stopped,
}

impl Status {
    pub fn label(&self) -> &str {
        match self {
            Status::Disabled => "disabled",
            Status::Connecting => "connecting",
            Status::Connected => "connected",
            Status::Failed(_) => "failed",
            Status::Stopped => "stopped",
        }
    }
}

/// What `/mcp` and events show of one server.
#[derive(Debug, Clone)]
pub struct ServerView {
    pub name: String,
    pub status: Status,
    pub transport: String,
    /// Tools the server lists (all exposures).
    pub tools: usize,
    pub deferred: usize,
    pub last_error: Option<String>,
    pub server_version: Option<String>,
}

/// The dynamic layer's group of pi's own MCP tools (`tool_search`, the resource tools); it
/// sorts before every server's name.
pub const BUILTIN_GROUP: &str = "";

pub(super) struct Server {
    pub(super) config: ServerConfig,
    pub(super) status: Mutex<Status>,
    last_error: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    /// The live connection; replaced by a reconnect.
    conn: tokio::sync::Mutex<Option<Arc<Connection>>>,
    /// Tool re-listings under way (`tools/list_changed`): a call's result waits for them, so
    /// the request after a call that changed the tools already offers the new ones.
    relisting: watch::Sender<u32>,
}

impl Server {
    fn new(config: ServerConfig) -> Server {
        let status = if config.enabled {
            Status::Connecting
        } else {
            Status::Disabled
        };
        Server {
            config,
            status: Mutex::new(status),
            last_error: Mutex::default(),
            version: Mutex::default(),
            conn: tokio::sync::Mutex::default(),
            relisting: watch::Sender::new(0),
        }
    }
}

struct Inner {
    /// Configured servers, and those hooks registered since (`mcp.register`).
    servers: std::sync::RwLock<BTreeMap<String, Arc<Server>>>,
    tools: Arc<DynamicTools>,
    log: McpLog,
    /// The filtered environment stdio servers start from (the bash tool's), set by `start`.
    shell: std::sync::OnceLock<Arc<ShellEnvironment>>,
    project: PathBuf,
    /// Bumped at every state change.
    changed: watch::Sender<u64>,
    stopping: CancellationToken,
}

/// A cheap handle on the run's MCP servers.
#[derive(Clone)]
pub struct McpHub {
    inner: Arc<Inner>,
}

/// A handle that does not keep the servers alive: what their tools hold, since the registry
/// holding the tools is itself held by the hub.
#[derive(Clone)]
pub struct WeakHub(Weak<Inner>);

impl WeakHub {
    pub fn upgrade(&self) -> Option<McpHub> {
        self.0.upgrade().map(|inner| McpHub { inner })
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl McpHub {
    pub fn new(
        configs: BTreeMap<String, ServerConfig>,
        tools: Arc<DynamicTools>,
        log: McpLog,
        project: PathBuf,
    ) -> McpHub {
        let servers = configs
            .into_iter()
            .map(|(name, config)| (name, Arc::new(Server::new(config))))
            .collect();
        let hub = McpHub {
            inner: Arc::new(Inner {
                servers: std::sync::RwLock::new(servers),
                tools,
                log,
                shell: std::sync::OnceLock::new(),
                project,
                changed: watch::Sender::new(0),
                stopping: CancellationToken::new(),
            }),
        };
        hub.offer_builtins();
        hub
    }

    pub(super) fn all(&self) -> Vec<Arc<Server>> {
        let servers = self.inner.servers.read().unwrap_or_else(|p| p.into_inner());
        servers.values().cloned().collect()
    }

    fn get(&self, name: &str) -> Option<Arc<Server>> {
        let servers = self.inner.servers.read().unwrap_or_else(|p| p.into_inner());
        servers.get(name).cloned()
    }

    /// `tool_search` (when a server may defer tools) and the resource tools, in the dynamic
    /// layer's builtin group, as soon as there is any server: they come and go with servers
    /// a hook registers, like the servers' own tools.
    fn offer_builtins(&self) {
        if self.all().is_empty() {
            return;
        }
        let weak = self.downgrade();
        let mut tools: Vec<(Arc<dyn crate::tools::Tool>, Exposure)> = Vec::new();
        if self.may_defer() {
            tools.push((
                Arc::new(super::builtin::ToolSearch { hub: weak.clone() }),
                Exposure::Direct,
            ));
        }
        for templates in [false, true] {
            tools.push((
                Arc::new(super::builtin::ListResources {
                    hub: weak.clone(),
                    templates,
                }),
                Exposure::Direct,
            ));
        }
        tools.push((
            Arc::new(super::builtin::ReadResource { hub: weak }),
            Exposure::Direct,
        ));
        self.inner.tools.set_group(BUILTIN_GROUP, tools);
    }

    /// Add a server while pi runs (a hook's `mcp.register`) and connect it; resolves once it
    /// has connected or failed.
    pub async fn add(&self, config: ServerConfig) -> Result<ServerView, McpError> {
        let name = config.name.clone();
        let server = {
            let mut servers = self
                .inner
                .servers
                .write()
                .unwrap_or_else(|p| p.into_inner());
            match servers.get(&name) {
                // Hooks restarted with a new session register their servers again.
                Some(s) if s.config.transport == config.transport => s.clone(),
                Some(_) => {
                    return Err(McpError::Config(format!(
                        "an MCP server named {name:?} already exists with another entry"
                    )))
                }
                None => {
                    let server = Arc::new(Server::new(config));
                    servers.insert(name.clone(), server.clone());
                    server
                }
            }
        };
        self.offer_builtins();
        self.bump();
        if server.config.enabled && !self.inner.stopping.is_cancelled() {
            if let Err(e) = self.connection(&server).await {
                self.bump();
                return Err(e);
            }
        }
        self.views()
            .into_iter()
            .find(|v| v.name == name)
            .ok_or(McpError::Closed)
    }

    pub fn downgrade(&self) -> WeakHub {
        WeakHub(Arc::downgrade(&self.inner))
    }

    pub fn is_empty(&self) -> bool {
        self.all().is_empty()
    }

    pub fn tools(&self) -> &Arc<DynamicTools> {
        &self.inner.tools
    }

    pub fn log(&self) -> &McpLog {
        &self.inner.log
    }

    /// The variables of pi's environment the `env` and header values of the servers from the
    /// files (the user's mcp.json, a trusted project's) read: each is a credential, which the
    /// model's shell must not see. Disabled servers count: what the user configured as a
    /// secret stays one whether or not it is used today. Servers hooks registered are left
    /// out: they read the hook's environment, not pi's, and arrive after the shell's
    /// environment is fixed, so counting them would change it from one session to the next.
    pub fn credential_vars(&self) -> std::collections::BTreeSet<String> {
        let from_hook = |c: &ServerConfig| {
            c.foreign
                .as_deref()
                .is_some_and(|f| matches!(f.grantee(), crate::config::Grantee::Hook(_)))
        };
        self.all()
            .iter()
            .filter(|s| !from_hook(&s.config))
            .flat_map(|s| super::config::referenced_vars(&s.config))
            .collect()
    }

    /// Whether any server may have deferred tools (then `tool_search` is offered).
    pub fn may_defer(&self) -> bool {
        self.all().iter().any(|s| {
            s.config.enabled
                && (s.config.exposure == Exposure::Deferred
                    || s.config
                        .tool_exposure
                        .iter()
                        .any(|(_, e)| *e == Exposure::Deferred))
        })
    }

    /// Connect every enabled server, each in its own task; returns at once. Stdio servers get
    /// `shell` (the bash tool's filtered environment) plus their own `env`.
    pub fn start(&self, shell: Arc<ShellEnvironment>) {
        let _ = self.inner.shell.set(shell);
        for server in self.all() {
            if !server.config.enabled {
                continue;
            }
            let hub = self.clone();
            tokio::spawn(async move {
                let _ = hub.connection(&server).await;
            });
        }
    }

    /// A state change notifier (the value is a counter).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    fn bump(&self) {
        self.inner.changed.send_modify(|v| *v += 1);
    }

    fn set_status(&self, server: &Server, status: Status) {
        if let Status::Failed(e) = &status {
            *lock(&server.last_error) = Some(e.clone());
        }
        *lock(&server.status) = status;
        self.bump();
    }

    pub fn views(&self) -> Vec<ServerView> {
        self.all()
            .iter()
            .map(|s| {
                let name = &s.config.name;
                let (direct, deferred, hidden) = self.inner.tools.counts(name);
                ServerView {
                    name: name.clone(),
                    status: lock(&s.status).clone(),
                    transport: describe(&s.config.transport),
                    tools: direct + deferred + hidden,
                    deferred,
                    last_error: lock(&s.last_error).clone(),
                    server_version: lock(&s.version).clone(),
                }
            })
            .collect()
    }

    /// The live connection to `server`, connecting (again) when there is none or it closed.
    pub(super) async fn connection(
        &self,
        server: &Arc<Server>,
    ) -> Result<Arc<Connection>, McpError> {
        let mut slot = server.conn.lock().await;
        if let Some(c) = slot.as_ref() {
            if !c.is_closed() {
                return Ok(c.clone());
            }
            self.inner
                .log
                .line(&server.config.name, "connection lost; reconnecting");
        }
        if self.inner.stopping.is_cancelled() {
            return Err(McpError::Closed);
        }
        if let Some(old) = slot.take() {
            old.close().await;
        }
        self.set_status(server, Status::Connecting);
        match self.open(server).await {
            Ok(conn) => {
                let conn = Arc::new(conn);
                *lock(&server.version) = conn.server_version();
                match self.list_into_registry(server, &conn).await {
                    Ok(n) => {
                        *slot = Some(conn.clone());
                        self.set_status(server, Status::Connected);
                        // After the state: a reader of the log sees the server connected.
                        self.inner
                            .log
                            .line(&server.config.name, &format!("connected; {n} tools"));
                        Ok(conn)
                    }
                    Err(e) => {
                        self.fail(server, &e);
                        conn.close().await;
                        Err(e)
                    }
                }
            }
            Err(e) => {
                self.fail(server, &e);
                Err(e)
            }
        }
    }

    fn fail(&self, server: &Server, e: &McpError) {
        self.inner.tools.remove_group(&server.config.name);
        self.inner
            .log
            .line(&server.config.name, &format!("failed: {e}"));
        self.set_status(server, Status::Failed(e.to_string()));
    }

    async fn open(&self, server: &Arc<Server>) -> Result<Connection, McpError> {
        let shell = self.inner.shell.get().ok_or(McpError::Closed)?;
        let endpoint = launch::endpoint(&server.config, shell, &self.inner.project).await?;
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let name = server.config.name.clone();
        let on_change = Box::new(move || {
            let Some(inner) = weak.upgrade() else { return };
            let hub = McpHub { inner };
            let name = name.clone();
            if let Some(s) = hub.get(&name) {
                s.relisting.send_modify(|n| *n += 1);
            }
            tokio::spawn(async move {
                hub.refresh(&name).await;
                if let Some(s) = hub.get(&name) {
                    s.relisting.send_modify(|n| *n = n.saturating_sub(1));
                }
            });
        });
        Connection::open(
            &server.config.name,
            endpoint,
            server.config.timeout,
            self.inner.log.clone(),
            on_change,
        )
        .await
    }

    /// Re-list a server's tools (`notifications/tools/list_changed`).
    async fn refresh(&self, name: &str) {
        let Some(server) = self.get(name) else {
            return;
        };
        let conn = server.conn.lock().await.clone();
        if let Some(conn) = conn {
            if let Err(e) = self.list_into_registry(&server, &conn).await {
                self.inner
                    .log
                    .line(name, &format!("re-listing tools failed: {e}"));
            }
            self.bump();
        }
    }

    async fn list_into_registry(
        &self,
        server: &Arc<Server>,
        conn: &Connection,
    ) -> Result<usize, McpError> {
        let listed = conn.list_tools(server.config.timeout).await?;
        let n = listed.len();
        let tools = listed
            .into_iter()
            .map(|t| {
                let exposure = server.config.exposure_of(&t.name);
                let tool: Arc<dyn crate::tools::Tool> =
                    Arc::new(McpTool::new(self.downgrade(), &server.config.name, t));
                (tool, exposure)
            })
            .collect();
        self.inner.tools.set_group(&server.config.name, tools);
        Ok(n)
    }

    pub(super) fn server(&self, name: &str) -> Result<Arc<Server>, McpError> {
        self.get(name)
            .ok_or_else(|| McpError::Config(format!("no MCP server named {name:?}")))
    }

    /// Call a tool; a server that dropped is reconnected first.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        args: Value,
        cancel: &CancellationToken,
        progress: Option<tokio::sync::mpsc::UnboundedSender<Progress>>,
    ) -> Result<Value, McpError> {
        let s = self.server(server)?;
        let conn = self.connection(&s).await?;
        let r = conn
            .call_tool(tool, args, s.config.timeout, cancel, progress)
            .await;
        // A `tools/list_changed` sent with the answer is handled on a task of its own: let it
        // run, then wait (bounded) for the new list.
        tokio::task::yield_now().await;
        let mut relisting = s.relisting.subscribe();
        let _ = tokio::time::timeout(s.config.timeout, relisting.wait_for(|n| *n == 0)).await;
        if let Err(e) = &r {
            if e.is_disconnect() || conn.is_closed() {
                self.inner.log.line(server, &format!("call failed: {e}"));
                *lock(&s.last_error) = Some(e.to_string());
                self.bump();
            }
        }
        r
    }

    /// Close every connection (stdio servers: stdin, then SIGTERM, then SIGKILL), together.
    pub async fn shutdown(&self) {
        self.inner.stopping.cancel();
        let mut closing = Vec::new();
        for s in self.all() {
            let log = self.inner.log.clone();
            closing.push(tokio::spawn(async move {
                let conn = s.conn.lock().await.take();
                if let Some(conn) = conn {
                    // A call still holding it ends with "closed".
                    conn.close().await;
                    log.line(&s.config.name, "closed");
                }
                *lock(&s.status) = Status::Stopped;
            }));
        }
        for c in closing {
            let _ = c.await;
        }
    }
}
