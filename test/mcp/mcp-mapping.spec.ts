import { compileSchema } from '../../src/tools/json-schema';
import { resolvePolicy } from '../../src/tools/tool-policy';
import { mapMcpResult } from '../../src/mcp/mcp-result';
import { offeredToolName } from '../../src/mcp/mcp-tool-name';
import type { McpConnection } from '../../src/mcp/mcp-connection';
import { McpTool } from '../../src/mcp/mcp-tool';
import type { Tool } from '../../src/tools/tool';

const base64Of = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');

describe('offeredToolName', () => {
  it('joins server and tool with __ and replaces every UTF-16 unit outside A-Za-z0-9_- with _', () => {
    expect(offeredToolName('files', 'read_file')).toBe('files__read_file');
    expect(offeredToolName('gh', 'issues.list/all')).toBe('gh__issues_list_all');
    // An astral character is two UTF-16 units, so two underscores.
    expect(offeredToolName('s', 'a😀b')).toBe('s__a__b');
  });

  it('cuts the name to 64', () => {
    const name = offeredToolName('server', 'x'.repeat(100));
    expect(name).toHaveLength(64);
    expect(name.startsWith('server__xxx')).toBe(true);
  });
});

describe('mapMcpResult', () => {
  it('joins text items with newlines', () => {
    expect(
      mapMcpResult({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toEqual({
      content: 'a\nb',
    });
  });

  it('describes images and audio with their decoded size rounded up, never their data', () => {
    const result = mapMcpResult({
      content: [
        { type: 'image', mimeType: 'image/png', data: base64Of(12 * 1024) },
        { type: 'audio', mimeType: 'audio/wav', data: base64Of(2 * 1024 + 1) },
      ],
    });
    expect(result.content).toBe('[image image/png, 12 KB]\n[audio audio/wav, 3 KB]');
  });

  it('describes resources, adding an embedded text resource its text', () => {
    const result = mapMcpResult({
      content: [
        { type: 'resource_link', uri: 'file:///a.txt', name: 'a' },
        { type: 'resource', resource: { uri: 'file:///b.txt', text: 'bee' } },
        { type: 'resource', resource: { uri: 'file:///c.bin', blob: base64Of(10) } },
      ],
    });
    expect(result.content).toBe(
      '[resource file:///a.txt]\n[resource file:///b.txt]\nbee\n[resource file:///c.bin]',
    );
  });

  it('appends structuredContent as JSON unless the text already is that JSON', () => {
    const structured = { a: 1, b: [true] };
    expect(
      mapMcpResult({ content: [{ type: 'text', text: 'hi' }], structuredContent: structured }).content,
    ).toBe('hi\n{"a":1,"b":[true]}');
    expect(
      mapMcpResult({
        content: [{ type: 'text', text: '{ "b": [true], "a": 1 }' }],
        structuredContent: structured,
      }).content,
    ).toBe('{ "b": [true], "a": 1 }');
  });

  it('turns isError into MCP_TOOL_ERROR', () => {
    expect(mapMcpResult({ content: [{ type: 'text', text: 'no' }], isError: true })).toEqual({
      content: 'no',
      isError: true,
      errorCode: 'MCP_TOOL_ERROR',
    });
  });
});

describe('MCP input schemas', () => {
  it('compiles JSON Schema 2020-12 (prefixItems, formats) as well as draft-07', () => {
    const v2020 = compileSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] },
        at: { type: 'string', format: 'date-time' },
      },
    });
    expect(v2020({ pair: ['a', 1] })).toBe(true);
    expect(v2020({ pair: [1, 'a'] })).toBe(false);
    expect(v2020({ at: 'yesterday' })).toBe(false);
    const draft7 = compileSchema({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { e: { type: 'string', format: 'email' } },
    });
    expect(draft7({ e: 'a@b.co' })).toBe(true);
    expect(draft7({ e: 'nope' })).toBe(false);
  });
});

describe('TOOL_POLICY for MCP tools', () => {
  it('applies <server>__* to the tools of that server, and a tool’s own entry wins', () => {
    const overrides = { 'files__*': 'deny', files__read: 'allow' } as const;
    expect(resolvePolicy('write', 'files__write', 'write', overrides, 'files')).toBe('deny');
    expect(resolvePolicy('write', 'files__read', 'safe', overrides, 'files')).toBe('allow');
    expect(resolvePolicy('read', 'other__x', 'safe', overrides, 'other')).toBe('allow');
    // A built-in has no server: a wildcard never applies to it.
    expect(resolvePolicy('write', 'files__write', 'safe', overrides)).toBe('confirm');
  });
});

describe('McpTool', () => {
  const connection = { config: { name: 'files', timeoutMs: 1000 } } as unknown as McpConnection;
  const listed = (annotations?: { readOnlyHint?: boolean }) => ({
    name: 't',
    inputSchema: { type: 'object' as const },
    ...(annotations ? { annotations } : {}),
  });

  it('is a read when its server says readOnlyHint, a write otherwise', () => {
    const read: Tool = new McpTool('files__t', listed({ readOnlyHint: true }), connection, () => undefined);
    expect(read.kind).toBe('read');
    const write: Tool = new McpTool('files__t', listed(), connection, () => undefined);
    expect(write.kind).toBe('write');
  });
});
