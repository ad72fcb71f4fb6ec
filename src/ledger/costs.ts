// What a call costs by GATEWAY_PRICES (config/prices.ts reads the setting): the price that applies
// to a kind and model, and the estimated cost of an amount.

import { type BilledKind, MEASURE } from '../config/billed-kinds.js';
import type { Price } from '../config/prices.js';
import type { TallyRow } from './sql.js';

/**
 * The prices found per price list, by kind and model: every record read costs a lookup, and a
 * ledger holds few models, so each is matched against the patterns once.
 */
const found = new WeakMap<readonly Price[], Map<string, Price | undefined>>();
const MAX_REMEMBERED = 1_000;

/** The price that applies to a call of this kind and model, if any. */
export function priceFor(prices: readonly Price[], kind: BilledKind, model: string): Price | undefined {
  if (prices.length === 0) return undefined;
  let known = found.get(prices);
  if (!known) {
    known = new Map();
    found.set(prices, known);
  }
  const key = `${kind} ${model}`;
  if (known.has(key)) return known.get(key);
  const price = matchPrice(prices, kind, model);
  if (known.size >= MAX_REMEMBERED) known.clear();
  known.set(key, price);
  return price;
}

function matchPrice(prices: readonly Price[], kind: BilledKind, model: string): Price | undefined {
  let best: Price | undefined;
  let bestScore = -1;
  for (const price of prices) {
    if (price.kind !== undefined && price.kind !== kind) continue;
    if (price.measure !== 'calls' && price.measure !== MEASURE[kind]) continue;
    if (!globMatches(price.model, model)) continue;
    const score = price.model.replaceAll('*', '').length * 2 + (price.kind ? 1 : 0);
    if (score > bestScore) [best, bestScore] = [price, score];
  }
  return best;
}

/**
 * A call's estimated cost; null when no price applies, or when the price is per unit and the
 * amount is not known.
 */
export function costOf(
  prices: readonly Price[],
  kind: BilledKind,
  model: string,
  amount: number | undefined,
): number | null {
  const price = priceFor(prices, kind, model);
  if (!price) return null;
  if (price.measure === 'calls') return price.price;
  return amount === undefined ? null : (price.price * amount) / price.per;
}

/**
 * The estimated cost of calls of one kind and model counted together, and how many of them have
 * none (no price applies, or a price per unit and no amount).
 */
export function groupCost(prices: readonly Price[], group: TallyRow): { cost: number; unpriced: number } {
  const price = priceFor(prices, group.kind, group.model);
  if (!price) return { cost: 0, unpriced: group.calls };
  if (price.measure === 'calls') return { cost: price.price * group.calls, unpriced: 0 };
  return { cost: (price.price * group.amount) / price.per, unpriced: group.unmeasured };
}

function globMatches(pattern: string, model: string): boolean {
  if (!pattern.includes('*')) return pattern.toLowerCase() === model.toLowerCase();
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 'i').test(model);
}
