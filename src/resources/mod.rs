//! Resources that shape what the model sees and what a project may load: the system prompt,
//! context files, skills, prompt templates, the themes the terminal UI draws with, and the
//! project-trust decision that gates the project-level ones.

pub mod context;
pub mod patterns;
pub mod prompt_docs;
pub mod skills;
pub mod system_prompt;
pub mod templates;
pub mod themes;
pub mod trust;
