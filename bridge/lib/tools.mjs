// An extension's tool (pi 1.6's `ToolDefinition`) as a hook tool: its declaration (TypeBox
// schemas are JSON Schema already, so they serialise as they are), and its `execute` served on
// `tool_execute` with pi 1.6's arguments — `onUpdate` becomes `progress`, the request's cancel
// the `signal` — and its result, or its exception, in the shape pi 1.6 gives the model.

import { settled, unavailable } from './report.mjs';
import { toolContext } from './context.mjs';

/** A JSON copy of a schema: TypeBox's own markers are symbols or non-enumerable and drop out. */
const jsonSchema = (schema) => JSON.parse(JSON.stringify(schema));

/** The tool as the helper declares it (`pi_hook.js` turns it into the protocol's form). */
export function toolDecl(tool) {
  if (tool.renderCall || tool.renderResult) unavailable('tool renderers (renderCall, renderResult)', 'pi draws tool calls its own way');
  if (tool.prepareLoadout) unavailable(`prepareLoadout of tool "${tool.name}"`);
  const decl = {
    name: tool.name,
    description: tool.description ?? '',
    parameters: jsonSchema(tool.parameters),
    sequential: tool.executionMode === 'sequential',
  };
  if (tool.promptSnippet) decl.promptSnippet = tool.promptSnippet;
  if (tool.promptGuidelines?.length) decl.promptGuidelines = tool.promptGuidelines;
  if (tool.exposure) decl.exposure = tool.exposure;
  if (tool.outputSchema) decl.outputSchema = jsonSchema(tool.outputSchema);
  return decl;
}

/** What `tool_execute` replies: pi 1.6's tool result in the protocol's names. */
function resultReply(result) {
  const reply = { content: Array.isArray(result?.content) ? result.content : [] };
  if (result?.details !== undefined) reply.details = result.details;
  if (result?.isError) reply.is_error = true;
  if (result?.structuredContent !== undefined) reply.structured_content = result.structuredContent;
  if (result?.usage !== undefined) reply.usage = result.usage;
  if (result?.terminate === true) reply.terminate = true;
  return reply;
}

/** The helper's handler for `tool`: runs `execute` and never throws (an exception is the model's error). */
export function toolHandler(bridge, tool) {
  return async (args, hctx) => {
    await bridge.beforeDispatch();
    const onUpdate = (partial) => hctx.progress(partial?.content ?? [], partial?.details);
    try {
      const result = await tool.execute(hctx.callId, args, hctx.signal, onUpdate, toolContext(bridge, hctx.signal, hctx.callId));
      await settled();
      return resultReply(result);
    } catch (e) {
      // pi 1.6 turns a throwing tool into an error result carrying the message.
      return { content: [{ type: 'text', text: e instanceof Error ? e.message : String(e) }], is_error: true };
    }
  };
}

/** `prepare_arguments` for the tools that define `prepareArguments` (pi 1.6 runs it before validation). */
export function prepareHandler(bridge) {
  return async (payload) => {
    const tool = bridge.toolNamed(payload.tool_name);
    if (!tool?.prepareArguments) return {};
    return { arguments: tool.prepareArguments(payload.arguments) };
  };
}
