//! The `write` tool (placeholder until implemented).

use async_trait::async_trait;
use serde_json::{json, Value};

use super::{Tool, ToolContext, ToolError, ToolOutput};

#[derive(Default)]
pub struct WriteTool;

#[async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }
    fn description(&self) -> &str {
        "write"
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
