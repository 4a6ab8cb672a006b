/** OpenAI's limit on function names. */
export const MAX_TOOL_NAME_LENGTH = 64;

/**
 * The name an MCP tool is offered under: `<server>__<tool>`, each UTF-16 unit outside
 * `A-Za-z0-9_-` replaced by `_` (a model can only name what matches that set), cut to 64.
 */
export function offeredToolName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_TOOL_NAME_LENGTH);
}
