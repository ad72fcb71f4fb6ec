// What a value a zod schema refuses is told: one short sentence per problem, naming the field,
// what is wrong and what is allowed ("max_results must be a whole number from 1 to 20, not
// "ten""), in place of zod's own wording ("Invalid input: expected number, received string").
// Built from zod's public parts only: its issues (code, path, input, bounds), the error map a
// parse takes (asked only where the schema has no sentence of its own, which is then kept), and
// the schema's JSON Schema (z.toJSONSchema), which says what a field allows.

import { z } from 'zod';

type Issue = z.core.$ZodRawIssue;
/** The JSON Schema of a field, as far as these sentences read it. */
export interface Json {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Json[];
  oneOf?: Json[];
  properties?: Record<string, Json>;
  additionalProperties?: Json | boolean;
  items?: Json | Json[];
  prefixItems?: Json[];
  format?: string;
  contentEncoding?: string;
  description?: string;
  [bound: `${'min' | 'max' | 'exclusiveMin' | 'exclusiveMax'}${string}`]: number | undefined;
}

export type Checked<T> = { success: true; data: T } | { success: false; problems: string };

/** More problems than this are counted, not listed: the first ones are what to fix first. */
const MAX_PROBLEMS = 5;
/** A description this short helps a sentence; a longer one is the tool list's business. */
const MAX_HINT = 60;
/** How much of a wrong string a sentence quotes. */
const MAX_QUOTED = 40;
/** A length bound this large guards memory; no sensible value comes near it, so it is no advice. */
const SIZE_GUARD = 4096;

/**
 * Parses `value`; when the schema refuses it, every problem in one line of sentences. `under`:
 * the field every path starts under, which the sentences leave out (a request's `params`).
 */
export function checked<T extends z.ZodType>(
  schema: T,
  value: unknown,
  under?: string,
): Checked<z.output<T>> {
  // The error map is asked only for a refused value: a call that passes converts nothing.
  const parsed = schema.safeParse(value, { error: (issue) => sentence(issue, jsonOf(schema), under) });
  if (parsed.success) return { success: true, data: parsed.data };
  return { success: false, problems: problemsOf(parsed.error.issues, under) };
}

const jsonSchemas = new WeakMap<z.ZodType, Json>();

function jsonOf(schema: z.ZodType): Json {
  let json = jsonSchemas.get(schema);
  if (!json) {
    try {
      json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
    } catch {
      json = {};
    }
    jsonSchemas.set(schema, json);
  }
  return json;
}

/** One sentence per field: its first problem is the one to fix first. */
function problemsOf(issues: readonly z.core.$ZodIssue[], under: string | undefined): string {
  const byField = new Map<string, string>();
  for (const issue of issues) {
    const name = nameOf(issue.path, under);
    const named = issue.message.startsWith(name) || name === nameOf([], under);
    if (!byField.has(name)) byField.set(name, named ? issue.message : `${name}: ${issue.message}`);
  }
  const all = [...byField.values()];
  const more = all.length - MAX_PROBLEMS;
  return all.slice(0, MAX_PROBLEMS).join('; ') + (more > 0 ? `; and ${more} more` : '');
}

function sentence(issue: Issue, root: Json, under: string | undefined): string {
  const path = issue.path ?? [];
  const name = nameOf(path, under);
  const field = fieldAt(root, path);
  const allowed = field && allowedBy(field);
  const given = shown(issue.input);
  switch (issue.code) {
    case 'invalid_type': {
      const what = allowed ?? expectedType(issue.expected);
      return issue.input === undefined
        ? `${name} is required: ${what}${hintOf(field)}`
        : `${name} must be ${what}, not ${given}${hintOf(field)}`;
    }
    case 'invalid_value':
      return `${name} must be ${choices(issue.values)}, not ${given}`;
    case 'too_small':
    case 'too_big':
      return sizeSentence(issue, name, field && allowedBy(field, true));
    case 'invalid_format':
      if (issue.format === 'regex' && issue.pattern)
        return `${name} must match ${issue.pattern}, not ${given}`;
      return `${name} must be ${FORMATS[issue.format] ?? allowed ?? 'in another form'}, not ${given}`;
    case 'not_multiple_of':
      return `${name} must be a multiple of ${issue.divisor}, not ${given}`;
    case 'unrecognized_keys': {
      const known = Object.keys(field?.properties ?? {});
      const where = path.length > 0 ? ` in ${name}` : '';
      const fields = known.length > 0 ? `; the fields are ${known.join(', ')}` : '';
      return `${orList(issue.keys)} ${issue.keys.length === 1 ? 'is not a known field' : 'are not known fields'}${where}${fields}`;
    }
    default:
      return allowed ? `${name} must be ${allowed}, not ${given}` : `${name} is not valid`;
  }
}

