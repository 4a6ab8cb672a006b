/**
 * What a run's final answer must be ("Structured output"): JSON valid against `schema`, a JSON
 * Schema whose root is an object. `name` names it to providers that want one (Chat Completions,
 * Responses); the server gives its own when none is sent. Checked when a session or a prompt sets
 * it (sessions/response-format.ts), stored with the run, sent to each provider in its own shape,
 * and the answer checked against it by the loop (agent/structured-output.ts).
 */
export interface ResponseFormat {
  type: 'json_schema';
  name?: string;
  schema: Record<string, unknown>;
}

/** The name sent to providers that require one when the client gave none. */
export const DEFAULT_RESPONSE_FORMAT_NAME = 'output';
