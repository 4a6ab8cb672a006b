// Compiled (never run) by typed-client.spec.ts against the client openapi-typescript generated from
// the live document: every answer of the API used through openapi-fetch, with no cast and no any.
import createClient from 'openapi-fetch';
import type { paths } from './api';

export async function everyAnswer(baseUrl: string, apiKey: string): Promise<string[]> {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });
  const seen: string[] = [];

  const created = await client.POST('/v1/sessions', { body: { title: 'typed', mode: 'write' } });
  const sessionId: string = created.data?.id ?? '';
  seen.push(created.data?.mode ?? 'safe', String(created.data?.maxIterations ?? 0));
  await client.POST('/v1/sessions', {}); // no body at all
  await client.POST('/v1/sessions', { body: {} }); // every option left out

  await client.GET('/v1/sessions');
  const page = await client.GET('/v1/sessions', { params: { query: { limit: 5 } } });
  seen.push(page.data?.data[0]?.title ?? '', page.data?.nextCursor ?? 'last page');

  const session = await client.GET('/v1/sessions/{id}', { params: { path: { id: sessionId } } });
  const message = session.data?.messages[0];
  seen.push(message?.role ?? 'system', message?.content ?? '', message?.toolCalls?.[0]?.name ?? '');
  seen.push(message?.toolCallId ?? '', session.data?.clientTools[0]?.function.name ?? '');
  seen.push(session.data?.activeRunId ?? 'no active run', message?.runId ?? '');

  const renamed = await client.PATCH('/v1/sessions/{id}', {
    params: { path: { id: sessionId } },
    body: { title: 'Renamed' },
  });
  seen.push(renamed.data?.title ?? '');

  const stored = await client.GET('/v1/ai-sdk/chat/{chatId}/messages', {
    params: { path: { chatId: 'chat-1' } },
  });
  seen.push(stored.data?.[0]?.role ?? '', String(stored.data?.[0]?.parts.length ?? 0));

  const changes = await client.GET('/v1/sessions/{id}/changes', { params: { path: { id: sessionId } } });
  seen.push(changes.data?.[0]?.path ?? '', changes.data?.[0]?.afterSha256 ?? 'deleted');

  const commands = await client.GET('/v1/sessions/{id}/commands', { params: { path: { id: sessionId } } });
  if (commands.error) seen.push(String(commands.error.statusCode));
  const command = commands.data?.[0];
  seen.push(command?.commandId ?? '', command?.status ?? 'running', String(command?.exitCode ?? 'none'));
  seen.push(command?.endedAt ?? 'still running', command?.startedAt ?? '', command?.command ?? '');

  const run = await client.GET('/v1/runs/{id}', { params: { path: { id: sessionId } } });
  if (run.error) seen.push(String(run.error.statusCode), run.error.error, String(run.error.runId));
  const pending = run.data?.pendingToolCalls[0];
  seen.push(run.data?.status ?? 'running', String(run.data?.usage.promptTokens ?? 0));
  seen.push(pending?.waitingFor ?? 'approval', pending?.executor ?? 'server', run.data?.error?.code ?? '');
  seen.push(run.data?.finishedAt ?? 'still running');

  const token = await client.POST('/v1/runs/{id}/stream-token', { params: { path: { id: sessionId } } });
  seen.push(token.data?.token ?? '', token.data?.expiresAt ?? 'while it runs');

  const cancel = await client.POST('/v1/runs/{id}/cancel', { params: { path: { id: sessionId } } });
  seen.push(String(cancel.response.status));
  const approval = await client.POST('/v1/runs/{id}/tool-calls/{callId}/approval', {
    params: { path: { id: sessionId, callId: 'call_1' } },
    body: { approve: false, reason: 'not now' },
  });
  seen.push(approval.error?.message.toString() ?? '');
  await client.POST('/v1/runs/{id}/tool-calls/{callId}/result', {
    params: { path: { id: sessionId, callId: 'call_1' } },
    body: { content: 'done' },
  });

  const tools = await client.GET('/v1/tools', { params: { query: { mode: 'exec' } } });
  seen.push(tools.data?.[0]?.policy ?? 'deny', tools.data?.[0]?.source ?? 'builtin');
  const models = await client.GET('/v1/models');
  seen.push(models.data?.default ?? '', models.data?.providers[0]?.baseUrl ?? '');
  const servers = await client.GET('/v1/mcp/servers');
  seen.push(servers.data?.[0]?.status ?? 'connecting', servers.data?.[0]?.tools.join() ?? '');

  const chat = await client.POST('/v1/chat', {
    body: { prompt: 'Hello', mode: 'safe' },
    headers: { 'Idempotency-Key': 'typed-1' },
    parseAs: 'stream',
  });
  seen.push(chat.response.headers.get('X-Run-Id') ?? '');
  if (chat.error) seen.push(String(chat.error.statusCode));
  const followUp = await client.POST('/v1/sessions/{id}/messages', {
    params: { path: { id: sessionId } },
    body: { content: 'More' },
    parseAs: 'stream',
  });
  seen.push(String(followUp.response.ok));
  const events = await client.GET('/v1/runs/{id}/events', {
    params: { path: { id: sessionId }, query: { after: '0' } },
    parseAs: 'stream',
  });
  seen.push(String(events.response.status));

  await client.DELETE('/v1/sessions/{id}', { params: { path: { id: sessionId } } });
  return seen;
}
