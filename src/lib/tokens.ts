// How many tokens a text costs a model, estimated without a tokenizer (a real one's tables are
// megabytes; this is a few hundred bytes). The text is cut where a GPT-style tokenizer cuts it
// before merging (words with their leading space or sign, runs of up to three digits, runs of
// signs, runs of white space), and each piece is priced by a rule that errs high:
//   - a word of plain letters: 1 token per 5 letters, begun (1 per 2 when it looks random:
//     few vowels in more than five letters, or capitals inside it, as in base64 or ids);
//   - CJK and other wide characters: 0.8 token each; other letters (Cyrillic, Greek, accented,
//     Devanagari): 1 per 2; emoji and other astral characters: 2 each;
//   - signs: 1 per 2 (a run of one sign repeated, like a rule line or an ellipsis: 1 per 8);
//   - digits: 1 per run of up to three; white space: 1 per run.
// The sum is then taken 10 % higher, a margin for the pages no rule foresees. Checked against
// gpt-tokenizer's o200k_base on prose, code, markdown, HTML, Chinese, Japanese, Korean and Russian
// pages (test/lib/tokens.test.ts): 1.1 to 1.5 times the real count there.

const PIECE =
  /[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

const VOWELS = new Set([97, 101, 105, 111, 117, 121]);
/** How much higher than the rule's sum an estimate is. */
const MARGIN = 1.1;

/** The estimated tokens of text[from, to). */
export function estimateTokens(text: string, from = 0, to = text.length): number {
  let tokens = 0;
  scan(text, from, to, (cost) => {
    tokens += cost;
    return true;
  });
  return Math.ceil(tokens * MARGIN);
}

/**
 * Where a part that starts at `from` ends so that it holds at most `budget` tokens (estimated),
 * and at most `maxEnd`. Always past `from` when there is text, so paging moves on.
 */
export function endWithinTokens(text: string, from: number, budget: number, maxEnd = text.length): number {
  let left = budget / MARGIN;
  let end = from;
  scan(text, from, maxEnd, (cost, start, stop) => {
    if (cost <= left) {
      left -= cost;
      end = stop;
      return true;
    }
    // A first piece larger than the whole budget (a long run of one kind) is cut inside it, a
    // token short of its share; otherwise the part ends after the last whole piece.
    if (end === from) end = start + Math.floor(((stop - start) * Math.max(left - 1, 0)) / cost);
    return false;
  });
  if (end <= from && from < maxEnd) end = from + 1;
  if (end < maxEnd && isHighSurrogate(text.charCodeAt(end - 1)) && end - 1 > from) end -= 1;
  return end;
}

/** Calls `piece` with each piece's cost and bounds until it answers false. */
function scan(
  text: string,
  from: number,
  to: number,
  piece: (cost: number, start: number, stop: number) => boolean,
): void {
  const re = new RegExp(PIECE.source, PIECE.flags);
  re.lastIndex = from;
  let at = from;
  while (at < to) {
    const match = re.exec(text);
    const start = match && match.index < to ? match.index : to;
    // Whatever no pattern takes costs a token a character.
    if (start > at && !piece(start - at, at, start)) return;
    if (!match || match.index >= to) return;
    const stop = Math.min(match.index + match[0].length, to);
    if (stop === match.index) {
      re.lastIndex += 1;
      continue;
    }
    if (!piece(pieceCost(text, match.index, stop), match.index, stop)) return;
    at = stop;
  }
}

function pieceCost(text: string, from: number, to: number): number {
  const first = text.charCodeAt(from);
  if (first >= 48 && first <= 57) return 1;
  let letters = 0;
  let vowels = 0;
  let capitals = 0;
  let signs = 0;
  // Signs, priced run by run: a run of one sign repeated (a rule line, an ellipsis) is cheap.
  let signCost = 0;
  let run = 0;
  let runOf = -1;
  let wide = 0;
  let other = 0;
  let astral = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 128) {
      const lower = c | 32;
      if (lower >= 97 && lower <= 122) {
        letters++;
        if (c < 97) capitals++;
        if (VOWELS.has(lower)) vowels++;
      } else if (c > 32 && c !== 127) {
        signs++;
        if (c === runOf) run++;
        else {
          signCost += runCost(run);
          run = 1;
          runOf = c;
        }
      }
    } else if (isHighSurrogate(c)) {
      astral++;
      i++;
    } else if (c >= 0x2e80) wide++;
    else if (c > 0xa0) other++;
  }
  let cost = Math.ceil(wide * 0.8 + other / 2) + astral * 2;
  if (letters > 0) {
    const random =
      (letters > 5 && vowels * 4 < letters) || (letters > 3 && capitals > 1 && capitals < letters);
    cost += Math.ceil(letters / (random ? 2 : 5)) + (signs > 1 ? Math.ceil((signs - 1) / 2) : 0);
  } else if (signs > 0) {
    cost += Math.ceil(signCost + runCost(run));
  }
  return Math.max(cost, 1);
}

function runCost(length: number): number {
  return length === 0 ? 0 : length === 1 ? 0.5 : Math.ceil(length / 8);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * A text's estimate by blocks, made once, so the tokens after any offset are found without
 * scanning the rest again (a long page is paged many times). A piece cut by a block's edge is
 * priced twice, in part: the sum errs high, a little.
 */
export class TokenProfile {
  private static readonly BLOCK = 16_384;
  /** after[i]: the tokens from block i's start to the end. */
  private readonly after: Float64Array;

  constructor(private readonly text: string) {
    const blocks = Math.ceil(text.length / TokenProfile.BLOCK);
    this.after = new Float64Array(blocks + 1);
    for (let i = blocks - 1; i >= 0; i--) {
      const from = i * TokenProfile.BLOCK;
      this.after[i] =
        (this.after[i + 1] ?? 0) +
        estimateTokens(text, from, Math.min(from + TokenProfile.BLOCK, text.length));
    }
  }

  /** The estimated tokens from `from` to the end. */
  rest(from: number): number {
    if (from >= this.text.length) return 0;
    const block = Math.ceil(from / TokenProfile.BLOCK);
    const edge = Math.min(block * TokenProfile.BLOCK, this.text.length);
    return estimateTokens(this.text, from, edge) + (this.after[block] ?? 0);
  }
}
