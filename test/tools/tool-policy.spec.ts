import type { SessionMode, ToolPolicy } from '../../src/config/app-config';
import type { ToolKind } from '../../src/tools/tool';
import { resolvePolicy } from '../../src/tools/tool-policy';

describe('resolvePolicy', () => {
  const table: [SessionMode, ToolKind, ToolPolicy][] = [
    ['safe', 'read', 'allow'],
    ['safe', 'write', 'confirm'],
    ['safe', 'exec', 'deny'],
    ['write', 'read', 'allow'],
    ['write', 'write', 'allow'],
    ['write', 'exec', 'deny'],
    ['exec', 'read', 'allow'],
    ['exec', 'write', 'allow'],
    ['exec', 'exec', 'confirm'],
  ];

  it.each(table)('in %s mode a %s tool is %s', (mode, kind, policy) => {
    expect(resolvePolicy(kind, 'some_tool', mode, {})).toBe(policy);
  });

  it('lets TOOL_POLICY override the mode for one tool', () => {
    expect(resolvePolicy('exec', 'run_command', 'safe', { run_command: 'allow' })).toBe('allow');
    expect(resolvePolicy('read', 'read_file', 'exec', { read_file: 'deny' })).toBe('deny');
    expect(resolvePolicy('write', 'write_file', 'safe', { run_command: 'allow' })).toBe('confirm');
  });

  it('is not fooled by inherited property names', () => {
    expect(resolvePolicy('exec', 'constructor', 'safe', {})).toBe('deny');
  });
});
