//! The Chat Completions request body as plain serde types that borrow from the [`Request`].
//!
//! As for Anthropic ([`super::anthropic_body`]): the conversation is written straight from the
//! request's messages, and a `serde_json::Value` is made only when a `before_provider_request`
//! hook must see the body. Text that is one block is borrowed; text joined from several blocks
//! and the data URLs of images are the only parts built, the URLs written as they serialize.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

use super::cache_retention::Retention;
use super::kept_json::{KeptJson, Pass};
use super::openai::{compat_bool, reasoning_effort};
use super::openai_responses_body::prompt_cache_key;
use super::stream::replayable_messages;
use super::transcript::{self, ToolSupport};
use super::{Request, ToolSpec};
use crate::message::system::{SystemMessage, ToolDeclaration};
use crate::message::{Content, CustomMessage, Message, UserContent, UserMessage};

/// `data:{mime};base64,{data}`, written while serializing rather than built first.
#[derive(Debug)]
pub(super) struct DataUrl<'a> {
    pub mime_type: &'a str,
    pub data: &'a str,
}

impl Serialize for DataUrl<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!(
            "data:{};base64,{}",
            self.mime_type, self.data
        ))
    }
}

#[derive(Debug, Serialize)]
struct ImageUrl<'a> {
    url: DataUrl<'a>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: ImageUrl<'a> },
}

fn image_part<'a>(data: &'a str, mime_type: &'a str) -> Part<'a> {
    Part::ImageUrl {
        image_url: ImageUrl {
            url: DataUrl { mime_type, data },
        },
    }
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum WireContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<Part<'a>>),
    /// `null`: an assistant turn with only tool calls.
    Null(Option<()>),
}

/// A tool call's arguments as the JSON string the API wants, written while serializing.
#[derive(Debug)]
pub(super) struct ArgumentsString<'a>(pub &'a Value);

impl Serialize for ArgumentsString<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self.0)
    }
}

#[derive(Debug, Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: ArgumentsString<'a>,
}

#[derive(Debug, Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    ty: &'static str,
    function: Function<'a>,
}

/// One message; the optional fields are where each role has them, as pi 1.6 writes them
/// (`tool_calls` after an assistant's content, `tool_call_id` after a tool message's).
#[derive(Debug, Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: WireContent<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

impl<'a> WireMessage<'a> {
    fn new(role: &'static str, content: WireContent<'a>) -> Self {
        WireMessage {
            role,
            tool_call_id: None,
            content,
            tool_calls: Vec::new(),
        }
    }
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Debug, Serialize)]
struct WireFunctionSpec<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    function: WireFunctionSpec<'a>,
}

fn wire_tool<'a>(name: &'a str, description: &'a str, parameters: &'a Value) -> WireTool<'a> {
    WireTool {
        ty: "function",
        function: WireFunctionSpec {
            name,
            description,
            parameters,
        },
    }
}

/// A `tools` array: the request's specs, or tools a system message declares (in place, see
/// [`super::transcript`]).
///
/// Every request of a run carries the same specs (the registry shares one allocation), and
/// writing their schemas from `Value`s costs more than the rest of an early request's body;
/// so the JSON of the last specs written is kept and written again as it is.
#[derive(Debug)]
enum Tools<'a> {
    Specs(&'a Arc<[ToolSpec]>),
    Declared(Vec<&'a ToolDeclaration>),
}

/// The last specs written and their JSON.
type KeptTools = Option<(Arc<[ToolSpec]>, Box<RawValue>)>;

impl Tools<'_> {
    fn is_empty(&self) -> bool {
        match self {
            Tools::Specs(specs) => specs.is_empty(),
            Tools::Declared(list) => list.is_empty(),
        }
    }
}

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let specs = match self {
            Tools::Specs(specs) => *specs,
            Tools::Declared(list) => {
                return s.collect_seq(
                    list.iter()
                        .map(|t| wire_tool(&t.name, &t.description, &t.parameters)),
                )
            }
        };
        // The cached specs are held, so their allocation cannot be reused for other specs.
        static LAST: Mutex<KeptTools> = Mutex::new(None);
        let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((kept, json)) = last.as_ref() {
            if Arc::ptr_eq(kept, specs) {
                return json.serialize(s);
            }
        }
        let wire: Vec<WireTool<'_>> = specs
            .iter()
            .map(|t| wire_tool(&t.name, &t.description, &t.parameters))
            .collect();
        let json = serde_json::to_string(&wire)
            .and_then(RawValue::from_string)
            .map_err(S::Error::custom)?;
        let written = json.serialize(s);
        *last = Some((Arc::clone(specs), json));
        written
    }
}

