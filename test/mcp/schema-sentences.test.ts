import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checked } from '../../src/mcp/schema-sentences.js';

// The sentences for what the tools' schemas do not use (a strict object, unions, nullable values,
// formats, nested objects); the tools' own cases are tested through the server
// (test/e2e/argument-errors.test.ts).
function problems(schema: z.ZodType, value: unknown, under?: string): string {
  const result = checked(schema, value, under);
  if (result.success) throw new Error('the value was taken');
  return result.problems;
}

describe('schema sentences', () => {
  const strict = z.strictObject({ query: z.string(), limit: z.number().int().positive().optional() });

  it('names an unknown field of a strict object, with the fields it has', () => {
    expect(problems(strict, { query: 'q', qurey: 'q' })).toBe(
      'qurey is not a known field; the fields are query, limit',
    );
    expect(problems(strict, { query: 'q', a: 1, b: 2 })).toBe(
      'a or b are not known fields; the fields are query, limit',
    );
  });

  it('reads bounds that are not inclusive', () => {
    expect(problems(strict, { query: 'q', limit: 0 })).toBe(
      'limit must be a whole number greater than 0, not 0',
    );
    expect(problems(z.object({ ratio: z.number().gt(0).lt(1) }), { ratio: 1 })).toBe(
      'ratio must be a number greater than 0 and less than 1, not 1',
    );
  });

  it('lists the choices of a union and says when null is taken', () => {
    const schema = z.object({ id: z.union([z.string(), z.number().int()]), note: z.string().nullable() });
    expect(problems(schema, { id: true, note: 5 })).toBe(
      'id must be a string or a whole number, not true; note must be a string or null, not 5',
    );
  });

  it('names formats and nested fields by their path', () => {
    const schema = z.object({ links: z.array(z.object({ href: z.url(), at: z.iso.date() })) });
    expect(
      problems(schema, {
        links: [
          { href: 'nope', at: '2026-01-15' },
          { href: 'https://x.org', at: 'soon' },
        ],
      }),
    ).toBe(
      'links[0].href must be a URL, not "nope"; links[1].at must be a date such as 2026-01-15, not "soon"',
    );
  });

  it('keeps a sentence the schema writes itself, naming the field when the sentence does not', () => {
    const schema = z.object({
      domain: z.string().refine((d) => d.includes('.'), 'must be a domain such as github.com'),
      name: z.string().max(3, 'name must be at most 3 characters'),
    });
    expect(problems(schema, { domain: 'x', name: 'long' })).toBe(
      'domain: must be a domain such as github.com; name must be at most 3 characters',
    );
  });

  it('leaves out the field every path starts under, and counts problems past the first five', () => {
    const request = z.object({
      params: z.object({
        a: z.string(),
        b: z.string(),
        c: z.string(),
        d: z.string(),
        e: z.string(),
        f: z.string(),
        g: z.string(),
      }),
    });
    expect(problems(request, { params: {} }, 'params')).toBe(
      'a is required: a string; b is required: a string; c is required: a string; d is required: a string; e is required: a string; and 2 more',
    );
    expect(problems(request, {}, 'params')).toBe('params is required: a JSON object');
  });
});
