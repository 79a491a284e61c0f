//! Tools: the trait every tool implements (built-in now, hook- and MCP-provided later), the
//! registry that validates arguments against each tool's JSON Schema (validators compiled once
//! per tool), and the built-in tools themselves.
//!
//! Compiling a validator checks the schema against its meta-schema, and the first compile in a
//! process builds that meta-schema: milliseconds that would sit between `pi` starting and its
//! first model request. So validators compile on first use, and, on a machine with cores to
//! spare, [`ToolRegistry::warm`] compiles them on a thread of their own while the first request
//! is in flight; a call that arrives first waits for (or does) the compile itself.

pub mod bash;
mod bash_structured;
pub mod details;
pub mod dynamic;
pub mod edit;
pub mod edit_diff;
pub mod edit_match;
pub mod file_util;
pub mod find;
pub mod grep;
pub mod ls;
pub mod mutation;
pub mod path;
pub mod process;
pub mod read;
pub mod shell_env;
pub mod truncate;
pub mod write;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use dynamic::{DynamicTools, Exposure};

use crate::message::Content;
use crate::provider::ToolSpec;

/// An MCP server's tool's name as pi declares it: `mcp__<server>__<tool>`, every character outside
/// `[A-Za-z0-9_]` becoming `_`.
pub fn mcp_tool_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("mcp__{}__{}", clean(server), clean(tool))
}

/// What a tool returns: content for the model, details for UIs and sessions, structured JSON
/// for programs, what it cost, and whether it asks the run to end after its batch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    pub content: Vec<Content>,
    pub details: Option<Value>,
    /// The result as JSON (for a tool with an output schema); never sent to the model as such.
    pub structured_content: Option<Value>,
    pub usage: Option<crate::message::Usage>,
    /// The run ends after this batch if every result in it asks to (pi's `terminate`).
    pub terminate: bool,
}

impl ToolOutput {
    pub fn text(s: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![Content::text(s)],
            details: None,
            ..Default::default()
        }
    }
}

/// A failed tool call. The message is what the model reads as the error result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ToolError {
    #[error("{0}")]
    Failed(String),
    /// Failed, but with output the model should still see (bash's non-zero exit). Boxed:
    /// an output is large next to the other variants.
    #[error("{}", crate::message::text_of(&.0.content))]
    FailedWithOutput(Box<ToolOutput>),
    #[error("Operation aborted")]
    Aborted,
}

/// Everything a running tool may use besides its arguments.
#[derive(Clone)]
pub struct ToolContext {
    pub cwd: PathBuf,
    pub cancel: CancellationToken,
    /// Partial results (`tool_execution_update`), cumulative snapshots.
    pub updates: Option<mpsc::UnboundedSender<ToolOutput>>,
    pub mutations: Arc<mutation::MutationQueue>,
    /// Who holds file locks this call may re-enter: the hook a nested `tools.execute` runs for
    /// (a hook holding `tools.with_file_lock` on a file can still run `edit` on it).
    pub lock_owner: Option<String>,
    /// pi's own variables for spawned processes (PI_SESSION_ID, …), added to the filtered
    /// environment of [`shell_env`].
    pub env: Vec<(String, String)>,
}

impl ToolContext {
    pub fn new(cwd: PathBuf) -> Self {
        ToolContext {
            cwd,
            cancel: CancellationToken::new(),
            updates: None,
            mutations: Arc::new(mutation::MutationQueue::default()),
            lock_owner: None,
            env: Vec::new(),
        }
    }

    /// Exclusive access to `path` for a read-modify-write, shared with every other tool of the
    /// run and with hooks' `tools.with_file_lock`. The wait ends with [`ToolError::Aborted`]
    /// as soon as the call is cancelled: a lock a hook holds for minutes must not keep an abort
    /// or a signal waiting, and a call aborted while it waited must never write afterwards.
    pub async fn lock_file(
        &self,
        path: &std::path::Path,
    ) -> Result<mutation::FileGuard, ToolError> {
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Err(ToolError::Aborted),
            guard = self.mutations.lock_as(path, self.lock_owner.as_deref()) => Ok(guard),
        }
    }

    pub fn send_update(&self, out: ToolOutput) {
        if let Some(tx) = &self.updates {
            let _ = tx.send(out);
        }
    }
}

