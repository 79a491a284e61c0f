//! Issue 8, item 8: keys stay with pi — the model's shell gets a filtered environment, pi is
//! not dumpable, and credential header values reach hooks redacted.
//!
//! Every secret a test plants has a value ending in `-LEAK`, so "nothing leaked" is one search
//! over whatever the shell, a hook or another process could see.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::hooks::{fixture, record_file, recorded_events, run_pi, scripted, use_hooks};
use crate::common::{only_tool_end, path_str, read_pid, MockModel, TestAgent, Turn};

/// Variables the shell must not see by default: a provider key pi knows by name, variables
/// whose names say they are secrets, and the variables models.json and auth.json read
/// credentials from (names that match no pattern, so only pi's knowledge can drop them).
const HIDDEN: [(&str, &str); 7] = [
    ("OPENAI_API_KEY", "sk-openai-LEAK"),
    ("MY_SECRET", "my-secret-LEAK"),
    ("GITHUB_TOKEN", "ghp-github-LEAK"),
    ("DB_PASSWORD", "db-password-LEAK"),
    ("CORP_LLM_CRED", "corp-llm-LEAK"),
    ("CORP_HEADER_CRED", "corp-header-LEAK"),
    ("TEAM_GROQ_CRED", "team-groq-LEAK"),
];

/// An ordinary variable of the user's that the shell keeps seeing.
const PLAIN: (&str, &str) = ("PLAIN_SETTING", "plain-visible");

/// A test agent whose environment holds [`HIDDEN`] and [`PLAIN`], whose models.json reads a
/// key from `$CORP_LLM_CRED` and a header from `${CORP_HEADER_CRED}`, and whose auth.json
/// names `TEAM_GROQ_CRED`.
fn agent_with_secrets() -> TestAgent {
    let mut agent = TestAgent::new();
    for (k, v) in HIDDEN.iter().chain([&PLAIN]) {
        agent.env(k, v);
    }
    agent.write_models(&json!({"providers": {"corp": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
        "apiKey": "$CORP_LLM_CRED",
        "headers": {"x-corp-auth": "Bearer ${CORP_HEADER_CRED}"},
        "models": [{"id": "corp-model"}]}}}));
    std::fs::write(
        agent.agent_dir.join("auth.json"),
        json!({"groq": {"type": "api_key", "env": "TEAM_GROQ_CRED"}}).to_string(),
    )
    .expect("write auth.json");
    agent
}

