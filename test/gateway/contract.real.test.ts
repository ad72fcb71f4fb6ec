// The reference service against the real gateway: the same raw requests to both, their statuses,
// the headers that matter and their bodies' shapes compared. A difference must be listed, with its
// reason, in test/contract/divergences.ts; a listed one that has gone away fails too.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { CONTRACT_CASES } from '../contract/catalogue.js';
import { compareObservations, type Divergence } from '../contract/compare.js';
import { DIVERGENCES } from '../contract/divergences.js';
import { observe, type Side } from '../contract/exchange.js';
import { Dashboard } from '../nine-router/dashboard.js';
import { type ReferenceService, startReferenceService } from '../reference-service/index.js';

const info = inject('realGateway');
const dashboard = Dashboard.from(info.url, info.dashboardCookie);
const real: Side = { name: 'real', url: info.url, apiKey: info.apiKey };
let service: ReferenceService;
let reference: Side;

beforeAll(async () => {
  service = await startReferenceService();
  reference = { name: 'reference', url: service.url, apiKey: service.apiKey };
});
afterAll(() => service?.close());
// Error cases lock the provider in the real gateway; the next case must find it open.
afterEach(async () => {
  await dashboard.clearCooldowns();
});

const describeDivergence = (d: Divergence) => `${d.path}: real ${d.real}, reference ${d.reference}`;

describe('the reference service answers like the real gateway', () => {
  it('lists divergences only for requests the suite sends', () => {
    const names = new Set(CONTRACT_CASES.map((c) => c.name));
    expect(names.size).toBe(CONTRACT_CASES.length);
    expect(DIVERGENCES.filter((d) => !names.has(d.request))).toEqual([]);
    for (const d of DIVERGENCES) expect(d.reason.trim(), `${d.request} ${d.path}`).not.toBe('');
  });

  for (const contractCase of CONTRACT_CASES) {
    it(contractCase.name, async () => {
      const realSeen = await observe(real, await contractCase.request(real));
      const referenceSeen = await observe(reference, await contractCase.request(reference));
      const found = compareObservations(realSeen, referenceSeen);
      const listed = DIVERGENCES.filter((d) => d.request === contractCase.name);
      const unlisted = found.filter((d) => !listed.some((l) => l.path === d.path)).map(describeDivergence);
      const gone = listed.filter((l) => !found.some((d) => d.path === l.path)).map((l) => l.path);
      expect({ unlisted, gone }).toEqual({ unlisted: [], gone: [] });
    });
  }
});