/// A system message declaring tools where it stands (1.6's for models that take tool
/// additions in the conversation).
#[derive(Debug, Serialize)]
struct ToolsMessage<'a> {
    role: &'static str,
    tools: Tools<'a>,
}

/// One message of the body: written now, or the JSON it was written as in the last request.
#[derive(Debug)]
enum Entry<'a> {
    Wire(WireMessage<'a>),
    Kept(Arc<RawValue>),
    Tools(ToolsMessage<'a>),
}

impl Serialize for Entry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Entry::Wire(m) => m.serialize(s),
            Entry::Kept(json) => json.serialize(s),
            Entry::Tools(m) => m.serialize(s),
        }
    }
}

/// The JSON of the last request's messages (see [`super::kept_json`]).
static KEPT: Mutex<Option<KeptJson>> = KeptJson::new();

/// The request body (before `before_provider_request`).
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    model: &'a str,
    messages: Vec<Entry<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_retention: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    /// One of the two, by `compat.maxTokensField`.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Tools::is_empty")]
    tools: Tools<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
}

/// The replayable messages of a request, for [`body`].
pub fn replayed(req: &Request) -> Vec<Arc<Message>> {
    replayable_messages(&req.messages)
}

/// The body of `req`. `replayed` must be [`replayed`] of the same request (the caller keeps
/// it alive, as the body borrows from it).
pub fn body<'a>(req: &'a Request, replayed: &'a [Arc<Message>]) -> Body<'a> {
    let model = &req.model;
    let (max_tokens, max_completion_tokens) = match model.max_tokens {
        0 => (None, None),
        n => match model.compat.get("maxTokensField").and_then(Value::as_str) {
            Some("max_tokens") => (Some(n), None),
            _ => (None, Some(n)),
        },
    };
    let reasoning = model.reasoning && compat_bool(model, "supportsReasoningEffort") != Some(false);
    // In place, the tools the list stands for; the rest are added where they are declared.
    let in_place = transcript::in_place(req);
    let support = if in_place && compat_bool(model, "supportsMidConvoToolAdditions") == Some(true) {
        ToolSupport::Additions
    } else {
        ToolSupport::None
    };
    let declared = transcript::transcript_tools(&req.messages, support);
    let (tools, folded) = if in_place {
        (
            Tools::Declared(declared.request_tools),
            Some(declared.folded),
        )
    } else {
        (Tools::Specs(&req.tools), None)
    };
    let (prompt_cache_key, prompt_cache_retention) = prompt_cache(req);
    Body {
        model: &model.id,
        messages: messages(req, replayed, folded),
        stream: true,
        prompt_cache_key,
        prompt_cache_retention,
        stream_options: (compat_bool(model, "supportsUsageInStreaming") != Some(false)).then_some(
            StreamOptions {
                include_usage: true,
            },
        ),
        max_tokens,
        max_completion_tokens,
        tools,
        reasoning_effort: reasoning.then(|| reasoning_effort(req.thinking)).flatten(),
    }
}

/// The session's prompt cache key and, for `PI_CACHE_RETENTION=long`, a day's retention, as
/// 1.6's `buildParams` sends them: the key to OpenAI itself, to a server told so
/// (`compat.promptCacheKeyMode: "enabled"`), or with a long retention the server keeps
/// (`compat.supportsLongCacheRetention`, which hosts known not to are without).
fn prompt_cache(req: &Request) -> (Option<&str>, Option<&'static str>) {
    let model = &req.model;
    let url = &model.base_url;
    let p = model.provider.as_str();
    let without_long = [
        ("together", "api.together.ai"),
        ("together", "api.together.xyz"),
        ("cloudflare-workers-ai", "api.cloudflare.com"),
        ("cloudflare-ai-gateway", "gateway.ai.cloudflare.com"),
        ("nvidia", "integrate.api.nvidia.com"),
        ("ant-ling", "api.ant-ling.com"),
    ]
    .iter()
    .any(|(provider, host)| p == *provider || url.contains(host));
    let long = Retention::of(model).long_kept(model, !without_long);
    let send_key = match model
        .compat
        .get("promptCacheKeyMode")
        .and_then(Value::as_str)
    {
        Some("enabled") => true,
        Some("disabled") => false,
        _ => url.contains("api.openai.com") || long,
    };
    (
        send_key.then(|| prompt_cache_key(req)).flatten(),
        long.then_some("24h"),
    )
}