/// `NAME=value` lines of `env` output.
fn env_map(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// What the model's `bash env` printed in a faux JSON-mode run.
async fn model_shell_env(agent: &TestAgent) -> BTreeMap<String, String> {
    let out = agent
        .run_tools(
            json!([{"name": "bash", "arguments": {"command": "env"}}]),
            &[],
        )
        .await;
    out.assert_ok();
    let end = only_tool_end(&out);
    assert!(!end.is_error, "bash env failed\n{out}");
    env_map(&end.text)
}

#[track_caller]
fn assert_hidden(env: &BTreeMap<String, String>, names: &[&str]) {
    for name in names {
        assert!(
            !env.contains_key(*name),
            "the shell sees {name}\nits environment: {env:#?}"
        );
    }
}

#[track_caller]
fn assert_nothing_leaked(env: &BTreeMap<String, String>) {
    let leaked: Vec<(&String, &String)> = env.iter().filter(|(_, v)| v.contains("LEAK")).collect();
    assert!(
        leaked.is_empty(),
        "secret values reached the shell: {leaked:?}"
    );
}

#[track_caller]
fn assert_has(env: &BTreeMap<String, String>, name: &str, value: Option<&str>) {
    match (env.get(name), value) {
        (None, _) => panic!("the shell lost {name}\nits environment: {env:#?}"),
        (Some(v), Some(want)) => assert_eq!(v, want, "{name}"),
        (Some(_), None) => {}
    }
}

#[tokio::test]
async fn the_model_shell_does_not_see_provider_keys_or_secrets_but_keeps_the_rest() {
    let agent = agent_with_secrets();
    let env = model_shell_env(&agent).await;
    assert_hidden(&env, &HIDDEN.map(|h| h.0));
    assert_nothing_leaked(&env);
    assert_has(&env, "PATH", None);
    assert_has(&env, "HOME", Some(&path_str(&agent.home)));
    assert_has(&env, PLAIN.0, Some(PLAIN.1));
    // pi's own variables for the shell still reach it.
    assert_has(&env, "PI_CODING_AGENT", Some("true"));
    assert_has(&env, "PI_PROVIDER", Some("faux"));
}

#[tokio::test]
async fn shell_environment_settings_change_what_the_shell_sees() {
    let agent = agent_with_secrets();
    let run = async |policy: Value| {
        agent.write_settings(&json!({ "shellEnvironment": policy }));
        model_shell_env(&agent).await
    };

    // core: only the basic variables, still without secrets; pi's own variables stay.
    let env = run(json!({"inherit": "core", "set": {"FROM_SET": "x"}})).await;
    assert_has(&env, "PATH", None);
    assert_has(&env, "HOME", None);
    assert_has(&env, "FROM_SET", Some("x"));
    assert_has(&env, "PI_CODING_AGENT", Some("true"));
    assert_hidden(&env, &[PLAIN.0, "LANG", "NO_COLOR"]);
    assert_nothing_leaked(&env);

    // none: nothing inherited at all, only what `set` adds.
    let env = run(json!({"inherit": "none", "set": {"ONLY": "1"}})).await;
    assert_has(&env, "ONLY", Some("1"));
    assert_hidden(&env, &["HOME", "TMPDIR", "LANG", PLAIN.0]);
    assert_nothing_leaked(&env);

    // The user takes the default excludes off and excludes by (case-insensitive) glob instead.
    let env =
        run(json!({"ignoreDefaultExcludes": true, "exclude": ["github_*", "*_api_key"]})).await;
    assert_has(&env, "MY_SECRET", Some("my-secret-LEAK"));
    assert_has(&env, "DB_PASSWORD", Some("db-password-LEAK"));
    assert_has(&env, "CORP_LLM_CRED", Some("corp-llm-LEAK"));
    assert_hidden(&env, &["GITHUB_TOKEN", "OPENAI_API_KEY"]);

    // include_only keeps only matching names (after the default excludes); `set` comes last.
    for key in ["includeOnly", "include_only"] {
        let env =
            run(json!({key: ["PATH", "home", "*_SECRET", "PLAIN_*"], "set": {"LATE": "y"}})).await;
        assert_has(&env, "PATH", None);
        assert_has(&env, "HOME", None);
        assert_has(&env, PLAIN.0, Some(PLAIN.1));
        assert_has(&env, "LATE", Some("y"));
        assert_has(&env, "PI_CODING_AGENT", Some("true"));
        assert_hidden(&env, &["MY_SECRET", "TMPDIR", "LANG"]);
        assert_nothing_leaked(&env);
    }
}

#[tokio::test]
async fn a_bad_shell_environment_setting_is_an_error_naming_the_key() {
    let agent = agent_with_secrets();
    let cases = [
        (json!({"inherit": "most"}), "shellEnvironment.inherit"),
        (json!({"exclude": "GITHUB_*"}), "shellEnvironment.exclude"),
        (json!({"set": {"A": 1}}), "shellEnvironment.set.A"),
        (
            json!({"includeOnly": ["[unclosed"]}),
            "shellEnvironment.includeOnly",
        ),
        (json!({"excludes": ["X"]}), "shellEnvironment.excludes"),
        (
            json!({"ignoreDefaultExcludes": "yes"}),
            "shellEnvironment.ignoreDefaultExcludes",
        ),
        (json!(["inherit", "all"]), "shellEnvironment"),
    ];
    for (policy, key) in cases {
        agent.write_settings(&json!({ "shellEnvironment": policy }));
        let out = agent
            .run_tools(
                json!([{"name": "bash", "arguments": {"command": "env"}}]),
                &[],
            )
            .await;
        out.assert_code(1);
        assert!(
            out.stderr.contains(&format!("\"{key}\"")) && out.stderr.contains("settings.json"),
            "the error for {policy} does not name {key} and the file\n{out}"
        );
        assert!(!out.stdout.contains("LEAK"), "{out}");
    }
}

#[tokio::test]
async fn a_trusted_project_cannot_loosen_the_shell_environment() {
    let agent = agent_with_secrets();
    agent.write_file(
        ".pi/settings.json",
        json!({"shellEnvironment": {"inherit": "all", "ignoreDefaultExcludes": true}}).to_string(),
    );
    let out = agent
        .run_tools(
            json!([{"name": "bash", "arguments": {"command": "env"}}]),
            &["-a"],
        )
        .await;
    out.assert_ok();
    assert!(
        out.stderr.contains(".pi/settings.json") && out.stderr.contains("\"shellEnvironment\""),
        "no warning that the project's shellEnvironment is ignored\n{out}"
    );
    let env = env_map(&only_tool_end(&out).text);
    assert_hidden(&env, &HIDDEN.map(|h| h.0));
    assert_nothing_leaked(&env);
}

#[tokio::test]
async fn bash_run_by_a_hook_through_tools_execute_sees_the_same_filtered_environment() {
    let agent = agent_with_secrets();
    agent.write_settings(&json!({"hooks": [{
        "command": format!("python3 {}", fixture("session_ops.py")),
        "name": "session-ops",
        "timeout_ms": 20000,
    }]}));
    let call = json!({"tool": "bash", "arguments": {"command": "env"}});
    let mut args = agent.faux_args(json!([]));
    args.extend(["-p".to_string(), format!("/op tools.execute {call}")]);
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    let answer: Value = out
        .stdout
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no answer from the hook\n{out}"));
    assert_eq!(answer["is_error"], false, "{answer}");
    let env = env_map(answer["content"][0]["text"].as_str().unwrap_or_default());
    assert_hidden(&env, &HIDDEN.map(|h| h.0));
    assert_nothing_leaked(&env);
    assert_has(&env, PLAIN.0, Some(PLAIN.1));
    assert_has(&env, "PI_CODING_AGENT", Some("true"));
}

/// The uid that runs `pi` and the prying process: the current user, or when the tests run as
/// root (which may read any process's memory) an unprivileged uid. A directory the test just
/// created tells whose the test process is.
fn unprivileged_uid(created: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(created).expect("stat temp dir").uid();
    (owner == 0).then_some(65534)
}

fn chown_tree(dir: &Path, uid: u32) {
    std::os::unix::fs::chown(dir, Some(uid), Some(uid)).expect("chown");
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() && !path.is_symlink() {
            chown_tree(&path, uid);
        } else {
            std::os::unix::fs::lchown(&path, Some(uid), Some(uid)).expect("lchown");
        }
    }
}

