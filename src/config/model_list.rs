//! A provider's models, read on first use.
//!
//! The built-in catalog carries about 1,700 models over 40-odd providers; parsing all of them
//! costs milliseconds a start-up that uses one provider should not pay. A [`ModelList`] from
//! the catalog holds its provider's models as JSON until something reads or changes the
//! list, and derefs to a plain `Vec` so the code that merges `models.json`, lists models and
//! resolves `--model` reads it as any list.

use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

use super::ModelEntry;

/// Reads a list from its data.
type Reader = fn(&'static str) -> Vec<ModelEntry>;

pub struct ModelList {
    loaded: OnceLock<Vec<ModelEntry>>,
    /// Reads the list from its data when first used (the catalog's JSON for one provider).
    source: Option<(Reader, &'static str)>,
}

impl ModelList {
    /// A list `read` from `data` when first used.
    pub fn lazy(read: Reader, data: &'static str) -> Self {
        ModelList {
            loaded: OnceLock::new(),
            source: Some((read, data)),
        }
    }

    /// Whether the list has been read yet (for tests of what start-up parses).
    pub fn is_loaded(&self) -> bool {
        self.loaded.get().is_some()
    }

    fn get(&self) -> &Vec<ModelEntry> {
        self.loaded.get_or_init(|| {
            self.source
                .map(|(read, data)| read(data))
                .unwrap_or_default()
        })
    }
}

impl From<Vec<ModelEntry>> for ModelList {
    fn from(models: Vec<ModelEntry>) -> Self {
        ModelList {
            loaded: OnceLock::from(models),
            source: None,
        }
    }
}

impl Default for ModelList {
    fn default() -> Self {
        Vec::new().into()
    }
}

impl Deref for ModelList {
    type Target = Vec<ModelEntry>;
    fn deref(&self) -> &Vec<ModelEntry> {
        self.get()
    }
}

impl DerefMut for ModelList {
    fn deref_mut(&mut self) -> &mut Vec<ModelEntry> {
        self.get();
        // Changed from here on: the source no longer describes the list.
        self.source = None;
        match self.loaded.get_mut() {
            Some(models) => models,
            None => unreachable!("ModelList::get fills the list"),
        }
    }
}

impl Clone for ModelList {
    fn clone(&self) -> Self {
        match self.loaded.get() {
            Some(models) => models.clone().into(),
            None => ModelList {
                loaded: OnceLock::new(),
                source: self.source,
            },
        }
    }
}

impl PartialEq for ModelList {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl std::fmt::Debug for ModelList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.loaded.get() {
            Some(models) => models.fmt(f),
            None => f.write_str("[not yet read]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(data: &'static str) -> Vec<ModelEntry> {
        data.split(',')
            .map(crate::config::models::test_entry)
            .collect()
    }

    #[test]
    fn a_lazy_list_reads_its_source_once_on_first_use_and_can_be_changed() {
        let mut list = ModelList::lazy(read, "Model One");
        assert!(!list.is_loaded());
        let copy = list.clone();
        assert_eq!(list[0].id, "Model One");
        assert!(list.is_loaded() && !copy.is_loaded());
        list.push(crate::config::models::test_entry("m2"));
        assert_eq!(list.len(), 2);
        assert_eq!(
            copy.len(),
            1,
            "a copy taken before reading reads the source itself"
        );
    }
}
