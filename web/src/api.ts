/** The few plain REST calls the page makes beside useChat, all with the stored key. */

const KEY_STORAGE = 'loopwright.apiKey';
const CHATS_STORAGE = 'loopwright.chats';

export function storedKey(): string {
  return localStorage.getItem(KEY_STORAGE) ?? '';
}

export function storeKey(key: string): void {
  if (key === '') localStorage.removeItem(KEY_STORAGE);
  else localStorage.setItem(KEY_STORAGE, key);
}

export function authHeaders(key: string): Record<string, string> {
  return key === '' ? {} : { Authorization: `Bearer ${key}` };
}

/** Which chat id (the useChat id) this browser used for a session, so choosing it continues that chat. */
export function chatIdOf(sessionId: string): string | undefined {
  return readChats()[sessionId];
}

export function rememberChat(sessionId: string, chatId: string): void {
  const chats = readChats();
  if (chats[sessionId] === chatId) return;
  chats[sessionId] = chatId;
  localStorage.setItem(CHATS_STORAGE, JSON.stringify(chats));
}

function readChats(): Record<string, string> {
  try {
    const value: unknown = JSON.parse(localStorage.getItem(CHATS_STORAGE) ?? '{}');
    return typeof value === 'object' && value !== null ? (value as Record<string, string>) : {};
  } catch {
    return {};
  }
}

export interface SessionSummary {
  id: string;
  title: string | null;
  mode?: string;
  createdAt: string;
}

export interface StoredMessage {
  id: string;
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  toolCalls?: { id: string; name: string; arguments: unknown }[];
  toolCallId?: string;
}

export class ApiError extends Error {}

async function request<T>(key: string, method: string, path: string): Promise<T> {
  const response = await fetch(path, { method, headers: authHeaders(key) });
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as { message?: unknown } | null;
    const raw = body?.message;
    const message = Array.isArray(raw) ? raw.join('; ') : typeof raw === 'string' ? raw : '';
    throw new ApiError(`${response.status} ${message || response.statusText}`);
  }
  // 202 and 204 carry no body.
  const text = await response.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export async function listSessions(key: string): Promise<SessionSummary[]> {
  const page = await request<{ data: SessionSummary[] }>(key, 'GET', '/v1/sessions?limit=50');
  return page.data;
}

export async function getSession(key: string, id: string): Promise<StoredMessage[]> {
  const session = await request<{ messages: StoredMessage[] }>(
    key,
    'GET',
    `/v1/sessions/${encodeURIComponent(id)}`,
  );
  return session.messages;
}

export async function cancelRun(key: string, runId: string): Promise<void> {
  await request<undefined>(key, 'POST', `/v1/runs/${encodeURIComponent(runId)}/cancel`);
}