/// User content: a plain string when it is only text (accepted by every server), else parts.
fn user_content(blocks: &[Content]) -> Option<WireContent<'_>> {
    let has_image = blocks.iter().any(|b| matches!(b, Content::Image { .. }));
    if !has_image {
        let text = crate::message::joined_text(blocks);
        return (!text.is_empty()).then_some(WireContent::Text(text));
    }
    let parts = blocks
        .iter()
        .filter_map(|b| match b {
            Content::Text { text, .. } if !text.is_empty() => Some(Part::Text { text }),
            Content::Image { data, mime_type } => Some(image_part(data, mime_type)),
            _ => None,
        })
        .collect();
    Some(WireContent::Parts(parts))
}

/// pi's messages as Chat Completions messages.
/// The system message, as JSON kept while the prompt stays the same: it is the longest
/// message of most requests and the same in all of them, so comparing it is much cheaper than
/// escaping it again.
fn system_entry<'a>(role: &'static str, prompt: &'a str) -> Entry<'a> {
    type KeptSystem = Option<(&'static str, String, Arc<RawValue>)>;
    static LAST: Mutex<KeptSystem> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((r, p, json)) = last.as_ref() {
        if *r == role && p == prompt {
            return Entry::Kept(Arc::clone(json));
        }
    }
    let wire = WireMessage::new(role, WireContent::Text(Cow::Borrowed(prompt)));
    match serde_json::to_string(&wire).and_then(RawValue::from_string) {
        Ok(json) => {
            let json: Arc<RawValue> = Arc::from(json);
            *last = Some((role, prompt.to_string(), Arc::clone(&json)));
            Entry::Kept(json)
        }
        Err(_) => Entry::Wire(wire),
    }
}

/// The system and developer messages' role.
fn instruction_role(req: &Request) -> &'static str {
    let developer =
        req.model.reasoning && compat_bool(&req.model, "supportsDeveloperRole") == Some(true);
    if developer {
        "developer"
    } else {
        "system"
    }
}

/// A system message in place (`position` in the replayed conversation): the tools it adds
/// when they are not in the request's list (it is not among the first `folded`), then its
/// text, the whole prompt when it leads, else the update.
fn system_in_place<'a>(
    req: &Request,
    s: &'a SystemMessage,
    position: usize,
    anchors_tools: bool,
    out: &mut Vec<Entry<'a>>,
) {
    let added: Vec<&ToolDeclaration> = s.tools_added.iter().flatten().collect();
    if anchors_tools && !added.is_empty() {
        out.push(Entry::Tools(ToolsMessage {
            role: "system",
            tools: Tools::Declared(added),
        }));
    }
    let text = if position == 0 {
        s.text()
    } else {
        transcript::update_text(s)
    };
    if !text.is_empty() {
        out.push(Entry::Wire(WireMessage::new(
            instruction_role(req),
            WireContent::Text(Cow::Owned(text)),
        )));
    }
}

/// `folded`: with the system messages in place, how many the request's tool list stands for.
fn messages<'a>(
    req: &'a Request,
    replayed: &'a [Arc<Message>],
    folded: Option<usize>,
) -> Vec<Entry<'a>> {
    fn flush_images<'a>(images: &mut Vec<Part<'a>>, out: &mut Vec<Entry<'a>>) {
        if images.is_empty() {
            return;
        }
        let mut parts = vec![Part::Text {
            text: "Attached image(s) from tool result:",
        }];
        parts.append(images);
        out.push(Entry::Wire(WireMessage::new(
            "user",
            WireContent::Parts(parts),
        )));
    }
    let mut out = Vec::with_capacity(replayed.len() + 1);
    if folded.is_none() && !req.system_prompt.is_empty() {
        out.push(system_entry(instruction_role(req), &req.system_prompt));
    }
    let mut kept = Pass::begin(&KEPT);
    // Tool messages cannot carry images, so images from a run of tool results follow it as
    // one user message (as pi does).
    let mut tool_images: Vec<Part<'a>> = Vec::new();
    let mut systems = 0;
    for (position, m) in replayed.iter().enumerate() {
        if !matches!(**m, Message::ToolResult(_)) {
            flush_images(&mut tool_images, &mut out);
        }
        // Written anew each time: what a system message says depends on those after it.
        // Collapsed, the prompt is the leading message: the request's, which the transcript's
        // system messages replay to.
        if let Message::System(s) = m.as_ref() {
            if let Some(folded) = folded {
                system_in_place(req, s, position, systems >= folded, &mut out);
                systems += 1;
            }
            continue;
        }
        if let Some(json) = kept.get(m) {
            out.push(Entry::Kept(json));
            continue;
        }
        let images_before = tool_images.len();
        let Some(wire) = wire_message(m, &mut tool_images) else {
            continue;
        };
        // A tool result with images also shapes the user message after its run: its JSON
        // alone would not say all it was written as.
        let json = (tool_images.len() == images_before)
            .then(|| kept.keep(m, &wire))
            .flatten();
        out.push(match json {
            Some(json) => Entry::Kept(json),
            None => Entry::Wire(wire),
        });
    }
    flush_images(&mut tool_images, &mut out);
    out
}

