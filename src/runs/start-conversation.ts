import type { MessageRow } from '../store/conversation-store.service';
import type { NewMessage, RunStart } from '../store/run-start-store.service';

/** Where the start statement puts a new session's prompt: after its system message. */
export const NEW_SESSION_PROMPT_SEQ = 2;

/** The conversation of a session a start opens: as the start statement writes it. */
export function newSessionConversation(
  answers: Extract<RunStart['answers'], { kind: 'new-session' }>,
  runId: string,
  createdAt: Date,
): MessageRow[] {
  const { system, prompt } = answers;
  return [
    storedMessage(system, 'system', 1, null, createdAt),
    storedMessage(prompt, 'user', NEW_SESSION_PROMPT_SEQ, runId, createdAt),
  ];
}

/** A message a start writes, as the store then holds it. */
export function storedMessage(
  message: NewMessage,
  role: 'system' | 'user',
  seq: number,
  runId: string | null,
  createdAt: Date,
): MessageRow {
  const { id, content, parts } = message;
  return {
    id,
    seq,
    role,
    content,
    toolCalls: null,
    toolCallId: null,
    runId,
    createdAt,
    reasoning: null,
    providerData: null,
    context: null,
    kind: null,
    summarizes: null,
    parts: parts ?? null,
  };
}
