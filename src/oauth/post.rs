//! The requests logins send besides [`super::request_tokens`]'s grants: a form or JSON body
//! posted asking for JSON, and the answer kept whole (status, text, and its JSON when it
//! parses) for the flow to read in its provider's terms. Each provider words its failures
//! differently in 1.6, and those words are what the user sees, so no flow shares another's
//! reading of an answer — only this plumbing.

use serde_json::Value;

use super::REQUEST_TIMEOUT;

/// A provider's answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub text: String,
    /// The body as JSON; `None` when it is not JSON.
    pub json: Option<Value>,
}

impl Reply {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body's field `key` (`Null` when the body is not a JSON object or lacks it).
    pub fn field(&self, key: &str) -> &Value {
        self.json.as_ref().map_or(&Value::Null, |j| &j[key])
    }

    /// Whether the body has the field `key` at all.
    pub fn has(&self, key: &str) -> bool {
        self.json.as_ref().is_some_and(|j| j.get(key).is_some())
    }

    /// The body's string field `key`, when it is a string that is not empty.
    pub fn string(&self, key: &str) -> Option<&str> {
        self.field(key).as_str().filter(|s| !s.is_empty())
    }

    /// The body's number field `key`, when it is a finite number above zero.
    pub fn positive(&self, key: &str) -> Option<f64> {
        self.field(key)
            .as_f64()
            .filter(|n| n.is_finite() && *n > 0.0)
    }

    /// The body as JavaScript's `JSON.stringify` of what 1.6 parsed (`null` when it did not
    /// parse), for the messages 1.6 quotes the answer in.
    pub fn quoted(&self) -> String {
        self.json
            .as_ref()
            .map_or_else(|| "null".to_string(), Value::to_string)
    }
}

/// A POST of `fields` as `application/x-www-form-urlencoded`, in their order.
pub fn form(http: &reqwest::Client, url: &str, fields: &[(&str, &str)]) -> reqwest::RequestBuilder {
    let mut body = form_urlencoded::Serializer::new(String::new());
    for (k, v) in fields {
        body.append_pair(k, v);
    }
    http.post(url)
        .header("accept", "application/json")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.finish())
}

/// Sends `request` (with the logins' timeout) and reads the whole answer.
pub async fn send(request: reqwest::RequestBuilder) -> Result<Reply, reqwest::Error> {
    let response = request.timeout(REQUEST_TIMEOUT).send().await?;
    let status = response.status().as_u16();
    let text = response.text().await?;
    let json = serde_json::from_str(&text).ok();
    Ok(Reply { status, text, json })
}

/// Whether `value` is an `http:` or `https:` URL; the URL normalized as 1.6's
/// `trustedHttpUrl` normalizes it. A server's verification page is opened in the browser,
/// which would also open a `file:` URL or a custom protocol.
pub fn trusted_http_url(value: &Value) -> Option<String> {
    let url = reqwest::Url::parse(value.as_str()?).ok()?;
    matches!(url.scheme(), "http" | "https").then(|| url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_web_urls_are_trusted_and_they_come_back_normalized() {
        assert_eq!(
            trusted_http_url(&json!("https://Auth.Example/device?x=a b")).as_deref(),
            Some("https://auth.example/device?x=a%20b")
        );
        assert_eq!(
            trusted_http_url(&json!("http://localhost:8080")).as_deref(),
            Some("http://localhost:8080/")
        );
        assert_eq!(trusted_http_url(&json!("file:///etc/passwd")), None);
        assert_eq!(trusted_http_url(&json!("not a url")), None);
        assert_eq!(trusted_http_url(&json!(42)), None);
    }

    #[test]
    fn an_answer_is_read_field_by_field() {
        let reply = Reply {
            status: 200,
            text: String::new(),
            json: Some(json!({"a": "x", "e": "", "n": 5, "z": 0, "inf": -1})),
        };
        assert!(reply.ok());
        assert_eq!(reply.string("a"), Some("x"));
        assert_eq!(reply.string("e"), None);
        assert_eq!(reply.positive("n"), Some(5.0));
        assert_eq!(reply.positive("z"), None);
        assert_eq!(reply.positive("inf"), None);
        let bare = Reply {
            status: 502,
            text: "<html>".into(),
            json: None,
        };
        assert!(!bare.ok());
        assert!(bare.field("a").is_null());
        assert_eq!(bare.quoted(), "null");
    }
}
