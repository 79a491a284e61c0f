//! In-process tests of the controller with the `faux` provider.

pub(crate) fn faux_model() -> crate::provider::Model {
    crate::provider::Model {
        id: "faux-1".into(),
        name: "faux".into(),
        provider: "faux".into(),
        api: "faux".into(),
        base_url: String::new(),
        headers: Default::default(),
        reasoning: false,
        context_window: 100_000,
        max_tokens: 1000,
        compat: serde_json::Value::Null,
    }
}
