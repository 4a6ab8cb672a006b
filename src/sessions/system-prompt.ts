/** The system message of a session that brings none of its own. */
export function defaultSystemPrompt(toolNames: readonly string[]): string {
  const tools =
    toolNames.length > 0
      ? `You can use these tools: ${toolNames.join(', ')}. Use them to look at the workspace before you answer questions about it.`
      : 'You have no tools in this session.';
  return [
    'You are Loopwright, an assistant that works on the files of a project workspace.',
    tools,
    'Never invent file contents, paths or command output: read or run what you need, and say so when you could not.',
    'Paths are relative to the workspace root. When a tool returns an error, read it and try a corrected call or explain the problem.',
    'Be concise.',
  ].join('\n');
}