/// One message on the wire (`None` when it has nothing to send); a tool result's images go to
/// `tool_images`.
fn wire_message<'a>(m: &'a Message, tool_images: &mut Vec<Part<'a>>) -> Option<WireMessage<'a>> {
    match m {
        // Handled by the caller.
        Message::System(_) => None,
        Message::User(UserMessage { content, .. })
        | Message::Custom(CustomMessage { content, .. }) => {
            let content = match content {
                UserContent::Text(s) => {
                    (!s.is_empty()).then(|| WireContent::Text(Cow::Borrowed(s)))
                }
                UserContent::Blocks(b) => user_content(b),
            };
            content.map(|c| WireMessage::new("user", c))
        }
        Message::Assistant(a) => {
            let text = crate::message::joined_text(&a.content);
            let calls: Vec<WireCall<'a>> = a
                .tool_calls()
                .into_iter()
                .map(|tc| WireCall {
                    id: &tc.id,
                    ty: "function",
                    function: Function {
                        name: &tc.name,
                        arguments: ArgumentsString(&tc.arguments),
                    },
                })
                .collect();
            if text.is_empty() && calls.is_empty() {
                return None;
            }
            let content = if text.is_empty() {
                WireContent::Null(None)
            } else {
                WireContent::Text(text)
            };
            let mut msg = WireMessage::new("assistant", content);
            msg.tool_calls = calls;
            Some(msg)
        }
        Message::ToolResult(r) => {
            let mut text = crate::message::joined_text(&r.content);
            for b in &r.content {
                if let Content::Image { data, mime_type } = b {
                    tool_images.push(image_part(data, mime_type));
                }
            }
            if text.trim().is_empty() {
                text = Cow::Borrowed(
                    if r.content.iter().any(|b| matches!(b, Content::Image { .. })) {
                        "(see attached image)"
                    } else {
                        "(no tool output)"
                    },
                );
            }
            let mut msg = WireMessage::new("tool", WireContent::Text(text));
            msg.tool_call_id = Some(&r.tool_call_id);
            Some(msg)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::stream::body_support::every_kind;

    /// What pi 1.6.0's `openai-completions` sent for one session (`sess`) to each server,
    /// with and without `PI_CACHE_RETENTION=long` (run under node with the pinned pi-ai).
    #[test]
    fn the_prompt_cache_is_asked_for_as_pi_1_6_asks() {
        let cases = [
            (
                "openai",
                "https://api.openai.com/v1",
                None,
                false,
                Some("sess"),
                None,
            ),
            (
                "openai",
                "https://api.openai.com/v1",
                None,
                true,
                Some("sess"),
                Some("24h"),
            ),
            ("x", "https://llm.example/v1", None, false, None, None),
            (
                "x",
                "https://llm.example/v1",
                None,
                true,
                Some("sess"),
                Some("24h"),
            ),
            (
                "together",
                "https://api.together.xyz/v1",
                None,
                true,
                None,
                None,
            ),
            (
                "x",
                "https://llm.example/v1",
                Some(serde_json::json!({"supportsLongCacheRetention": false})),
                true,
                None,
                None,
            ),
            (
                "x",
                "https://llm.example/v1",
                Some(serde_json::json!({"promptCacheKeyMode": "enabled"})),
                false,
                Some("sess"),
                None,
            ),
        ];
        for (provider, url, compat, long, key, retention) in cases {
            let mut req = every_kind("openai-completions");
            req.model.provider = provider.into();
            req.model.base_url = url.into();
            req.model.compat = compat.unwrap_or(Value::Null);
            req.session_id = Some("sess".into());
            if long {
                req.model
                    .auth
                    .env
                    .insert("PI_CACHE_RETENTION".into(), "long".into());
            }
            let replayed = replayed(&req);
            let body = serde_json::to_value(body(&req, &replayed)).unwrap();
            let what = format!("{provider} {url} long={long}");
            assert_eq!(body["prompt_cache_key"].as_str(), key, "{what}");
            assert_eq!(body["prompt_cache_retention"].as_str(), retention, "{what}");
            let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
            let at = |k: &str| keys.iter().position(|x| *x == k);
            if key.is_some() {
                assert_eq!(
                    at("prompt_cache_key"),
                    Some(3),
                    "after stream, as 1.6 writes it"
                );
            }
        }
    }

    #[test]
    fn the_body_written_from_references_is_the_body_hooks_see() {
        let req = every_kind("openai-completions");
        let replayed = replayed(&req);
        let body = body(&req, &replayed);
        let direct = serde_json::to_string(&body).unwrap();
        let value = serde_json::to_value(&body).unwrap();
        assert_eq!(direct, serde_json::to_string(&value).unwrap());
        let msgs = value["messages"].as_array().unwrap();
        assert_eq!(
            msgs[2]["content"][1]["image_url"]["url"],
            "data:image/png;base64,QUJD\"/+"
        );
        assert_eq!(msgs[3]["content"], "a\nb");
        assert_eq!(msgs[4]["content"], "one\ntwo \"quoted\"\n");
        assert_eq!(
            msgs[4]["tool_calls"][0]["function"]["arguments"],
            r#"{"path":"a.png","n":[1,2.5,null]}"#
        );
        assert_eq!(msgs[6]["content"], "(no tool output)");
        assert_eq!(
            msgs[7]["content"][0]["text"],
            "Attached image(s) from tool result:"
        );
        assert!(msgs[8]["content"].is_null());
        assert_eq!(value["max_completion_tokens"], 4096);
        assert!(value.get("max_tokens").is_none());
    }

    /// A message already sent comes out of the kept JSON exactly as it was first written, and
    /// a message in a new allocation (an edited context) is written from what it says now.
    #[test]
    fn kept_messages_come_out_as_written_and_new_ones_are_written_anew() {
        let mut req = every_kind("openai-completions");
        let kept = replayed(&req);
        let first = serde_json::to_string(&body(&req, &kept)).unwrap();
        let again = serde_json::to_string(&body(&req, &kept)).unwrap();
        assert_eq!(first, again);
        let edited = Arc::new(Message::user("edited"));
        req.messages[0] = edited;
        let replayed_now = replayed(&req);
        let v = serde_json::to_value(body(&req, &replayed_now)).unwrap();
        assert!(v["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["content"] == "edited"));
    }

    /// The tools' JSON is kept between requests; the same specs must come out the same, and
    /// other specs must never come out as the kept ones.
    #[test]
    fn tools_come_out_the_same_from_the_kept_json_and_new_specs_are_written_anew() {
        let req = every_kind("openai-completions");
        let kept = replayed(&req);
        let first = serde_json::to_string(&body(&req, &kept)).unwrap();
        assert_eq!(first, serde_json::to_string(&body(&req, &kept)).unwrap());
        let v: Value = serde_json::from_str(&first).unwrap();
        assert_eq!(v["tools"][0]["function"]["name"], "read");
        assert_eq!(v["tools"][0]["type"], "function");
        let mut other = every_kind("openai-completions");
        other.tools = vec![ToolSpec {
            name: "write".into(),
            description: "writes".into(),
            parameters: serde_json::json!({"type": "object", "required": ["path"]}),
            constrained_sampling: None,
        }]
        .into();
        let other_replayed = replayed(&other);
        let v = serde_json::to_value(body(&other, &other_replayed)).unwrap();
        assert_eq!(v["tools"][0]["function"]["name"], "write");
        assert_eq!(
            v["tools"][0]["function"]["parameters"]["required"][0],
            "path"
        );
        other.tools = Arc::new([]);
        let v = serde_json::to_value(body(&other, &other_replayed)).unwrap();
        assert!(v.get("tools").is_none());
    }
}
