import fc from 'fast-check';

/**
 * Hostile building blocks for tool arguments: strings, numbers and arbitrary JSON that an agent
 * (or an attacker steering one) could send. Everything here is JSON-representable, because that
 * is all a real transport can deliver.
 */

/** Characters that break naive code: NUL, controls, bidi overrides, lone surrogates, emoji. */
export const WEIRD_CHARACTERS = [
  '\u0000',
  '\u0007',
  '\u001b[31m',
  '\r\n',
  '\t',
  '\u007f',
  '\u0085',
  '\u200b',
  '\u200f',
  '\u202e',
  '\u2028',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '\ud800',
  '\udc00',
  '\udbff\udfff',
  '😀',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  'e\u0301',
  'ﷺ',
  'العربية',
  '中文',
  '%00',
  '%2e%2e',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell-style placeholder, sent literally
  '${HOME}',
  '$(id)',
  '`id`',
  '<script>alert(1)</script>',
  '"},{"',
  '\\',
  '../',
] as const;

export const weirdCharacter = fc.constantFrom(...WEIRD_CHARACTERS);

/** Strings that look like numbers, booleans or nothing, for fields that expect something else. */
export const NUMBER_LIKE_STRINGS = [
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-0',
  '0x10',
  '1_000',
  '5',
  ' 5 ',
  '',
  ' ',
  'true',
  'null',
  'undefined',
] as const;

/** A short string mixing plain text with weird characters. */
export const mixedString = fc
  .array(fc.oneof(weirdCharacter, fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 4 })), {
    maxLength: 8,
  })
  .map((parts) => parts.join(''));

/** Very long strings, up to 1 MiB: the size is shrinkable, the content is cheap to build. */
export const hugeString = fc
  .tuple(fc.integer({ min: 4_097, max: 1_048_576 }), fc.constantFrom('A', 'é', '😀', '\u0000', '../'))
  .map(([length, unit]) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string(), weight: 120 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 80 },
  { arbitrary: mixedString, weight: 160 },
  { arbitrary: fc.constantFrom(...NUMBER_LIKE_STRINGS), weight: 40 },
  // Rare on purpose: a few dozen long (up to megabyte) arguments per run keep the suite fast.
  { arbitrary: hugeString, weight: 1 },
);

/** Numbers of every awkward kind, and things that are not numbers at all. */
export const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.integer({ min: -2, max: 120 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -1, 0.5, 1e-300, 1e308, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, -(2 ** 31)),
  fc.constantFrom(...NUMBER_LIKE_STRINGS),
  fc.constantFrom(null, true, false, [], {}, [1], { value: 1 }),
);

/** Any JSON value at all: the "wrong type" for every field. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 3 },
  { arbitrary: hostileString, weight: 1 },
  { arbitrary: hostileNumber, weight: 1 },
);

/** Keys a tool never declared, including ones that poison naive object merging. */
export const extraFields: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  // Cross-shrinking lets a counterexample lose its extras (shrink towards the first case, {}).
  { withCrossShrink: true },
  { arbitrary: fc.constant({}), weight: 6 },
  { arbitrary: fc.dictionary(fc.string({ maxLength: 12 }), anyJson, { maxKeys: 3 }), weight: 2 },
  {
    // Built by JSON.parse, as a transport would: "__proto__" becomes an own property.
    arbitrary: fc
      .constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty')
      .chain((key) =>
        anyJson.map((value) => JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(value ?? null)}}`)),
      ),
    weight: 1,
  },
);

/** What a real transport delivers: the JSON round trip of the arguments. */
export function overTheWire<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** A display form for counterexamples: long strings shortened, so failures stay readable. */
export function preview(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'string' && v.length > 120 ? `${v.slice(0, 60)}…(${v.length} chars)` : v,
  );
}
