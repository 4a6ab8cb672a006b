/** The REST calls the page makes, all with the key kept in this browser. */

const KEY_STORAGE = 'loopwright.apiKey';

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

export interface SessionSummary {
  id: string;
  title: string | null;
  /** The start of its first prompt (the list's name for a session without a title). */
  preview?: string;
  model: string | null;
  mode: string;
  createdAt: string;
}

export interface StoredMessage {
  id: string;
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  toolCalls?: { id: string; name: string; arguments: unknown }[];
  toolCallId?: string;
  runId?: string;
}

export interface SessionDetail extends SessionSummary {
  activeRunId: string | null;
  messages: StoredMessage[];
}

/** GET /v1/models: the server's default model and its providers. */
export interface ModelsInfo {
  default: string;
  providers: { name: string; baseUrl: string }[];
}

/** An answer of the API that is not a success, with the readable `message` of its error JSON. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The error JSON's `message` (a string, or a list of validation messages); never the raw body. */
export async function apiError(response: Response): Promise<ApiError> {
  const body = (await response.json().catch(() => null)) as { message?: unknown } | null;
  const raw = body?.message;
  const message = Array.isArray(raw) ? raw.map(String).join('; ') : typeof raw === 'string' ? raw : '';
  if (response.status === 401) {
    return new ApiError(401, 'The API key was not accepted: paste a key of this server above.');
  }
  return new ApiError(response.status, message || `${response.status} ${response.statusText}`);
}

async function request<T>(key: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: {
      ...authHeaders(key),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await apiError(response);
  // 202 and 204 carry no body.
  const text = await response.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

/** Every session of the key, newest first (page after page). */
export async function listSessions(key: string): Promise<SessionSummary[]> {
  const all: SessionSummary[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page: { data: SessionSummary[]; nextCursor: string | null } = await request(
      key,
      'GET',
      `/v1/sessions?limit=100${query}`,
    );
    all.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor !== null && all.length < 2000);
  return all;
}

export function getSession(key: string, id: string): Promise<SessionDetail> {
  return request(key, 'GET', `/v1/sessions/${encodeURIComponent(id)}`);
}

/** GET /v1/runs/:id, the fields the page shows of a run that ended. */
export interface RunSummary {
  id: string;
  status: string;
  error: { code: string; message: string } | null;
}

export function getRun(key: string, id: string): Promise<RunSummary> {
  return request(key, 'GET', `/v1/runs/${encodeURIComponent(id)}`);
}

export function renameSession(key: string, id: string, title: string): Promise<SessionSummary> {
  return request(key, 'PATCH', `/v1/sessions/${encodeURIComponent(id)}`, { title });
}

/** A new session with the conversation of `id` up to and including `atMessageId` ("Fork and replay"). */
export function forkSession(key: string, id: string, atMessageId: string): Promise<SessionSummary> {
  return request(key, 'POST', `/v1/sessions/${encodeURIComponent(id)}/fork`, { atMessageId });
}

/**
 * A finished run run again in a fork of its session ("Fork and replay"): from its record, or — with
 * `fromStep` — its steps up to that one from the record and the rest live.
 */
export function replayRun(
  key: string,
  runId: string,
  fromStep?: number,
): Promise<{ runId: string; sessionId: string }> {
  return request(
    key,
    'POST',
    `/v1/runs/${encodeURIComponent(runId)}/replay`,
    fromStep === undefined ? {} : { fromStep },
  );
}

export function deleteSession(key: string, id: string): Promise<void> {
  return request(key, 'DELETE', `/v1/sessions/${encodeURIComponent(id)}`);
}

export function cancelRun(key: string, runId: string): Promise<void> {
  return request(key, 'POST', `/v1/runs/${encodeURIComponent(runId)}/cancel`);
}

export interface Decision {
  approve: boolean;
  reason?: string;
  /** Approves the call with these arguments instead of the model's. */
  arguments?: Record<string, unknown>;
}

export function decide(key: string, runId: string, callId: string, decision: Decision): Promise<void> {
  return request(
    key,
    'POST',
    `/v1/runs/${encodeURIComponent(runId)}/tool-calls/${encodeURIComponent(callId)}/approval`,
    decision,
  );
}

export function postToolResult(key: string, runId: string, callId: string, content: string): Promise<void> {
  return request(
    key,
    'POST',
    `/v1/runs/${encodeURIComponent(runId)}/tool-calls/${encodeURIComponent(callId)}/result`,
    { content },
  );
}

/** The server's models, or null where it has no GET /v1/models (the page then offers a free-text field). */
export async function getModels(key: string): Promise<ModelsInfo | null> {
  const response = await fetch('/v1/models', { headers: authHeaders(key) });
  if (!response.ok) return null;
  const body = (await response.json().catch(() => null)) as Partial<ModelsInfo> | null;
  if (typeof body?.default !== 'string') return null;
  return { default: body.default, providers: Array.isArray(body.providers) ? body.providers : [] };
}

/** A file uploaded for a prompt (POST /v1/files). */
export interface Attachment {
  id: string;
  name: string;
  mediaType: string;
}

/** A prompt: its text, or its parts (text, and files by id). */
export type Prompt = string | ({ type: 'text'; text: string } | { type: 'file'; fileId: string })[];

/** Uploads a file as the raw body with its own type; the server judges its bytes. */
export async function uploadFile(key: string, file: File): Promise<Attachment> {
  const response = await fetch(`/v1/files?name=${encodeURIComponent(file.name || 'file')}`, {
    method: 'POST',
    headers: { ...authHeaders(key), 'Content-Type': file.type || 'application/octet-stream' },
    body: file,
  });
  if (!response.ok) throw await apiError(response);
  const body = (await response.json()) as Attachment;
  return { id: body.id, name: body.name, mediaType: body.mediaType };
}

/** Starts a run: in a new session (POST /v1/chat) or in `sessionId`. The stream's response. */
export async function startRun(
  key: string,
  sessionId: string | undefined,
  prompt: Prompt,
  options: Record<string, unknown>,
  signal: AbortSignal,
  /** A prompt to a session whose run is active waits for it (onActive "enqueue"). */
  enqueue = false,
): Promise<Response> {
  const [path, body] =
    sessionId === undefined
      ? ['/v1/chat', { ...options, prompt }]
      : [
          `/v1/sessions/${encodeURIComponent(sessionId)}/messages`,
          { content: prompt, ...(enqueue ? { onActive: 'enqueue' } : {}) },
        ];
  const response = await fetch(path, {
    method: 'POST',
    headers: { ...authHeaders(key), 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw await apiError(response);
  return response;
}

/** A run's events after `after`, live until it ends; null when it has ended and nothing is left (204). */
export async function runEvents(
  key: string,
  runId: string,
  after: number,
  signal: AbortSignal,
): Promise<Response | null> {
  const response = await fetch(`/v1/runs/${encodeURIComponent(runId)}/events?after=${after}`, {
    headers: authHeaders(key),
    signal,
  });
  if (response.status === 204) return null;
  if (!response.ok) throw await apiError(response);
  return response;
}

/** GET /v1/schedules: a prompt the server sends on a cron. */
export interface ScheduleSummary {
  id: string;
  cron: string;
  timezone: string;
  prompt: string;
  sessionId: string | null;
  enabled: boolean;
  nextRunAt: string | null;
}

/** The key's schedules, newest first (the first page: a read-only panel needs no more). */
export async function listSchedules(key: string): Promise<ScheduleSummary[]> {
  const page: { data: ScheduleSummary[] } = await request(key, 'GET', '/v1/schedules?limit=100');
  return page.data;
}
