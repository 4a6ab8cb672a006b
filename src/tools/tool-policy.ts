import type { SessionMode, ToolPolicy } from '../config/app-config';
import type { Tool, ToolKind } from './tool';

/**
 * What each session mode does with each kind of tool, before the operator's overrides: a ladder of
 * what a session may do — `safe` reads (writes wait for a person, commands are refused), `write`
 * also writes (commands refused), `exec` also runs commands, each seen by a person first.
 */
const MODE_POLICIES: Readonly<Record<SessionMode, Readonly<Record<ToolKind, ToolPolicy>>>> = {
  safe: { read: 'allow', write: 'confirm', exec: 'deny' },
  write: { read: 'allow', write: 'allow', exec: 'deny' },
  exec: { read: 'allow', write: 'allow', exec: 'confirm' },
};

/**
 * Whether a call runs, waits for a person, or is refused. TOOL_POLICY overrides win over the mode: the
 * tool's own entry first, then its MCP server's `<server>__*` entry when it has a server.
 */
export function resolvePolicy(
  kind: ToolKind,
  toolName: string,
  mode: SessionMode,
  overrides: Readonly<Record<string, ToolPolicy>>,
  mcpServer?: string,
): ToolPolicy {
  if (Object.hasOwn(overrides, toolName)) return overrides[toolName];
  const wildcard = mcpServer === undefined ? undefined : `${mcpServer}__*`;
  if (wildcard !== undefined && Object.hasOwn(overrides, wildcard)) return overrides[wildcard];
  return MODE_POLICIES[mode][kind];
}

/** resolvePolicy for a tool object (its MCP server, if any, from its source); a companion runs wherever its tool may. */
export function policyOf(
  tool: Pick<Tool, 'kind' | 'name' | 'source' | 'offeredWith'>,
  mode: SessionMode,
  overrides: Readonly<Record<string, ToolPolicy>>,
): ToolPolicy {
  if (tool.offeredWith !== undefined) {
    const { kind, name } = tool.offeredWith;
    return resolvePolicy(kind, name, mode, overrides) === 'deny' ? 'deny' : 'allow';
  }
  const server = tool.source?.startsWith('mcp:') ? tool.source.slice(4) : undefined;
  return resolvePolicy(tool.kind, tool.name, mode, overrides, server);
}
