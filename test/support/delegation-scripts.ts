import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text, toolCalls, type FakeResponse, type RecordedRequest } from './fake-upstream';

/** An AGENTS_CONFIG file holding `agents`; its path. */
export function agentsFile(agents: Record<string, unknown>): string {
  const file = join(mkdtempSync(join(tmpdir(), 'loopwright-agents-')), 'agents.json');
  writeFileSync(file, JSON.stringify({ agents }));
  return file;
}

/** What a scripted conversation looks like to a route: its system prompt, its first prompt, its messages. */
export interface Conversation {
  system: string;
  prompt: string;
  messages: any[];
  /** The tool results it has so far, by call id. */
  results: Map<string, string>;
  request: RecordedRequest;
}

/**
 * A FakeUpstream fallback that answers each request by the conversation it belongs to (runs of
 * several agents call the model at once, in no fixed order): `route` picks the answer.
 */
export function byConversation(route: (c: Conversation) => FakeResponse): FakeResponse {
  return (request: RecordedRequest) => {
    const messages = (request.body as any).messages as any[];
    const results = new Map<string, string>();
    for (const m of messages) if (m.role === 'tool') results.set(m.tool_call_id, m.content);
    return route({
      system: String(messages[0]?.content ?? ''),
      prompt: String(messages.find((m) => m.role === 'user')?.content ?? ''),
      messages,
      results,
      request,
    });
  };
}

/**
 * The turn of an agent that delegates `task` to `agent` once (its call `callId`), then answers
 * `<who>: <the child's answer>`.
 */
export function delegateOnce(
  c: Conversation,
  who: string,
  delegation: { callId: string; agent: string; task: string },
): FakeResponse {
  const { callId, agent, task } = delegation;
  return c.results.size === 0
    ? toolCalls([{ id: callId, name: 'delegate', arguments: { agent, task } }])
    : text(`${who}: ${c.results.get(callId)}`);
}
