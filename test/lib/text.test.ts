import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displayDate, formatCount, oneLine, withoutControlChars } from '../../src/lib/text.js';

describe('text helpers', () => {
  it('groups thousands without locale data', () => {
    expect(formatCount(0)).toBe('0');
    expect(formatCount(999)).toBe('999');
    expect(formatCount(1000)).toBe('1,000');
    expect(formatCount(60_013)).toBe('60,013');
    expect(formatCount(1_234_567)).toBe('1,234,567');
    expect(formatCount(-4096)).toBe('-4,096');
  });

  it('flattens and bounds one-line text, and strips control characters', () => {
    expect(oneLine('a\n  b\tc')).toBe('a b c');
    expect(oneLine('x'.repeat(10), 5)).toBe('xxxx…');
    expect(withoutControlChars('a\u0000b\u001fc\u007f')).toBe('a b c');
  });

  it('leaves tidy text as it is and tidies every other kind of whitespace', () => {
    const tidy = (text: string) => text.replace(/\s+/g, ' ').trim();
    const spaces = [' ', '  ', '\t', '\n', '\r\n', '\u00a0', '\u2028', '\u3000', '\ufeff', '\v'];
    const piece = fc.oneof(fc.constantFrom(...spaces), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        expect(oneLine(text, 10_000)).toBe(tidy(text));
      }),
      { seed: 11, numRuns: 3_000 },
    );
    expect(oneLine(' a b ')).toBe('a b');
  });

  it('shows every provider date format whole, calendar dates as YYYY-MM-DD', () => {
    const cases: [string, string][] = [
      ['2026-01-15', '2026-01-15'],
      ['2026-01-15T09:30:00.000Z', '2026-01-15'],
      ['2026-01-15T08:00:00', '2026-01-15'],
      ['Jan 15, 2026', '2026-01-15'],
      ['January 15, 2026', '2026-01-15'],
      ['15 Jan 2026', '2026-01-15'],
      ['Dec 1st, 2025', '2025-12-01'],
      ['2 days ago', '2 days ago'],
      ['3 hours ago', '3 hours ago'],
      ['Jan 2026 maybe? not a date at all, and long', 'Jan 2026 maybe? not a date at all, and …'],
    ];
    for (const [raw, shown] of cases) expect(displayDate(raw), raw).toBe(shown);
  });
});