function sizeSentence(
  issue: Extract<Issue, { code: 'too_small' | 'too_big' }>,
  name: string,
  allowed: string | undefined,
): string {
  const input = issue.input;
  const bound =
    issue.code === 'too_big'
      ? `${issue.inclusive === false ? 'less than' : 'at most'} ${issue.maximum}`
      : `${issue.inclusive === false ? 'more than' : 'at least'} ${issue.minimum}`;
  if (typeof input === 'string' || Array.isArray(input)) {
    const unit = typeof input === 'string' ? 'characters' : 'items';
    const has = input.length === 0 ? 'it is empty' : `it has ${input.length}`;
    return `${name} must be ${allowed ?? `${bound} ${unit}`} (${has})`;
  }
  return `${name} must be ${allowed ?? bound}, not ${shown(input)}`;
}

/** `include_domains[0]`, `params.name` less its `under` part; the whole value is "the value". */
function nameOf(path: readonly PropertyKey[], under: string | undefined): string {
  const shownPath = under !== undefined && path[0] === under ? path.slice(1) : path;
  if (shownPath.length === 0) return under ?? 'the value';
  return shownPath
    .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i > 0 ? '.' : ''}${String(key)}`))
    .join('');
}

/** A value as a sentence shows it: a string quoted (in part), a list or object by its kind. */
function shown(value: unknown): string {
  if (typeof value === 'string') {
    const chars = [...value];
    return JSON.stringify(chars.length > MAX_QUOTED ? `${chars.slice(0, MAX_QUOTED).join('')}…` : value);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return value === undefined ? 'nothing' : 'an object';
}

// ---- reading the JSON Schema ----

/** The schema of the field at `path`: through properties, items, and the member of a union that has it. */
function fieldAt(root: Json, path: readonly PropertyKey[]): Json | undefined {
  let schema: Json | undefined = root;
  for (const key of path) {
    schema = schema && childOf(schema, key);
    if (!schema) return undefined;
  }
  return schema;
}

function childOf(schema: Json, key: PropertyKey): Json | undefined {
  for (const member of schema.anyOf ?? schema.oneOf ?? []) {
    const child = childOf(member, key);
    if (child) return child;
  }
  if (typeof key === 'number') {
    if (Array.isArray(schema.items)) return schema.items[key];
    return schema.prefixItems?.[key] ?? schema.items;
  }
  const property = schema.properties?.[String(key)];
  if (property) return property;
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

/**
 * A short description as a parenthesis ("e.g. tavily", "0 = just look"), else nothing (nor for
 * one with a parenthesis of its own).
 */
function hintOf(schema: Json | undefined): string {
  const description = schema?.description;
  if (!description || description.length > MAX_HINT || /[()]/.test(description)) return '';
  // "A finished job_id…" reads on as "a finished job_id…"; "ISO-639-1…" stays as it is.
  const text = /^[A-Z](?![A-Z0-9-])/.test(description)
    ? description.charAt(0).toLowerCase() + description.slice(1)
    : description;
  return ` (${text.replace(/\.$/, '')})`;
}

/**
 * What a schema takes, as the end of "must be …": "a whole number from 1 to 20", "web or news",
 * "a list of at most 20 strings". `guards`: also say a length bound set only to guard memory.
 * docs/tools.md describes each argument with it too (scripts/tools-doc.ts).
 */
export function allowedBy(schema: Json, guards = false): string | undefined {
  const members = schema.anyOf ?? schema.oneOf;
  if (members) {
    const each = members.map((member) => allowedBy(member, guards));
    return each.length > 0 && each.every(Boolean) ? orList(each as string[]) : undefined;
  }
  if (schema.enum) return choices(schema.enum);
  if ('const' in schema) return choices([schema.const]);
  // A nullable field's types come as a list: ["string", "null"].
  if (Array.isArray(schema.type))
    return orList(schema.type.map((type) => allowedBy({ ...schema, type }) ?? type));
  switch (schema.type) {
    case 'string':
      return stringAllowed(schema, guards);
    case 'number':
    case 'integer':
      return numberAllowed(schema);
    case 'boolean':
      return 'true or false';
    case 'null':
      return 'null';
    case 'array':
      return counted('list', elementsOf(schema.items), schema.minItems, schema.maxItems);
    case 'object':
      return 'a JSON object';
    default:
      return undefined;
  }
}

function stringAllowed(schema: Json, guards: boolean): string {
  const format = FORMATS[schema.format ?? schema.contentEncoding ?? ''];
  if (format) return format;
  const max =
    schema.maxLength !== undefined && (guards || schema.maxLength < SIZE_GUARD)
      ? schema.maxLength
      : undefined;
  return counted('string', 'characters', schema.minLength, max);
}

/** "a string of 2 to 32 characters", "a non-empty list of strings", "a list of at most 20 strings". */
function counted(noun: 'string' | 'list', unit: string, min?: number, max?: number): string {
  if (min !== undefined && min === max) return `a ${noun} of exactly ${min} ${unit}`;
  if (min !== undefined && min > 1)
    return `a ${noun} of ${max !== undefined ? `${min} to ${max}` : `at least ${min}`} ${unit}`;
  const start = min === 1 ? `a non-empty ${noun}` : `a ${noun}`;
  if (max !== undefined) return `${start} of at most ${max} ${unit}`;
  return noun === 'list' ? `${start} of ${unit}` : start;
}

const PLURALS: Record<string, string> = {
  string: 'strings',
  integer: 'whole numbers',
  number: 'numbers',
  boolean: 'true or false values',
  object: 'objects',
};

function elementsOf(items: Json | Json[] | undefined): string {
  return (!Array.isArray(items) && PLURALS[String(items?.type)]) || 'items';
}

function numberAllowed(schema: Json): string {
  const kind = schema.type === 'integer' ? 'a whole number' : 'a number';
  // A whole number's safe range comes with every one: it is no advice.
  const bound = (n?: number) => (n !== undefined && Math.abs(n) < Number.MAX_SAFE_INTEGER ? n : undefined);
  const [min, max] = [bound(schema.minimum), bound(schema.maximum)];
  if (min !== undefined && max !== undefined) return `${kind} from ${min} to ${max}`;
  const above = schema.exclusiveMinimum;
  const below = schema.exclusiveMaximum;
  const parts = [
    ...(min !== undefined ? [`at least ${min}`] : above !== undefined ? [`greater than ${above}`] : []),
    ...(max !== undefined ? [`at most ${max}`] : below !== undefined ? [`less than ${below}`] : []),
  ];
  if (parts.length === 0) return kind;
  return parts.length === 1 && parts[0]?.startsWith('at ')
    ? `${kind} of ${parts[0]}`
    : `${kind} ${parts.join(' and ')}`;
}

/** Formats by their zod (issues) and JSON Schema (fields) names. */
const FORMATS: Record<string, string> = {
  url: 'a URL',
  uri: 'a URL',
  email: 'an email address',
  uuid: 'a UUID',
  guid: 'a UUID',
  datetime: 'a date and time such as 2026-01-15T09:30:00Z',
  'date-time': 'a date and time such as 2026-01-15T09:30:00Z',
  date: 'a date such as 2026-01-15',
  time: 'a time such as 09:30:00',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  base64: 'base64 text',
  base64url: 'base64url text',
};

/** What zod expected, when the schema cannot say more. */
function expectedType(expected: string): string {
  const words: Record<string, string> = {
    int: 'a whole number',
    boolean: 'true or false',
    array: 'a list',
    object: 'a JSON object',
    record: 'a JSON object',
  };
  return words[expected] ?? (/^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`);
}

/** Choices as a sentence lists them: bare words as they are, anything else quoted. */
function choices(values: readonly unknown[]): string {
  return orList(
    values.map((v) =>
      typeof v === 'string' && /^[\w.:/+-]+$/.test(v) ? v : (JSON.stringify(v) ?? String(v)),
    ),
  );
}

function orList(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? 'nothing';
  return `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}
