import type { SessionMode, ToolPolicy } from '../config/app-config';
import type { ToolKind } from './tool';

/** What each session mode does with each kind of tool, before the operator's overrides. */
const MODE_POLICIES: Readonly<Record<SessionMode, Readonly<Record<ToolKind, ToolPolicy>>>> = {
  safe: { read: 'allow', write: 'confirm', exec: 'deny' },
  write: { read: 'allow', write: 'allow', exec: 'confirm' },
  // Even in exec mode a person sees each command first: a command can do anything the server can.
  exec: { read: 'allow', write: 'allow', exec: 'confirm' },
};

/** Whether a call runs, waits for a person, or is refused. TOOL_POLICY overrides win over the mode. */
export function resolvePolicy(
  kind: ToolKind,
  toolName: string,
  mode: SessionMode,
  overrides: Readonly<Record<string, ToolPolicy>>,
): ToolPolicy {
  return Object.hasOwn(overrides, toolName) ? overrides[toolName] : MODE_POLICIES[mode][kind];
}
