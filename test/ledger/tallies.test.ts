// The running tallies the limit check reads against the calls themselves: a long seeded sequence
// of records (out of order, repeated, ends before begins, other sessions, a day forgotten) and a
// clock moving both ways, with every kind and cost over the hour, the day and the session compared
// with the evaluation that goes over every call.

import { describe, expect, it } from 'vitest';
import { limitUse, type View } from '../../src/ledger/evaluate.js';
import { BILLED_KINDS, PERIODS } from '../../src/ledger/kinds.js';
import type { Limit } from '../../src/ledger/limits.js';
import { parsePrices } from '../../src/ledger/prices.js';
import { LedgerIndex } from '../../src/ledger/reader.js';
import type { BeginRecord, EndRecord, Outcome } from '../../src/ledger/records.js';
import { Tallies } from '../../src/ledger/tallies.js';
import { tempDir } from '../harness/harness.js';

const HOUR = 3_600_000;
const START = Date.parse('2026-11-24T00:30:00.000Z');
const OUTCOMES: Outcome[] = ['accepted', 'refused', 'unknown', 'declined'];
const SESSION = 'own-session';
const YESTERDAY = '2026-11-23';
const TODAY = '2026-11-24';

/** A seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the running tallies', () => {
  it.each([1, 2, 3])(
    'agree with going over every call, for every kind and cost, as the clock moves (seed %i)',
    (seed) => {
      const next = random(seed);
      const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
      const prices = parsePrices('video:*=0.05/second,speech:*=0.015/1k-chars,search:*=0.005/call');
      if (!prices.ok) throw new Error(prices.error);
      const tallies = new Tallies(prices.value, SESSION);
      const index = new LedgerIndex(tempDir('gtm-tallies-'), () => {}, tallies);
      index.refresh([YESTERDAY, TODAY], (entry) => entry.begin?.session === SESSION); // follows two days, with no files
      const begun: BeginRecord[] = [];
      let now = START;
      let checks = 0;

      const compare = () => {
        const view: View = {
          entries: index.entries,
          stateOf: (entry) => entry.end?.outcome ?? 'pending',
          sessionId: SESSION,
          prices: prices.value,
          now,
        };
        for (const subject of [...BILLED_KINDS, 'cost'] as const) {
          for (const period of PERIODS) {
            const limit: Limit = { subject, max: 1e9, period, text: `${subject}=1e9/${period}` };
            const exact = limitUse(view, limit);
            const quick = tallies.of(subject, period, now);
            if (subject === 'cost') expect(quick.cost).toBeCloseTo(exact.used, 9);
            else expect(quick.calls).toBe(exact.used);
            checks++;
          }
        }
      };

      const begin = (id: string, at: number, session: string) => {
        const record: BeginRecord = {
          type: 'begin',
          id,
          at: new Date(at).toISOString(),
          pid: 1,
          host: 'h',
          session,
          kind: pick(BILLED_KINDS),
          tool: 't',
          model: 'm',
          hash: 'x',
          words: 'w',
          ...(next() < 0.5 ? { expected: Math.floor(next() * 20) } : {}),
          unit: 'calls',
        };
        begun.push(record);
        index.add(record, at < Date.parse(`${TODAY}T00:00:00.000Z`) ? YESTERDAY : TODAY);
      };

      // Other processes' calls from yesterday evening, then a long run of records.
      for (let i = 0; i < 5; i++) begin(`y${i}`, START - 2 * HOUR + i * 60_000, 'other');
      for (let step = 0; step < 1500; step++) {
        const roll = next();
        if (roll < 0.45) {
          // A begin, now or up to two hours back (another process's clock, a late read).
          begin(
            `c${step}`,
            now - (next() < 0.2 ? Math.floor(next() * 2 * HOUR) : 0),
            next() < 0.5 ? SESSION : 'other',
          );
        } else if (roll < 0.85 && begun.length > 0) {
          // An end (sometimes a second, or one read before its begin), with an amount.
          const begin = next() < 0.05 ? { id: `c${step + 1}` } : pick(begun);
          const end: EndRecord = {
            type: 'end',
            id: begin.id,
            at: new Date(now).toISOString(),
            outcome: pick(OUTCOMES),
            ...(next() < 0.7 ? { amount: Math.floor(next() * 3000) } : {}),
          };
          index.add(end, TODAY);
        } else if (roll < 0.9 && begun.length > 0) {
          index.add(pick(begun), TODAY); // read again (a file that shrank)
        } else {
          // The clock moves: mostly on, by up to 40 minutes; now and then back.
          now += next() < 0.1 ? -Math.floor(next() * HOUR) : Math.floor(next() * 40 * 60_000);
        }
        if (step % 10 === 0) compare();
      }
      // Yesterday stops being followed while its last calls are still within the day: they are
      // forgotten, but for this session's.
      now = START + HOUR;
      compare();
      const before = tallies.of('cost', 'day', now).calls;
      index.refresh([TODAY], (entry) => entry.begin?.session === SESSION);
      compare();
      expect(tallies.of('cost', 'day', now).calls).toBeLessThan(before);
      expect(checks).toBeGreaterThan(3000);
    },
  );
});
