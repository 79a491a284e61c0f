//! A model's `thinkingLevelMap` (pi 1.6's catalog and models.json field): which thinking levels
//! the model offers and what each is called on its API, with 1.6's `getSupportedThinkingLevels`
//! and `clampThinkingLevel` over it.
//!
//! A level mapped to `null` is not offered; `xhigh` and `max` are offered only when the map
//! names them; any other level of a reasoning model is offered under its own name. Providers
//! whose wire format depends on the map (Gemini's `thinkingLevel`, which some models lack at
//! `off` or `minimal`) clamp with it as 1.6 does inside its provider.

use std::collections::BTreeMap;

use serde_json::Value;

use super::ThinkingLevel;

/// Level name (`off` … `max`) → the API's name for it, or `None` when the model lacks it.
/// Empty when the model has no map.
pub type ThinkingLevelMap = BTreeMap<String, Option<String>>;

/// 1.6's level order, the one clamping walks.
const LEVELS: [ThinkingLevel; 7] = [
    ThinkingLevel::Off,
    ThinkingLevel::Minimal,
    ThinkingLevel::Low,
    ThinkingLevel::Medium,
    ThinkingLevel::High,
    ThinkingLevel::Xhigh,
    ThinkingLevel::Max,
];

/// The map in a raw `thinkingLevelMap` value: string and `null` entries; anything else is
/// treated as absent (1.6 reads such an entry as no mapping).
pub fn parse(v: Option<&Value>) -> ThinkingLevelMap {
    let Some(Value::Object(o)) = v else {
        return ThinkingLevelMap::new();
    };
    o.iter()
        .filter_map(|(k, v)| match v {
            Value::Null => Some((k.clone(), None)),
            Value::String(s) => Some((k.clone(), Some(s.clone()))),
            _ => None,
        })
        .collect()
}

/// What the map says of `level`: `None` when it does not mention it, `Some(None)` when the
/// model lacks it, `Some(Some(name))` for its API name.
pub fn mapped(map: &ThinkingLevelMap, level: ThinkingLevel) -> Option<Option<&str>> {
    map.get(level.as_str()).map(|v| v.as_deref())
}

/// 1.6's `getSupportedThinkingLevels`.
pub fn supported(reasoning: bool, map: &ThinkingLevelMap) -> Vec<ThinkingLevel> {
    if !reasoning {
        return vec![ThinkingLevel::Off];
    }
    LEVELS
        .into_iter()
        .filter(|l| match mapped(map, *l) {
            Some(None) => false,
            Some(Some(_)) => true,
            None => !matches!(l, ThinkingLevel::Xhigh | ThinkingLevel::Max),
        })
        .collect()
}

/// 1.6's `clampThinkingLevel`: `level` if offered, else the nearest offered level above it,
/// else the nearest below, else `off`.
pub fn clamp(reasoning: bool, map: &ThinkingLevelMap, level: ThinkingLevel) -> ThinkingLevel {
    let offered = supported(reasoning, map);
    if offered.contains(&level) {
        return level;
    }
    let at = level as usize;
    LEVELS[at..]
        .iter()
        .chain(LEVELS[..at].iter().rev())
        .copied()
        .find(|l| offered.contains(l))
        .unwrap_or(ThinkingLevel::Off)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use ThinkingLevel::*;

    #[test]
    fn null_levels_are_not_offered_and_clamp_up_first() {
        // gemini-3.1-pro-preview's map in pi 1.6's catalog.
        let pro = parse(Some(&json!({"off": null, "minimal": null, "low": "low",
            "medium": "medium", "high": "high", "xhigh": null, "max": null, "bad": 3})));
        assert_eq!(supported(true, &pro), [Low, Medium, High]);
        assert_eq!(clamp(true, &pro, Off), Low);
        assert_eq!(clamp(true, &pro, Minimal), Low);
        assert_eq!(clamp(true, &pro, Xhigh), High);
        assert_eq!(mapped(&pro, Off), Some(None));
        assert_eq!(mapped(&pro, Low), Some(Some("low")));
        assert!(!pro.contains_key("bad"));
    }

    #[test]
    fn without_a_map_xhigh_and_max_are_not_offered() {
        let none = parse(None);
        assert_eq!(supported(true, &none), [Off, Minimal, Low, Medium, High]);
        assert_eq!(clamp(true, &none, Max), High);
        assert_eq!(supported(false, &none), [Off]);
        assert_eq!(clamp(false, &none, High), Off);
        let gemma = parse(Some(
            &json!({"off": null, "minimal": "MINIMAL", "low": null,
            "medium": null, "high": "HIGH"}),
        ));
        assert_eq!(clamp(true, &gemma, Medium), High);
        assert_eq!(clamp(true, &gemma, Off), Minimal);
    }
}