/// `cat FILE` as `uid` (or as ourselves): whether it succeeded, and what it read.
fn read_as(uid: Option<u32>, file: &str) -> (bool, String) {
    let mut cmd = std::process::Command::new("cat");
    cmd.arg(file);
    if let Some(u) = uid {
        cmd.uid(u).gid(u);
    }
    let out = cmd.output().expect("run cat");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).replace('\0', "\n"),
    )
}

/// Whether `path` can be opened for reading as `uid` (or as ourselves).
fn opens_as(uid: Option<u32>, path: &str) -> bool {
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", "exec 3< \"$1\"", "sh", path])
        .stderr(std::process::Stdio::null());
    if let Some(u) = uid {
        cmd.uid(u).gid(u);
    }
    cmd.status().expect("run sh").success()
}

#[tokio::test]
async fn another_process_of_the_same_user_cannot_read_pis_environment() {
    if !Path::new("/proc/self/environ").exists() {
        eprintln!("SKIPPED another_process_of_the_same_user_cannot_read_pis_environment: no /proc");
        return;
    }
    let mut agent = TestAgent::new();
    agent.env("OPENAI_API_KEY", "sk-dump-LEAK");
    let fifo = agent.tmp.join("release.fifo");
    let pidfile = agent.tmp.join("shell.pid");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
    let command = format!("echo $$ > {}; cat {}", path_str(&pidfile), path_str(&fifo));
    let mut args = agent.faux_args(json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": command}, "id": "c1"}]},
        "done"
    ]));
    args.extend(["--mode".into(), "json".into(), "go".into()]);
    let uid = unprivileged_uid(&agent.tmp);
    if let Some(u) = uid {
        // The test's temp tree becomes the unprivileged user's, as a real user's home is.
        let root = agent.agent_dir.parent().expect("temp root").to_path_buf();
        chown_tree(&root, u);
    }
    let mut cmd = agent.command(&args);
    if let Some(u) = uid {
        cmd.uid(u).gid(u);
    }
    let mut pi = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if uid.is_some() => {
            eprintln!(
                "SKIPPED another_process_of_the_same_user_cannot_read_pis_environment: \
                 cannot run pi as uid {uid:?}: {e}"
            );
            return;
        }
        Err(e) => panic!("spawn pi: {e}"),
    };
    let pi_pid = pi.id().expect("pi pid");
    // pi is now blocked in the bash tool until the FIFO gets a writer.
    let shell_pid = read_pid(&pidfile);

    // The same user can read the environment of an ordinary process (pi's shell)...
    let (ok, shell_env) = read_as(uid, &format!("/proc/{shell_pid}/environ"));
    assert!(
        ok && shell_env.contains("PI_CODING_AGENT=true"),
        "the prying process cannot read an ordinary process's environment either, so this \
         test proves nothing: {shell_env:?}"
    );
    // ...but not pi's.
    let (ok, pi_env) = read_as(uid, &format!("/proc/{pi_pid}/environ"));
    assert!(
        !ok && !pi_env.contains("LEAK"),
        "another process of the user read pi's environment: {pi_env:?}"
    );
    // Memory: where the same user may open an ordinary process's memory (no stricter ptrace
    // policy in force), pi's must still be closed to it.
    if opens_as(uid, &format!("/proc/{shell_pid}/mem")) {
        assert!(
            !opens_as(uid, &format!("/proc/{pi_pid}/mem")),
            "another process of the user could open pi's memory"
        );
    } else {
        eprintln!(
            "another_process_of_the_same_user_cannot_read_pis_environment: the memory check is \
             SKIPPED, this system does not let the user open its own processes' memory"
        );
    }

    // Release the shell: opening and closing the FIFO ends `cat`.
    let release = tokio::task::spawn_blocking(move || std::fs::File::create(&fifo).map(drop));
    tokio::time::timeout(Duration::from_secs(30), release)
        .await
        .expect("the shell never opened the FIFO")
        .expect("join")
        .expect("open FIFO");
    let status = tokio::time::timeout(Duration::from_secs(60), pi.wait())
        .await
        .expect("pi did not finish after the tool was released")
        .expect("wait for pi");
    assert!(status.success(), "pi failed: {status}");
}