/// One tool.
/// The `constrainedSampling` pi 1.6 declares with its built-in read, bash, edit and write.
pub(crate) fn builtin_constrained_sampling() -> Value {
    serde_json::json!({"type": "json_schema", "strict": "prefer"})
}

#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// JSON Schema of the arguments.
    fn parameters(&self) -> Value;
    /// One line for the system prompt's `tools` section.
    fn prompt_snippet(&self) -> Option<String> {
        None
    }
    /// Lines for the system prompt's `rules` section while the tool is offered.
    fn prompt_guidelines(&self) -> Vec<String> {
        Vec::new()
    }
    /// How the model (and hooks' `tools.execute`) reach the tool.
    fn exposure(&self) -> Exposure {
        Exposure::Direct
    }
    /// JSON Schema of the result's structured content, if the tool declares one.
    fn output_schema(&self) -> Option<Value> {
        None
    }
    /// pi 1.6's `constrainedSampling` hint, declared with the tool in the transcript.
    fn constrained_sampling(&self) -> Option<Value> {
        None
    }
    /// A sequential tool makes its whole batch run one call at a time.
    fn sequential(&self) -> bool {
        false
    }
    /// Normalise legacy argument shapes before validation (edit's top-level oldText/newText).
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }
    /// For an MCP server's tool: the server's and the tool's own names, which its pi name
    /// (`mcp__server__tool`, characters outside `[A-Za-z0-9_]` made `_`) cannot give back.
    fn mcp_origin(&self) -> Option<(&str, &str)> {
        None
    }
    async fn execute(
        &self,
        call_id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError>;
}

/// Why arguments were rejected before execution.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ArgumentError {
    #[error("Tool {tool} not found")]
    UnknownTool { tool: String },
    #[error(
        "Validation failed for tool \"{tool}\":\n{problems}\n\nReceived arguments:\n{received}"
    )]
    Invalid {
        tool: String,
        problems: String,
        received: String,
    },
}

/// A tool's validator, compiled once by whoever needs it first; `None` when its schema does
/// not compile (the tool then runs unvalidated rather than becoming unusable).
type LazyValidator = Arc<OnceLock<Option<Arc<jsonschema::Validator>>>>;

struct Entry {
    tool: Arc<dyn Tool>,
    validator: LazyValidator,
    exposure: Exposure,
}

/// A schema without `$schema` is read as draft-07, the draft pi's validator (AJV) assumes;
/// draft-07's meta-schema also builds in a quarter of the time of 2020-12's.
pub fn compile_schema(
    schema: &Value,
) -> Result<jsonschema::Validator, Box<jsonschema::ValidationError<'static>>> {
    let mut options = jsonschema::options().should_validate_formats(false);
    if schema.get("$schema").is_none() {
        options = options.with_draft(jsonschema::Draft::Draft7);
    }
    options.build(schema).map_err(Box::new)
}

fn compile(tool: &dyn Tool) -> Option<Arc<jsonschema::Validator>> {
    let r = compile_schema(&tool.parameters());
    match r {
        Ok(v) => Some(Arc::new(v)),
        Err(e) => {
            tracing::warn!(tool = %tool.name(), error = %e, "tool schema does not compile; arguments will not be validated");
            None
        }
    }
}

/// The tools known to this run, in registration order, with compiled validators.
#[derive(Default)]
pub struct ToolRegistry {
    entries: BTreeMap<String, Entry>,
    order: Vec<String>,
    /// What [`ToolRegistry::specs`] returns, built once: every model request carries it.
    specs: OnceLock<Arc<[ToolSpec]>>,
    /// Whether [`ToolRegistry::warm`] has run.
    warming: std::sync::atomic::AtomicBool,
    /// Tools that come and go while pi runs (MCP servers'), consulted after the fixed ones.
    dynamic: Option<Arc<DynamicTools>>,
    /// The fixed specs followed by the dynamic layer's, for the layer's version.
    combined: std::sync::Mutex<Option<(u64, Arc<[ToolSpec]>)>>,
    /// The user's `--tools` allowlist and `--exclude-tools`, which tools registered later
    /// (hooks' `tools.register`) are held to as well.
    allow: Option<Vec<String>>,
    exclude: Vec<String>,
}

