import { isDeepStrictEqual } from 'node:util';
import type { ToolResult } from '../tools/tool';

/** The parts of an MCP CallToolResult this service reads; anything else a server sends is ignored. */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * An MCP result as the tool message the model reads: text items joined by newlines, every other item
 * described in one line (never base64: it would fill the context with noise), `structuredContent`
 * appended as JSON unless the text already is that JSON, `isError` → MCP_TOOL_ERROR.
 */
export function mapMcpResult(result: McpCallResult): ToolResult {
  const items = Array.isArray(result.content) ? result.content : [];
  const lines = items.map(describeItem);
  const texts = items.filter(isTextItem).map((item) => item.text);
  if (result.structuredContent !== undefined && !textIsJsonOf(texts.join('\n'), result.structuredContent)) {
    lines.push(JSON.stringify(result.structuredContent));
  }
  const content = lines.join('\n');
  return result.isError === true ? { content, isError: true, errorCode: 'MCP_TOOL_ERROR' } : { content };
}

function describeItem(item: unknown): string {
  if (typeof item !== 'object' || item === null) return '[unreadable content]';
  const record = item as Record<string, unknown>;
  switch (record.type) {
    case 'text':
      return typeof record.text === 'string' ? record.text : '';
    case 'image':
    case 'audio':
      return `[${record.type} ${str(record.mimeType, 'unknown type')}, ${kilobytes(record.data)} KB]`;
    case 'resource_link':
      return `[resource ${str(record.uri, '?')}]`;
    case 'resource': {
      const resource = (record.resource ?? {}) as Record<string, unknown>;
      const line = `[resource ${str(resource.uri, '?')}]`;
      return typeof resource.text === 'string' ? `${line}\n${resource.text}` : line;
    }
    default:
      return `[${str(record.type, 'unknown')} content]`;
  }
}

function isTextItem(item: unknown): item is { type: 'text'; text: string } {
  const record = item as Record<string, unknown> | null;
  return record?.type === 'text' && typeof record.text === 'string';
}

/** Decoded size of base64 data, rounded up to whole kilobytes (computed, not decoded). */
function kilobytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const clean = data.replace(/[^A-Za-z0-9+/]/g, '');
  const bytes = Math.floor((clean.length * 3) / 4);
  return Math.ceil(bytes / 1024);
}

function textIsJsonOf(text: string, value: unknown): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(text), value);
  } catch {
    return false;
  }
}

function str(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}