/// models.json for the mock server: `mock` (openai-completions) and `mock-anthropic`, whose
/// keys come from `$CORP_LLM_CRED` and whose headers carry a `$VAR` credential, a `!cmd`
/// credential and a literal.
fn header_models(mock: &MockModel) -> Value {
    let headers = json!({
        "x-corp-auth": "Bearer ${CORP_HEADER_CRED}",
        "x-cmd-auth": "!printf cmd-header-LEAK",
        "x-plain": "plain-header",
    });
    json!({"providers": {
        "mock": {"baseUrl": format!("{}/v1", mock.uri()), "api": "openai-completions",
            "apiKey": "$CORP_LLM_CRED", "headers": headers, "models": [{"id": "mock-model"}]},
        "mock-anthropic": {"baseUrl": mock.uri(), "api": "anthropic-messages",
            "apiKey": "$CORP_LLM_CRED", "headers": headers, "models": [{"id": "mock-claude"}]},
    }})
}

fn header_watcher(agent: &TestAgent, on_headers: Value) -> Value {
    scripted(
        agent,
        "watch",
        json!({"subscriptions": [{"event": "before_provider_headers"}],
               "on": {"before_provider_headers": on_headers}}),
    )
}

/// The headers the hook `watch` was shown, request by request.
fn shown_headers(agent: &TestAgent) -> Vec<Value> {
    recorded_events(agent, "watch", "before_provider_headers")
        .into_iter()
        .map(|e| e["payload"]["headers"].clone())
        .collect()
}

