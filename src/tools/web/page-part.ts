import { endWithinTokens, estimateTokens, TokenProfile } from '../../lib/tokens.js';
import { type Page, pageOf } from '../paging.js';
import type { CachedPage } from './page-cache.js';

/**
 * The most tokens one result holds, by the estimate (src/lib/tokens.ts): Claude Code refuses a
 * tool result over 25,000 tokens, whatever it was asked.
 */
export const RESULT_TOKENS = 25_000;
/**
 * What a result is cut to by the estimate: room below RESULT_TOKENS for text the estimate prices
 * low (paths and ids, as little as 0.95 of o200k_base's count), and for tokenizers that count more.
 */
export const CUT_TOKENS = 23_000;
/** What a result's own words take besides the page's text, its title and its URLs (one form). */
const FRAME_TOKENS = 400;

export interface PagePart extends Page {
  /** About how many tokens the page holds after this part (an estimate). */
  remaining_tokens: number;
  /** The part was cut shorter than asked, to fit RESULT_TOKENS. */
  clamped: boolean;
}

const profiles = new WeakMap<CachedPage, TokenProfile>();

/** The estimated tokens of the page after `from`, worked out once per page. */
export function tokensAfter(page: CachedPage, from: number): number {
  let profile = profiles.get(page);
  if (!profile) {
    profile = new TokenProfile(page.text);
    profiles.set(page, profile);
  }
  return profile.rest(from);
}

/** The most tokens of the page's text a part may hold: a result less its frame, title and URLs. */
export function partCap(page: CachedPage): number {
  const frame = estimateTokens(`${page.title ?? ''} ${page.url} ${page.final_url ?? ''}`) * 2 + FRAME_TOKENS;
  return Math.max(CUT_TOKENS - frame, 1_000);
}

/**
 * The part of the page that starts at `start`: `max_tokens` tokens (estimated) when given, else
 * `max_length` characters, and never more than `cap` tokens.
 */
export function partOf(
  page: CachedPage,
  start: number,
  limits: { max_length: number; max_tokens?: number },
  cap = partCap(page),
): PagePart {
  const text = page.text;
  const budget = Math.min(limits.max_tokens ?? cap, cap);
  const askedEnd = limits.max_tokens ? text.length : Math.min(start + limits.max_length, text.length);
  const end = endWithinTokens(text, start, budget, askedEnd);
  const part = pageOf(text, start, Math.max(end - start, 1));
  return {
    ...part,
    remaining_tokens: tokensAfter(page, part.end_index),
    clamped: end < askedEnd && budget === cap,
  };
}
