//! The `ls` tool (placeholder until implemented).

use async_trait::async_trait;
use serde_json::{json, Value};

use super::{Tool, ToolContext, ToolError, ToolOutput};

#[derive(Default)]
pub struct LsTool;

#[async_trait]
impl Tool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }
    fn description(&self) -> &str {
        "ls"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(
        &self,
        _id: &str,
        _args: Value,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Failed("not implemented".into()))
    }
}