#[tokio::test]
async fn hooks_see_credential_headers_redacted_while_the_server_gets_the_real_values() {
    let mock = MockModel::start(vec![Turn::text("one"), Turn::text("two")]).await;
    let agent = agent_with_secrets();
    agent.write_models(&header_models(&mock));
    use_hooks(&agent, vec![header_watcher(&agent, json!({"reply": {}}))]);
    for model in ["mock/mock-model", "mock-anthropic/mock-claude"] {
        run_pi(&agent, &["--model", model, "-p", "hi"])
            .await
            .assert_ok();
    }

    let shown = shown_headers(&agent);
    assert_eq!(shown.len(), 2, "{shown:?}");
    let key_header = ["authorization", "x-api-key"];
    for (h, key) in shown.iter().zip(key_header) {
        for name in [key, "x-corp-auth", "x-cmd-auth"] {
            assert_eq!(h[name], "[redacted]", "{name} shown to the hook: {h}");
        }
        assert_eq!(h["x-plain"], "plain-header", "{h}");
    }
    let record = std::fs::read_to_string(record_file(&agent, "watch")).expect("record");
    assert!(
        !record.contains("LEAK"),
        "a credential reached the hook: {record}"
    );

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let (openai, anthropic) = (&requests[0].headers, &requests[1].headers);
    assert_eq!(openai["authorization"], "Bearer corp-llm-LEAK");
    assert_eq!(anthropic["x-api-key"], "corp-llm-LEAK");
    for h in [openai, anthropic] {
        assert_eq!(h["x-corp-auth"], "Bearer corp-header-LEAK");
        assert_eq!(h["x-cmd-auth"], "cmd-header-LEAK");
        assert_eq!(h["x-plain"], "plain-header");
    }
}

#[tokio::test]
async fn a_hook_keeps_a_redacted_header_by_returning_it_and_replaces_or_deletes_others() {
    let mock = MockModel::start(vec![Turn::text("one")]).await;
    let agent = agent_with_secrets();
    agent.write_models(&header_models(&mock));
    let edits = json!({"headers": {
        "x-corp-auth": "[redacted]",
        "Authorization": "Bearer hook-chosen",
        "x-cmd-auth": null,
        "x-added": "by-hook",
    }});
    use_hooks(
        &agent,
        vec![header_watcher(&agent, json!({"reply": edits}))],
    );
    run_pi(&agent, &["--model", "mock/mock-model", "-p", "hi"])
        .await
        .assert_ok();
    let requests = mock.requests();
    let h = &requests[0].headers;
    assert_eq!(h["x-corp-auth"], "Bearer corp-header-LEAK", "{h:?}");
    assert_eq!(h["authorization"], "Bearer hook-chosen", "{h:?}");
    assert!(!h.contains_key("x-cmd-auth"), "{h:?}");
    assert_eq!(h["x-added"], "by-hook", "{h:?}");
    assert_eq!(h["x-plain"], "plain-header", "{h:?}");
}
