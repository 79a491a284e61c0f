//! The `read` tool (placeholder until implemented).

use async_trait::async_trait;
use serde_json::{json, Value};

use super::{Tool, ToolContext, ToolError, ToolOutput};

#[derive(Default)]
pub struct ReadTool;

#[async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }
    fn description(&self) -> &str {
        "read"
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
