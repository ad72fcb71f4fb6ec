import { describe, expect, it } from 'vitest';
import { formatCount, oneLine, withoutControlChars } from '../../src/tools/support/text.js';

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
});
