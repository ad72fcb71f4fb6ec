// GATEWAY_PRICES: what a model's calls cost, so the ledger can estimate spending and enforce a
// cost limit. The gateway reports amounts (video seconds, characters, audio seconds, tokens), not
// money; the user's price list turns one into the other.
//
//   prices := entry ("," entry)*
//   entry  := [kind ":"] model "=" price "/" unit
//   model  := a model id, where * stands for any characters (`openai/*`, or `*` for every model)
//   unit   := call | second | minute | char | 1k-chars | 1m-chars | token | 1k-tokens | 1m-tokens
//
// e.g. `xai/grok-imagine-video=0.05/second,openai/tts-1=0.015/1k-chars,chat:*=0.50/1m-tokens`.
// A price applies to a call when its model matches and its unit measures what the call's kind
// is billed by (seconds: video and transcription; chars: speech; tokens: chat; call: any kind);
// `kind:` narrows it to one kind. When several apply, the one naming the model most exactly (the
// most characters other than *) wins, then the one written first.

import { BILLED_KINDS, type BilledKind, isBilledKind, MEASURE, type Measure } from './billed-kinds.js';
import type { Parsed } from './limits.js';

export interface Price {
  kind?: BilledKind;
  /** The model pattern as written, e.g. `openai/*`. */
  model: string;
  /** Cost per `per` of `measure`. */
  price: number;
  measure: Measure;
  per: number;
  /** As written, e.g. `openai/tts-1=0.015/1k-chars`. */
  text: string;
}

const UNITS: Readonly<Record<string, { measure: Measure; per: number }>> = {
  call: { measure: 'calls', per: 1 },
  second: { measure: 'seconds', per: 1 },
  minute: { measure: 'seconds', per: 60 },
  char: { measure: 'chars', per: 1 },
  '1k-chars': { measure: 'chars', per: 1_000 },
  '1m-chars': { measure: 'chars', per: 1_000_000 },
  token: { measure: 'tokens', per: 1 },
  '1k-tokens': { measure: 'tokens', per: 1_000 },
  '1m-tokens': { measure: 'tokens', per: 1_000_000 },
};
const UNIT_NAMES = Object.keys(UNITS).join(', ');
const ENTRY = /^(?:([a-z]+):)?([^\s=,]+)\s*=\s*([0-9]*\.?[0-9]+)\s*\/\s*([a-z0-9-]+)$/i;
const SHAPE = 'each price is [kind:]model=price/unit, e.g. openai/tts-1=0.015/1k-chars';

export function parsePrices(text: string): Parsed<Price[]> {
  const prices: Price[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const match = ENTRY.exec(entry);
    if (!match) return { ok: false, error: `"${entry}" is not a price: ${SHAPE}` };
    const [, kind, model = '', amount = '', unitName = ''] = match;
    const unit = UNITS[unitName.toLowerCase()] ?? UNITS[unitName.toLowerCase().replace(/s$/, '')];
    if (!unit) return { ok: false, error: `"${entry}": unknown unit ${unitName}; units are ${UNIT_NAMES}` };
    if (kind !== undefined && !isBilledKind(kind.toLowerCase()))
      return { ok: false, error: `"${entry}": unknown kind ${kind}; kinds are ${BILLED_KINDS.join(', ')}` };
    const scoped = kind?.toLowerCase() as BilledKind | undefined;
    if (unit.measure !== 'calls' && scoped && MEASURE[scoped] !== unit.measure)
      return { ok: false, error: `"${entry}": ${scoped} is not billed per ${unitName}` };
    prices.push({
      ...(scoped ? { kind: scoped } : {}),
      model,
      price: Number(amount),
      ...unit,
      text: entry,
    });
  }
  return { ok: true, value: prices };
}
