//! What unit tests across modules share: the faux model they run against, the Python
//! interpreter test hooks are started with, and a reader that splits its input like a pipe.

use std::path::PathBuf;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The faux model every in-process run uses (`faux-1`, a 100k-token window).
pub(crate) fn faux_model() -> crate::provider::Model {
    crate::provider::Model {
        id: "faux-1".into(),
        name: "faux".into(),
        provider: "faux".into(),
        api: "faux".into(),
        base_url: String::new(),
        headers: Default::default(),
        reasoning: false,
        input: vec!["text".into()],
        context_window: 100_000,
        max_tokens: 1000,
        compat: serde_json::Value::Null,
        prompt_cache: Default::default(),
        thinking_level_map: Default::default(),
        auth: Default::default(),
        cost: Default::default(),
    }
}

/// The real interpreter, not a version-manager shim (a pyenv shim is a shell script that adds
/// its own variables to the environment and costs a fork per start).
pub(crate) fn python() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            std::process::Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .ok()
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .map(|s| PathBuf::from(s.trim()))
                .filter(|p| p.is_absolute())
                .unwrap_or_else(|| PathBuf::from("python3"))
        })
        .clone()
}

/// Serves `data` in pieces of the sizes in `chunks` (cycled; 0 is read as 1), the way a pipe
/// delivers a peer's writes: a frame or a line may arrive split anywhere, even inside a UTF-8
/// sequence.
pub(crate) struct Chunked {
    data: Vec<u8>,
    pos: usize,
    chunks: Vec<usize>,
    turn: usize,
}

impl Chunked {
    pub(crate) fn new(data: Vec<u8>, chunks: Vec<usize>) -> Chunked {
        Chunked {
            data,
            pos: 0,
            chunks,
            turn: 0,
        }
    }
}

impl AsyncRead for Chunked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let want = this
            .chunks
            .get(this.turn % this.chunks.len().max(1))
            .copied();
        this.turn += 1;
        let n = want
            .unwrap_or(usize::MAX)
            .max(1)
            .min(buf.remaining())
            .min(this.data.len() - this.pos);
        buf.put_slice(&this.data[this.pos..this.pos + n]);
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

/// A throwaway RSA key for service-account tests, made once per test run (never a real
/// account's: nothing is committed, and the account it signs for exists nowhere).
pub(crate) fn rsa_key() -> &'static rsa::PrivateKey {
    static KEY: std::sync::OnceLock<rsa::PrivateKey> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        use rsa::Generate;
        rsa::PrivateKey::generate()
    })
}

/// A service account key file for [`rsa_key`], its token endpoint `token_uri`.
pub(crate) fn service_account_json(token_uri: &str) -> String {
    use rsa::pkcs8::EncodePrivateKey;
    let pem = rsa_key()
        .to_pkcs8_pem(rsa::pkcs8::LineEnding::LF)
        .expect("PEM of the test key");
    serde_json::json!({
        "type": "service_account", "project_id": "sa-project", "private_key_id": "kid-1",
        "private_key": pem.as_str(), "client_email": "pi-test@sa-project.iam.gserviceaccount.com",
        "client_id": "123", "token_uri": token_uri,
    })
    .to_string()
}
