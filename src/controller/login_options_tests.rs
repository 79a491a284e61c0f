use super::*;

fn option(id: &str, name: &str, auth: AuthType, status: Option<(AuthType, &str)>) -> LoginOption {
    LoginOption {
        id: id.into(),
        name: name.into(),
        auth,
        subscription: true,
        login_label: None,
        status: status.map(|(auth, s)| Status {
            auth,
            source: Some(s.to_string()),
        }),
    }
}

#[test]
fn status_marks_are_1_6s() {
    use AuthType::*;
    let o = option("anthropic", "Anthropic", Login, None);
    assert_eq!(row(&o, false), "Anthropic • not configured");
    let o = option("anthropic", "Anthropic", Login, Some((Login, "stored")));
    assert_eq!(row(&o, false), "Anthropic ✓ stored");
    let o = option("anthropic", "Anthropic", ApiKey, Some((Login, "stored")));
    assert_eq!(
        row(&o, true),
        "Anthropic [API key] • subscription configured"
    );
    let o = option("openai", "OpenAI", Login, Some((ApiKey, "stored")));
    assert_eq!(row(&o, false), "OpenAI • API key configured");
    let o = option("google", "Google", ApiKey, Some((ApiKey, "GEMINI_API_KEY")));
    assert_eq!(row(&o, false), "Google ✓ env: GEMINI_API_KEY");
    let o = option("x", "X", ApiKey, Some((ApiKey, "A_KEY, B")));
    assert_eq!(status_mark(&o), " ✓ env: A_KEY, B");
    let o = option("x", "X", ApiKey, Some((ApiKey, "stored credential")));
    assert_eq!(status_mark(&o), " ✓ configured");
    let o = option("openrouter", "OpenRouter", Login, None);
    assert_eq!(row(&o, false), "OpenRouter ✦ • not configured");
}

#[test]
fn a_reference_matches_ids_and_names_whole_and_without_case() {
    use AuthType::*;
    let rows = vec![
        option("openai", "OpenAI", Login, None),
        option("openai", "OpenAI", ApiKey, None),
        option("openai-codex", "OpenAI Codex", Login, None),
    ];
    assert_eq!(matching(rows.clone(), " OPENAI ").len(), 2);
    assert_eq!(matching(rows.clone(), "openai codex").len(), 1);
    assert!(matching(rows.clone(), "open").is_empty());
    assert!(matching(rows, "  ").is_empty());
}
