// The `tools/list` entries, built once per process instead of once per request: JSON Schemas
// converted from the zod shapes, compacted (see compact()). The bundle in dist/ carries them
// already converted by the build (scripts/build.mjs), which saves start-up time and memory; run
// from source, they are converted on first use.

import type { Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { AnyToolDefinition } from '../tools/define.js';

type ToolJson = Pick<Tool, 'title' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations'>;
export type ToolSchemas = Record<string, { input: Tool['inputSchema']; output: Tool['outputSchema'] }>;

declare const __GATEWAY_TOOL_SCHEMAS__: ToolSchemas | undefined;
const PRECONVERTED: ToolSchemas | undefined =
  typeof __GATEWAY_TOOL_SCHEMAS__ === 'object' ? __GATEWAY_TOOL_SCHEMAS__ : undefined;

const converted = new WeakMap<AnyToolDefinition, ToolJson>();

/** The JSON Schemas of every tool, as the build embeds them. */
export function convertSchemas(tools: readonly AnyToolDefinition[]): ToolSchemas {
  return Object.fromEntries(tools.map((tool) => [tool.name, schemasOf(tool)]));
}

function schemasOf(tool: AnyToolDefinition): ToolSchemas[string] {
  return (
    PRECONVERTED?.[tool.name] ?? {
      input: jsonSchema(tool.inputSchema, 'input') as Tool['inputSchema'],
      output: jsonSchema(tool.outputSchema, 'output') as Tool['outputSchema'],
    }
  );
}

/** One tool's `tools/list` entry, under its public name, with `_meta` when given. */
export function listedTool(
  tool: AnyToolDefinition,
  name: string,
  meta: Record<string, unknown> | undefined,
): Tool {
  let json = converted.get(tool);
  if (!json) {
    const schemas = schemasOf(tool);
    json = {
      title: tool.title,
      description: tool.description,
      inputSchema: schemas.input,
      outputSchema: schemas.output,
      annotations: tool.annotations,
    };
    converted.set(tool, json);
  }
  return meta ? { name, ...json, _meta: meta } : { name, ...json };
}

function jsonSchema(shape: z.ZodRawShape, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _drop, ...schema } = z.toJSONSchema(z.object(shape), { target: 'draft-7', io });
  return compact(schema, io) as Record<string, unknown>;
}

/** A `maxLength` this large guards a path, URL or inline data; no sensible argument comes near it. */
const SIZE_GUARD = 4096;

const OUTPUT_NOISE = new Set([
  'description',
  'additionalProperties',
  'required',
  'propertyNames',
  'minimum',
  'maximum',
]);

/**
 * Drops what carries no information for a client: the ±2^53 bounds zod puts on every integer,
 * regex patterns and the length bounds of the ids they check, `minLength: 1` and the size guards on paths, URLs and inline data (a
 * `maxLength` of 4096 or more: no sensible argument comes near one, and the server still checks
 * them with a clear message); in output schemas, descriptions, bounds and required lists (the text
 * content explains results, and every field the spec names is always present; the registry still
 * validates structuredContent against the full zod schema before it is sent).
 */
function compact(node: unknown, io: 'input' | 'output'): unknown {
  if (Array.isArray(node)) return node.map((n) => compact(n, io));
  if (!node || typeof node !== 'object') return node;
  const nullable = io === 'output' ? nullableType(node as Record<string, unknown>) : undefined;
  if (nullable) return nullable;
  const out: Record<string, unknown> = {};
  // An id checked against a pattern is copied, not written: its length bound tells a model nothing.
  const isId = typeof (node as Record<string, unknown>).pattern === 'string';
  for (const [key, value] of Object.entries(node)) {
    if (key === 'maxLength' && isId) continue;
    if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue;
    if (key === 'minLength' && value === 1) continue;
    if (key === 'maxLength' && typeof value === 'number' && value >= SIZE_GUARD) continue;
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue;
    if (io === 'output' && OUTPUT_NOISE.has(key)) continue;
    // Id patterns are checked server-side with a clear message; in the tool list they are noise.
    if (key === 'pattern') continue;
    out[key] = key === 'properties' ? mapValues(value, io) : compact(value, io);
  }
  return out;
}

/**
 * In outputs, `anyOf: [{type: T, ...bounds}, {type: null}]` says no more than `type: [T, null]`
 * (an object keeps its properties).
 */
function nullableType(node: Record<string, unknown>): Record<string, unknown> | undefined {
  const options = node.anyOf;
  if (!Array.isArray(options) || options.length !== 2) return undefined;
  const [first, second] = options as Record<string, unknown>[];
  if (second?.type !== 'null' || typeof first?.type !== 'string' || first.type === 'array') return undefined;
  if (first.type !== 'object') return { type: [first.type, 'null'] };
  const object = compact(first, 'output') as Record<string, unknown>;
  return { ...object, type: ['object', 'null'] };
}

function mapValues(properties: unknown, io: 'input' | 'output'): Record<string, unknown> {
  return Object.fromEntries(Object.entries(properties as object).map(([k, v]) => [k, compact(v, io)]));
}
