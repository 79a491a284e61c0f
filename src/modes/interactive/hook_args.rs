//! Hooks' argument completion for the editor: the editor asks synchronously on every key, so
//! answers come from a cache; a miss asks the hook in the background (the controller's
//! `complete_command`, bounded by a short deadline) and the list refreshes when it answers.
//! Meanwhile the answer for a shorter prefix, filtered, stands in.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::app::AppMsg;
use super::editor::{ArgumentCompleter, CompletionItem};
use crate::controller::SessionController;

type Key = (String, String);

pub struct HookArgs {
    commands: HashSet<String>,
    cache: Arc<Mutex<HashMap<Key, Vec<CompletionItem>>>>,
    asked: Mutex<HashSet<Key>>,
    controller: SessionController,
    tx: mpsc::UnboundedSender<AppMsg>,
}

impl HookArgs {
    pub fn new(controller: SessionController, tx: mpsc::UnboundedSender<AppMsg>) -> HookArgs {
        HookArgs {
            commands: controller.completing_commands().into_iter().collect(),
            cache: Arc::new(Mutex::new(HashMap::new())),
            asked: Mutex::new(HashSet::new()),
            controller,
            tx,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ArgumentCompleter for HookArgs {
    fn complete_args(&self, command: &str, prefix: &str) -> Vec<CompletionItem> {
        if !self.commands.contains(command) {
            return Vec::new();
        }
        let key = (command.to_string(), prefix.to_string());
        if let Some(items) = lock(&self.cache).get(&key) {
            return items.clone();
        }
        if lock(&self.asked).insert(key.clone()) {
            let (c, cache, tx) = (self.controller.clone(), self.cache.clone(), self.tx.clone());
            tokio::spawn(async move {
                let items: Vec<CompletionItem> = c
                    .complete_command(&key.0, &key.1)
                    .await
                    .into_iter()
                    .map(|a| match a.description {
                        Some(d) => CompletionItem::new(a.value).with_description(d),
                        None => CompletionItem::new(a.value),
                    })
                    .collect();
                lock(&cache).insert(key, items);
                let _ = tx.send(AppMsg::CompletionsReady);
            });
        }
        // Until the hook answers: a shorter prefix's answer, narrowed.
        let cache = lock(&self.cache);
        (0..prefix.len())
            .rev()
            .filter(|&n| prefix.is_char_boundary(n))
            .find_map(|n| cache.get(&(command.to_string(), prefix[..n].to_string())))
            .map(|items| {
                items
                    .iter()
                    .filter(|i| i.value.starts_with(prefix))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }
}
