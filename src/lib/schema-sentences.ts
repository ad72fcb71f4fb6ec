// What a value a zod schema refuses is told: one short sentence per problem, naming the field,
// what is wrong and what is allowed ("max_results must be a whole number from 1 to 20, not
// "ten""), worked out from the schema itself (type, bounds, choices, a short description) in
// place of zod's own wording ("Invalid input: expected number, received string"). A sentence a
// schema writes itself (`.max(400, 'query must be at most 400 characters')`) is kept as it is:
// zod asks for these sentences only where the schema has none.

import { z } from 'zod';

type Schema = z.core.$ZodType;
type Issue = z.core.$ZodRawIssue;

export type Checked<T> = { success: true; data: T } | { success: false; problems: string };

export interface CheckOptions {
  /** The field every path starts under, which the sentences leave out (a request's `params`). */
  under?: string;
}

/** More problems than this are counted, not listed: the first ones are what to fix first. */
const MAX_PROBLEMS = 5;
/** A description this short helps a sentence; a longer one is the tool list's business. */
const MAX_HINT = 60;
/** How much of a wrong string a sentence quotes. */
const MAX_QUOTED = 40;
/** A length bound this large guards memory; no sensible value comes near it, so it is no advice. */
const SIZE_GUARD = 4096;

/** Parses `value`; when the schema refuses it, every problem in one line of sentences. */
export function checked<T extends z.ZodType>(
  schema: T,
  value: unknown,
  options: CheckOptions = {},
): Checked<z.output<T>> {
  const parsed = schema.safeParse(value, { error: (issue) => sentence(issue, schema, options.under) });
  if (parsed.success) return { success: true, data: parsed.data };
  return { success: false, problems: problemsOf(parsed.error.issues, options.under) };
}

/**
 * The sentences of zod issues, each naming its field (a schema's own sentence may not), one per
 * field: its first problem is the one to fix first (an empty id is not also "not printable").
 */
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

