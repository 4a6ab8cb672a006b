import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

/** SessionMode's ladder (app-config.ts), named here so this file imports nothing of the config loader. */
type SessionMode = 'safe' | 'write' | 'exec';

/**
 * One named agent of AGENTS_CONFIG: the settings a session of it starts from. Every field but
 * `description` may be left out and then defaults as SessionOptions do (null = the server's default).
 */
export interface AgentConfig {
  /** `[A-Za-z0-9_-]{1,64}`: what `delegate`'s `agent` and SessionOptions' `agent` name. */
  name: string;
  description: string;
  systemPrompt: string | null;
  model: string | null;
  mode: SessionMode | null;
  /** Server (or the root session's client) tools it may use; null = all its mode allows. */
  tools: readonly string[] | null;
  maxIterations: number | null;
}

/** A problem with the AGENTS_CONFIG file; the loader turns it into a ConfigError naming AGENTS_CONFIG. */
export class AgentsConfigProblem extends Error {}

const AGENT_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MODES: readonly SessionMode[] = ['safe', 'write', 'exec'];
const FIELDS = new Set(['description', 'systemPrompt', 'model', 'mode', 'tools', 'maxIterations']);
/** A file of agents is written by a person: a megabyte is far beyond any real one, and bounds the read. */
const MAX_FILE_BYTES = 1024 * 1024;
/** Same bound as a session's `model` (sessions/dto/session-options.dto.ts). */
const MAX_MODEL_LENGTH = 200;

/** Reads and checks the `{ "agents": { … } }` file; a problem names the agent and the field. */
export function loadAgents(file: string, cwd: string, maxIterations: number): AgentConfig[] {
  const path = resolve(cwd, file);
  let text: string;
  try {
    if (statSync(path).size > MAX_FILE_BYTES) {
      throw new Error(`larger than ${MAX_FILE_BYTES} bytes`);
    }
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new AgentsConfigProblem(`the file cannot be read (${(err as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new AgentsConfigProblem(`the file is not JSON (${(err as Error).message})`);
  }
  return parseAgents(parsed, maxIterations);
}

/** Checks an already parsed document. Tools and models are checked later, against what the server offers. */
export function parseAgents(document: unknown, maxIterations: number): AgentConfig[] {
  if (!isRecord(document) || !isRecord(document.agents)) {
    throw new AgentsConfigProblem('the file must be an object with an "agents" object');
  }
  return Object.entries(document.agents).map(([name, raw]) => parseAgent(name, raw, maxIterations));
}

function parseAgent(name: string, raw: unknown, maxIterations: number): AgentConfig {
  const at = `agent ${JSON.stringify(name)}`;
  if (!AGENT_NAME.test(name)) throw new AgentsConfigProblem(`${at}: names must match [A-Za-z0-9_-]{1,64}`);
  if (!isRecord(raw)) throw new AgentsConfigProblem(`${at} must be an object`);
  const unknown = Object.keys(raw).find((field) => !FIELDS.has(field));
  if (unknown !== undefined) {
    throw new AgentsConfigProblem(`${at}: ${unknown} is no field of an agent (${[...FIELDS].join(', ')})`);
  }
  if (typeof raw.description !== 'string' || raw.description.trim() === '') {
    throw new AgentsConfigProblem(`${at}: description must be a non-empty string`);
  }
  const systemPrompt = optionalString(raw.systemPrompt, `${at}: systemPrompt`);
  const model = optionalString(raw.model, `${at}: model`);
  if (model !== null && (model.length > MAX_MODEL_LENGTH || /\s/.test(model))) {
    throw new AgentsConfigProblem(
      `${at}: model must be a provider/model name of at most ${MAX_MODEL_LENGTH} characters`,
    );
  }
  if (raw.mode !== undefined && !MODES.includes(raw.mode as SessionMode)) {
    throw new AgentsConfigProblem(`${at}: mode must be one of ${MODES.join(', ')}`);
  }
  let tools: string[] | null = null;
  if (raw.tools !== undefined) {
    if (!Array.isArray(raw.tools) || raw.tools.some((t) => typeof t !== 'string')) {
      throw new AgentsConfigProblem(`${at}: tools must be a list of tool names`);
    }
    tools = raw.tools as string[];
  }
  const iterations = raw.maxIterations;
  if (
    iterations !== undefined &&
    (typeof iterations !== 'number' ||
      !Number.isInteger(iterations) ||
      iterations < 1 ||
      iterations > maxIterations)
  ) {
    throw new AgentsConfigProblem(
      `${at}: maxIterations must be an integer from 1 to ${maxIterations} (MAX_ITERATIONS)`,
    );
  }
  return {
    name,
    description: raw.description,
    systemPrompt,
    model,
    mode: (raw.mode as SessionMode | undefined) ?? null,
    tools,
    maxIterations: iterations ?? null,
  };
}

function optionalString(value: unknown, what: string): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || value === '')
    throw new AgentsConfigProblem(`${what} must be a non-empty string`);
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
