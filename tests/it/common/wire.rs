//! Reading provider request bodies as the mock received them, for every wire format (chat
//! completions, Anthropic messages, OpenAI Responses `input` items, Gemini `contents`): the
//! tool names declared, the system prompt, the user text, and the tool calls / results in
//! context.

use serde_json::Value;

/// Gemini's function declarations (`tools[].functionDeclarations[]`).
fn declarations(body: &Value) -> Vec<&Value> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["functionDeclarations"].as_array().into_iter().flatten())
        .collect()
}

/// Names of the tools declared in a request (OpenAI `tools[].function.name`, Anthropic
/// `tools[].name`, Gemini's declarations), sorted. An absent `tools` field means none.
pub fn tool_names(body: &Value) -> Vec<String> {
    let mut names: Vec<String> = body["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["function"]["name"].as_str().or(t["name"].as_str()))
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    names.extend(
        declarations(body)
            .into_iter()
            .filter_map(|d| d["name"].as_str().map(String::from)),
    );
    names.sort();
    names
}

/// The schema declared for tool `name` (OpenAI `function.parameters`, Anthropic `input_schema`).
pub fn tool_schema(body: &Value, name: &str) -> Option<Value> {
    if let Some(d) = declarations(body).into_iter().find(|d| d["name"] == name) {
        return Some(d["parametersJsonSchema"].clone());
    }
    body["tools"].as_array()?.iter().find_map(|t| {
        if t["function"]["name"] == name {
            Some(t["function"]["parameters"].clone())
        } else if t["name"] == name && t["type"] == "function" {
            Some(t["parameters"].clone())
        } else if t["name"] == name {
            Some(t["input_schema"].clone())
        } else {
            None
        }
    })
}

/// Text of an OpenAI or Anthropic `content` value (string or block list, nested tool_result
/// content included).
pub fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .map(|b| match b {
                Value::String(s) => s.clone(),
                _ if b["text"].is_string() => b["text"].as_str().unwrap_or_default().to_string(),
                _ if b["type"] == "tool_result" => content_text(&b["content"]),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The system prompt: OpenAI `system`/`developer` messages, Anthropic's `system` field, or
/// Gemini's `systemInstruction`.
pub fn system_text(body: &Value) -> String {
    let mut out = content_text(&body["system"]);
    out.push_str(&content_text(&body["systemInstruction"]["parts"]));
    for m in messages(body) {
        if m["role"] == "system" || m["role"] == "developer" {
            out.push_str(&content_text(&m["content"]));
        }
    }
    out
}

/// The context's messages: `messages`, a Responses body's `input` items (whose tool calls
/// and results are items of their own, without a role), or Gemini's `contents` (each with
/// its `parts` as `content`, so the readers here take them as blocks).
pub fn messages(body: &Value) -> Vec<Value> {
    if let Some(contents) = body["contents"].as_array() {
        return contents
            .iter()
            .map(|c| serde_json::json!({"role": c["role"], "content": c["parts"]}))
            .collect();
    }
    body["messages"]
        .as_array()
        .or(body["input"].as_array())
        .cloned()
        .unwrap_or_default()
}

/// Text of every user message, joined (Anthropic tool_result blocks excluded).
pub fn user_text(body: &Value) -> String {
    messages(body)
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::Array(a) => content_text(&Value::Array(
                a.iter()
                    .filter(|b| b["type"] != "tool_result")
                    .cloned()
                    .collect(),
            )),
            c => content_text(c),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first user message's text.
pub fn first_user_text(body: &Value) -> String {
    messages(body)
        .iter()
        .find(|m| m["role"] == "user")
        .map(|m| content_text(&m["content"]))
        .unwrap_or_default()
}

/// Tool calls made by assistant messages in the context: (id, name, arguments), in order.
pub fn assistant_tool_calls(body: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for item in messages(body)
        .iter()
        .filter(|m| m["type"] == "function_call")
    {
        let args = item["arguments"].as_str().unwrap_or("null");
        out.push((
            item["call_id"].as_str().unwrap_or_default().to_string(),
            item["name"].as_str().unwrap_or_default().to_string(),
            serde_json::from_str(args).unwrap_or(Value::Null),
        ));
    }
    for m in messages(body).iter().filter(|m| m["role"] == "assistant") {
        for tc in m["tool_calls"].as_array().into_iter().flatten() {
            let args = tc["function"]["arguments"].as_str().unwrap_or("null");
            out.push((
                tc["id"].as_str().unwrap_or_default().to_string(),
                tc["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                serde_json::from_str(args).unwrap_or(Value::Null),
            ));
        }
        for b in m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_use")
        {
            out.push((
                b["id"].as_str().unwrap_or_default().to_string(),
                b["name"].as_str().unwrap_or_default().to_string(),
                b["input"].clone(),
            ));
        }
    }
    for m in messages(body).iter().filter(|m| m["role"] == "model") {
        for b in m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("functionCall"))
        {
            out.push((
                b["id"].as_str().unwrap_or_default().to_string(),
                b["name"].as_str().unwrap_or_default().to_string(),
                b["args"].clone(),
            ));
        }
    }
    out
}

/// Tool results in the context, in order: (tool call id, text). OpenAI `role: "tool"`
/// messages, Anthropic `tool_result` blocks in user messages, or Gemini `functionResponse`
/// parts (their `output` or `error`).
pub fn tool_results(body: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for m in messages(body) {
        if m["type"] == "function_call_output" {
            out.push((
                m["call_id"].as_str().unwrap_or_default().to_string(),
                content_text(&m["output"]),
            ));
        }
        if m["role"] == "tool" {
            out.push((
                m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                content_text(&m["content"]),
            ));
        }
        for r in m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("functionResponse"))
        {
            let response = &r["response"];
            out.push((
                r["id"].as_str().unwrap_or_default().to_string(),
                content_text(response.get("output").unwrap_or(&response["error"])),
            ));
        }
        if m["role"] == "user" {
            for b in m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_result")
            {
                out.push((
                    b["tool_use_id"].as_str().unwrap_or_default().to_string(),
                    content_text(&b["content"]),
                ));
            }
        }
    }
    out
}

/// Every message's text in order, joined by `|`: what a request carried, for order checks.
pub fn conversation(body: &Value) -> String {
    messages(body)
        .iter()
        .map(|m| content_text(m.get("content").unwrap_or(&m["output"])))
        .collect::<Vec<_>>()
        .join("|")
}