function sentence(issue: Issue, root: Schema, under: string | undefined): string {
  const path = issue.path ?? [];
  const name = nameOf(path, under);
  const field = fieldAt(root, path);
  const allowed = field && allowedBy(field);
  const given = shown(issue.input);
  switch (issue.code) {
    case 'invalid_type': {
      const what = allowed ?? expectedType(issue.expected);
      const hint = hintOf(field);
      return issue.input === undefined
        ? `${name} is required: ${what}${hint}`
        : `${name} must be ${what}, not ${given}${hint}`;
    }
    case 'invalid_value':
      return `${name} must be ${choices(issue.values)}, not ${given}`;
    case 'too_small':
    case 'too_big':
      return sizeSentence(issue, name, field && allowedBy(field, true));
    case 'invalid_format':
      if (issue.format === 'regex' && issue.pattern)
        return `${name} must match ${issue.pattern}, not ${given}`;
      return `${name} must be ${formatted(issue.format) ?? allowed ?? 'in another form'}, not ${given}`;
    case 'not_multiple_of':
      return `${name} must be a multiple of ${issue.divisor}, not ${given}`;
    case 'unrecognized_keys': {
      const known = field ? Object.keys(shapeOf(field) ?? {}) : [];
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

// ---- reading the schema ----

/** The parts of a zod definition these sentences read, whatever its type. */
interface Definition {
  type: string;
  innerType?: Schema;
  in?: Schema;
  getter?: () => Schema;
  element?: Schema;
  options?: readonly Schema[];
  shape?: Record<string, Schema>;
  valueType?: Schema;
  items?: readonly Schema[];
  entries?: Record<string, unknown>;
  values?: readonly unknown[];
  format?: string;
  checks?: readonly { _zod: { def: CheckDefinition } }[];
}

interface CheckDefinition {
  check: string;
  value?: unknown;
  inclusive?: boolean;
  minimum?: number;
  maximum?: number;
  length?: number;
  format?: string;
}

function definitionOf(schema: Schema): Definition {
  return schema._zod.def as unknown as Definition;
}

const WRAPPERS = new Set(['optional', 'nonoptional', 'default', 'prefault', 'readonly', 'catch', 'nullable']);

/** The schema a wrapper (optional, default, a pipe's input side…) holds, if `schema` is one. */
function innerOf(schema: Schema): Schema | undefined {
  const def = definitionOf(schema);
  if (WRAPPERS.has(def.type)) return def.innerType;
  if (def.type === 'pipe') return def.in;
  if (def.type === 'lazy') return def.getter?.();
  return undefined;
}

function unwrapped(schema: Schema): Schema {
  let current = schema;
  for (let inner = innerOf(current); inner; inner = innerOf(current)) current = inner;
  return current;
}

/** The schema of the field at `path`, as declared (wrappers and all). */
function fieldAt(root: Schema, path: readonly PropertyKey[]): Schema | undefined {
  let schema: Schema | undefined = root;
  for (const key of path) {
    if (!schema) return undefined;
    const def = definitionOf(unwrapped(schema));
    if (def.type === 'object') schema = def.shape?.[String(key)];
    else if (def.type === 'array') schema = typeof key === 'number' ? def.element : undefined;
    else if (def.type === 'tuple') schema = typeof key === 'number' ? def.items?.[key] : undefined;
    else if (def.type === 'record') schema = def.valueType;
    else return undefined;
  }
  return schema;
}

function shapeOf(schema: Schema): Record<string, Schema> | undefined {
  const def = definitionOf(unwrapped(schema));
  return def.type === 'object' ? def.shape : undefined;
}

/**
 * A short description as a parenthesis ("e.g. tavily", "0 = just look"), else nothing (nor for
 * one with a parenthesis of its own).
 */
function hintOf(schema: Schema | undefined): string {
  let description: string | undefined;
  for (let s = schema; s && !description; s = innerOf(s)) description = z.globalRegistry.get(s)?.description;
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
 */
function allowedBy(schema: Schema, guards = false): string | undefined {
  const def = definitionOf(schema);
  if (def.type === 'nullable') {
    const inner = def.innerType && allowedBy(def.innerType, guards);
    return inner && `${inner} or null`;
  }
  const inner = innerOf(schema);
  if (inner) return allowedBy(inner, guards);
  switch (def.type) {
    case 'string':
      return stringAllowed(def, guards);
    case 'number':
      return numberAllowed(def);
    case 'boolean':
      return 'true or false';
    case 'null':
      return 'null';
    case 'enum':
      return choices(Object.values(def.entries ?? {}));
    case 'literal':
      return choices(def.values ?? []);
    case 'array':
      return arrayAllowed(def);
    case 'object':
    case 'record':
      return 'a JSON object';
    case 'union': {
      const each = (def.options ?? []).map((option) => allowedBy(option, guards));
      return each.length > 0 && each.every(Boolean) ? orList(each as string[]) : undefined;
    }
    default:
      return undefined;
  }
}

interface Bounds {
  min?: number;
  minInclusive: boolean;
  max?: number;
  maxInclusive: boolean;
  whole: boolean;
  minLength?: number;
  maxLength?: number;
  length?: number;
  format?: string;
}

function boundsOf(def: Definition): Bounds {
  const bounds: Bounds = { minInclusive: true, maxInclusive: true, whole: false, format: def.format };
  for (const { _zod } of def.checks ?? []) {
    const check = _zod.def;
    if (check.check === 'greater_than') {
      bounds.min = Number(check.value);
      bounds.minInclusive = check.inclusive !== false;
    } else if (check.check === 'less_than') {
      bounds.max = Number(check.value);
      bounds.maxInclusive = check.inclusive !== false;
    } else if (check.check === 'number_format') bounds.whole = !/^float/.test(check.format ?? '');
    else if (check.check === 'min_length') bounds.minLength = check.minimum;
    else if (check.check === 'max_length') bounds.maxLength = check.maximum;
    else if (check.check === 'length_equals') bounds.length = check.length;
    else if (check.check === 'string_format') bounds.format ??= check.format;
  }
  return bounds;
}

function stringAllowed(def: Definition, guards: boolean): string {
  const bounds = boundsOf(def);
  const format = formatted(bounds.format);
  if (format) return format;
  const max =
    bounds.maxLength !== undefined && (guards || bounds.maxLength < SIZE_GUARD)
      ? bounds.maxLength
      : undefined;
  return counted('string', 'characters', bounds.minLength, max, bounds.length);
}

function arrayAllowed(def: Definition): string {
  const { minLength, maxLength, length } = boundsOf(def);
  return counted('list', elementsOf(def.element), minLength, maxLength, length);
}

/** "a string of 2 to 32 characters", "a non-empty list of strings", "a list of at most 20 strings". */
function counted(
  noun: 'string' | 'list',
  unit: string,
  min: number | undefined,
  max: number | undefined,
  exact: number | undefined,
): string {
  if (exact !== undefined) return `a ${noun} of exactly ${exact} ${unit}`;
  if (min !== undefined && min > 1) {
    return max !== undefined
      ? `a ${noun} of ${min} to ${max} ${unit}`
      : `a ${noun} of at least ${min} ${unit}`;
  }
  const start = min === 1 ? `a non-empty ${noun}` : `a ${noun}`;
  if (max !== undefined) return `${start} of at most ${max} ${unit}`;
  return noun === 'list' ? `${start} of ${unit}` : start;
}

function elementsOf(element: Schema | undefined): string {
  if (!element) return 'items';
  const def = definitionOf(unwrapped(element));
  switch (def.type) {
    case 'string':
      return 'strings';
    case 'number':
      return boundsOf(def).whole ? 'whole numbers' : 'numbers';
    case 'boolean':
      return 'true or false values';
    case 'object':
      return 'objects';
    default:
      return 'items';
  }
}

function numberAllowed(def: Definition): string {
  const { min, max, minInclusive, maxInclusive, whole } = boundsOf(def);
  const kind = whole ? 'a whole number' : 'a number';
  if (min !== undefined && max !== undefined && minInclusive && maxInclusive)
    return `${kind} from ${min} to ${max}`;
  const parts = [
    ...(min === undefined ? [] : [minInclusive ? `at least ${min}` : `greater than ${min}`]),
    ...(max === undefined ? [] : [maxInclusive ? `at most ${max}` : `less than ${max}`]),
  ];
  if (parts.length === 0) return kind;
  return parts.length === 1 && parts[0]?.startsWith('at ')
    ? `${kind} of ${parts[0]}`
    : `${kind} ${parts.join(' and ')}`;
}

const FORMATS: Record<string, string> = {
  url: 'a URL',
  email: 'an email address',
  uuid: 'a UUID',
  guid: 'a UUID',
  datetime: 'a date and time such as 2026-01-15T09:30:00Z',
  date: 'a date such as 2026-01-15',
  time: 'a time such as 09:30:00',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  base64: 'base64 text',
  base64url: 'base64url text',
};

function formatted(format: string | undefined): string | undefined {
  return format === undefined ? undefined : FORMATS[format];
}

function expectedType(expected: string): string {
  switch (expected) {
    case 'int':
      return 'a whole number';
    case 'boolean':
      return 'true or false';
    case 'array':
      return 'a list';
    case 'object':
    case 'record':
      return 'a JSON object';
    default:
      return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
  }
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