impl ToolRegistry {
    /// Register or replace a tool by name; its schema is compiled when first needed (see
    /// [`ToolRegistry::warm`]).
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.name().to_string();
        if !self.entries.contains_key(&name) {
            self.order.push(name.clone());
        }
        let validator = LazyValidator::default();
        let exposure = tool.exposure();
        self.entries.insert(
            name,
            Entry {
                tool,
                validator,
                exposure,
            },
        );
        self.specs = OnceLock::new();
        *self.combined.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Compile every validator not compiled yet, on a thread of its own, when the machine has
    /// more than two cores; returns at once. The agent calls it as its first model request goes
    /// out, so the compile (milliseconds of CPU, mostly draft-07's meta-schema) runs while the
    /// model answers. On two cores that thread competes with what the run waits for (a local
    /// model server answering, the watchdog starting): measured, it cost the 50-call HTTP run
    /// more than compiling the one validator its first call needs, on first use, does.
    pub fn warm(&self) {
        // Asked once per process: the answer reads cgroup files, and this runs every request.
        static SPARE_CORES: OnceLock<bool> = OnceLock::new();
        let spare = *SPARE_CORES
            .get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 2));
        if spare {
            self.warm_on_a_thread();
        }
    }

    /// [`ToolRegistry::warm`] whatever the number of cores. Only the first call does anything.
    /// A validation meanwhile waits for that tool's compile (or does it, if it comes first).
    pub fn warm_on_a_thread(&self) {
        if self
            .warming
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        let pending: Vec<(Arc<dyn Tool>, LazyValidator)> = self
            .entries
            .values()
            .filter(|e| e.validator.get().is_none())
            .map(|e| (e.tool.clone(), e.validator.clone()))
            .collect();
        if pending.is_empty() {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("pi-schemas".into())
            .spawn(move || {
                for (tool, cell) in pending {
                    cell.get_or_init(|| compile(tool.as_ref()));
                }
            });
        if let Err(e) = spawned {
            // Nothing lost: each validator then compiles on its first use.
            tracing::debug!(error = %e, "could not start the schema thread");
        }
    }

    /// The user's tool selection, for tools that join later ([`ToolRegistry::admits`]).
    pub fn set_selection(&mut self, allow: Option<Vec<String>>, exclude: Vec<String>) {
        self.allow = allow;
        self.exclude = exclude;
    }

    /// Whether the user's `--tools` / `--exclude-tools` let a tool of this name join.
    pub fn admits(&self, name: &str) -> bool {
        self.allow
            .as_ref()
            .is_none_or(|a| a.iter().any(|n| n == name))
            && !self.exclude.iter().any(|n| n == name)
    }

    /// Attach the layer of tools that change while pi runs; it is shared, not copied, so
    /// every registry built for this run sees the same servers and activations.
    pub fn attach_dynamic(&mut self, dynamic: Arc<DynamicTools>) {
        self.dynamic = Some(dynamic);
    }

    pub fn dynamic(&self) -> Option<&Arc<DynamicTools>> {
        self.dynamic.as_ref()
    }

    /// A registered tool, whatever its exposure (callers decide who may reach it: see
    /// [`ToolRegistry::offers`] and [`ToolRegistry::exposure`]).
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        match self.entries.get(name) {
            Some(e) => Some(e.tool.clone()),
            None => self.dynamic.as_ref()?.get_any(name).map(|(t, _, _)| t),
        }
    }

    /// A registered tool's exposure.
    pub fn exposure(&self, name: &str) -> Option<Exposure> {
        match self.entries.get(name) {
            Some(e) => Some(e.exposure),
            None => self.dynamic.as_ref()?.exposure(name),
        }
    }

    /// Whether the model is offered `name` now — declared in the next request and callable by
    /// it — given the active list (`None`: nothing narrowed it). The one rule: a `hidden` tool
    /// never is; without a list the `direct` and `model-only` ones are; with one, the tools it
    /// names are (a `deferred` one included: naming it activates it); and a deferred dynamic
    /// tool that `tool_search` activated stays offered either way.
    pub fn offers(&self, name: &str, active: Option<&[String]>) -> bool {
        let Some(exposure) = self.exposure(name) else {
            return false;
        };
        let searched = exposure == Exposure::Deferred
            && !self.entries.contains_key(name)
            && self.dynamic.as_ref().is_some_and(|d| d.is_activated(name));
        match (exposure, active) {
            (Exposure::Hidden, _) => false,
            (_, _) if searched => true,
            (e, None) => e.offered_by_default(),
            (_, Some(list)) => list.iter().any(|n| n == name),
        }
    }

    /// The tools the model is offered now ([`ToolRegistry::offers`]), in registry order.
    pub fn offered(&self, active: Option<&[String]>) -> Arc<[ToolSpec]> {
        let Some(list) = active else {
            return self.specs();
        };
        self.all_names()
            .into_iter()
            .filter(|n| self.offers(n, Some(list)))
            .filter_map(|n| self.get(&n))
            .map(|t| ToolSpec::of(t.as_ref()))
            .collect()
    }

    /// The names [`ToolRegistry::offered`] declares.
    pub fn offered_names(&self, active: Option<&[String]>) -> Vec<String> {
        self.all_names()
            .into_iter()
            .filter(|n| self.offers(n, active))
            .collect()
    }

    /// Every registered tool that is not hidden, fixed ones in registration order first.
    pub fn all_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .order
            .iter()
            .filter(|n| {
                self.entries
                    .get(*n)
                    .is_some_and(|e| e.exposure != Exposure::Hidden)
            })
            .cloned()
            .collect();
        if let Some(d) = &self.dynamic {
            names.extend(
                d.all_names()
                    .into_iter()
                    .filter(|n| !self.entries.contains_key(n)),
            );
        }
        names
    }

    /// The fixed tools in registration order, then the visible dynamic ones.
    pub fn names(&self) -> Vec<String> {
        let mut names = self.order.clone();
        if let Some(d) = &self.dynamic {
            names.extend(
                d.names()
                    .into_iter()
                    .filter(|n| !self.entries.contains_key(n)),
            );
        }
        names
    }

    /// Every tool's name, description and parameter schema: the fixed tools in registration
    /// order, then the dynamic layer's visible ones.
    pub fn specs(&self) -> Arc<[ToolSpec]> {
        let fixed = self.fixed_specs();
        let Some(d) = &self.dynamic else {
            return fixed;
        };
        let version = d.version();
        let mut cache = self.combined.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((v, specs)) = cache.as_ref() {
            if *v == version {
                return specs.clone();
            }
        }
        let extra = d.specs();
        let specs: Arc<[ToolSpec]> = if extra.is_empty() {
            fixed
        } else {
            fixed
                .iter()
                .chain(extra.iter().filter(|t| !self.entries.contains_key(&t.name)))
                .cloned()
                .collect()
        };
        *cache = Some((version, specs.clone()));
        specs
    }

    fn fixed_specs(&self) -> Arc<[ToolSpec]> {
        self.specs
            .get_or_init(|| {
                self.order
                    .iter()
                    .filter_map(|n| self.entries.get(n))
                    .filter(|e| e.exposure.offered_by_default())
                    .map(|e| ToolSpec::of(e.tool.as_ref()))
                    .collect()
            })
            .clone()
    }

    /// Keep only the named tools, in the given order.
    pub fn retain(&mut self, keep: &[String]) {
        self.order.retain(|n| keep.contains(n));
        self.entries.retain(|n, _| keep.contains(n));
        self.specs = OnceLock::new();
        *self.combined.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// A registered tool, fixed or dynamic, with its validator.
    fn entry(&self, name: &str) -> Result<(Arc<dyn Tool>, LazyValidator), ArgumentError> {
        if let Some(e) = self.entries.get(name) {
            return Ok((e.tool.clone(), e.validator.clone()));
        }
        self.dynamic
            .as_ref()
            .and_then(|d| d.get_any(name))
            .map(|(t, v, _)| (t, v))
            .ok_or_else(|| ArgumentError::UnknownTool {
                tool: name.to_string(),
            })
    }

    /// Prepare and validate arguments for a call. Returns the arguments the tool will receive.
    pub fn validate(&self, name: &str, args: Value) -> Result<Value, ArgumentError> {
        let (tool, _) = self.entry(name)?;
        let args = tool.prepare_arguments(args);
        self.check(name, &args)?;
        Ok(args)
    }

    /// Validate already-prepared arguments (used again after a hook patches them).
    pub fn check(&self, name: &str, args: &Value) -> Result<(), ArgumentError> {
        let (tool, validator) = self.entry(name)?;
        let Some(v) = validator.get_or_init(|| compile(tool.as_ref())) else {
            return Ok(());
        };
        // Valid arguments are the rule; collecting errors costs several times a plain check.
        if v.is_valid(args) {
            return Ok(());
        }
        let problems: Vec<String> = v
            .iter_errors(args)
            .map(|e| {
                let path = e.instance_path().to_string();
                let path = if path.is_empty() {
                    "root".to_string()
                } else {
                    path
                };
                format!("  - {path}: {e}")
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ArgumentError::Invalid {
                tool: name.to_string(),
                problems: problems.join("\n"),
                received: serde_json::to_string_pretty(args).unwrap_or_default(),
            })
        }
    }
}

