//! Resources that shape what the model sees: the system prompt now; context files, skills and
//! prompt templates plug into the same builder as they land.

pub mod context;
pub mod skills;
pub mod system_prompt;
pub mod templates;