/// Names of every built-in tool, in pi's order.
pub const BUILTIN_NAMES: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];
/// Built-ins active when no `--tools` is given.
pub const DEFAULT_ACTIVE: [&str; 4] = ["read", "bash", "edit", "write"];

/// A built-in tool by name.
pub fn builtin(name: &str) -> Option<Arc<dyn Tool>> {
    Some(match name {
        "read" => Arc::new(read::ReadTool),
        "bash" => Arc::new(bash::BashTool::default()),
        "edit" => Arc::new(edit::EditTool),
        "write" => Arc::new(write::WriteTool),
        "grep" => Arc::new(grep::GrepTool),
        "find" => Arc::new(find::FindTool),
        "ls" => Arc::new(ls::LsTool),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A tool that only has a schema.
    struct Shaped(Value);

    #[async_trait::async_trait]
    impl Tool for Shaped {
        fn name(&self) -> &str {
            "shaped"
        }
        fn description(&self) -> &str {
            "test"
        }
        fn parameters(&self) -> Value {
            self.0.clone()
        }
        async fn execute(
            &self,
            _call_id: &str,
            _args: Value,
            _ctx: &ToolContext,
        ) -> Result<ToolOutput, ToolError> {
            unreachable!("never executed")
        }
    }

    fn registry(schema: Value) -> ToolRegistry {
        let mut reg = ToolRegistry::default();
        reg.register(Arc::new(Shaped(schema)));
        reg
    }

    /// The specs are built once and shared by every request; registering or dropping a tool
    /// must still show in the next request.
    #[test]
    fn specs_follow_every_registration_and_retain() {
        let mut reg = ToolRegistry::default();
        reg.register(builtin("read").unwrap());
        let first = reg.specs();
        assert!(Arc::ptr_eq(&first, &reg.specs()), "built once");
        reg.register(builtin("bash").unwrap());
        let names = |r: &ToolRegistry| -> Vec<String> {
            r.specs().iter().map(|t| t.name.clone()).collect()
        };
        assert_eq!(names(&reg), ["read", "bash"]);
        reg.retain(&["bash".to_string()]);
        assert_eq!(names(&reg), ["bash"]);
        assert_eq!(
            reg.specs()[0].parameters,
            builtin("bash").unwrap().parameters()
        );
    }

    #[test]
    fn arguments_are_checked_whether_or_not_the_schemas_were_warmed() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}},
            "required": ["n"]});
        let cold = registry(schema.clone());
        assert!(cold.check("shaped", &json!({"n": "x"})).is_err());
        let warm = registry(schema);
        warm.warm_on_a_thread();
        // Whichever thread compiles, the answer is the same.
        assert!(warm.check("shaped", &json!({})).is_err());
        assert!(warm.check("shaped", &json!({"n": 1})).is_ok());
    }

    /// TypeBox tuples (`items` as an array) mean what AJV makes of them: draft-07's positional
    /// items, not a schema that fails to compile and lets every argument through.
    #[test]
    fn a_schema_without_dollar_schema_is_read_as_draft_07_like_pi_reads_it() {
        let reg = registry(
            json!({"type": "object", "properties": {"pair": {"type": "array",
            "items": [{"type": "string"}, {"type": "number"}]}}}),
        );
        assert!(reg.check("shaped", &json!({"pair": ["a", 1]})).is_ok());
        assert!(reg.check("shaped", &json!({"pair": ["a", "b"]})).is_err());
    }

    #[test]
    fn a_schema_that_does_not_compile_leaves_the_tool_usable_unvalidated() {
        let reg = registry(json!({"type": 12}));
        reg.warm_on_a_thread();
        assert!(reg.check("shaped", &json!({"anything": true})).is_ok());
    }
}
