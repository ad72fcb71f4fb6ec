// Input from a 2026-07-28 client, asked the only way that era allows: the request is answered
// input_required (a confirmation form, a roots listing), and the client sends it again with the
// answers and the state the server gave it. The state is signed (HMAC, ten minutes) and bound to
// the call: the tool and its exact arguments. Input is settled before the tool runs at all
// (call-inputs.ts), so a round never repeats anything a tool did. (A 2025-era client is asked by
// server-to-client requests while its call waits instead.)

import { createHash, createHmac, randomBytes } from 'node:crypto';
import {
  createRequestStateCodec,
  type InputRequest,
  type InputRequiredResult,
  type InputResponseView,
  inputRequired,
  inputResponse,
  type RequestStateCodec,
} from '@modelcontextprotocol/server';
import { perRuntime, type Runtime } from '../../runtime.js';
import { sharedKey } from '../../shared-state/signing-key.js';
import type { SharedStore } from '../../shared-state/tables.js';
import { spendConfirmation } from '../../shared-state/used-confirmations.js';
import type { RequestExtra } from '../server.js';

/** How long a state, and so a confirmation form, stays good: as long as a 2025-era one may take. */
export const ROUND_STATE_SECONDS = 600;

/** What one round of a call hands the next, signed: nothing in it is taken from the client unsigned. */
export interface RoundState {
  /** The call the state belongs to (callDigest): a state is never used for another call. */
  call: string;
  /** Names this flow: a confirmation it carries is used for one billed call only. */
  nonce: string;
  /** The client's roots (URIs), once listed. */
  roots?: string[];
  /** The confirmation asked for in the last round: what the user's answer approves. */
  asked?: string;
}

/** One round of a tools/call from a 2026-07-28 client. */
export class CallRound {
  readonly state: RoundState;

  constructor(
    call: string,
    given: RoundState | undefined,
    private readonly responses: Record<string, unknown> | undefined,
  ) {
    this.state = given?.call === call ? { ...given } : { call, nonce: randomBytes(9).toString('base64url') };
  }

  /** The client's answer to `key` in this round. */
  answer(key: string): InputResponseView {
    return inputResponse(this.responses, key);
  }

  /** The answer that ends this round: input_required, asking for `request` under `key`. */
  async ask(runtime: Runtime, key: string, request: InputRequest): Promise<InputRequiredResult> {
    return inputRequired({
      inputRequests: { [key]: request },
      requestState: await roundStates(runtime).codec.mint(this.state),
    });
  }
}

/** The round of a request, on a 2026-07-28 request; the state is the one the codec verified. */
export function callRound(extra: RequestExtra, name: string, args: unknown): CallRound {
  return new CallRound(
    callDigest(name, args),
    extra.mcpReq.requestState<RoundState>(),
    extra.mcpReq.inputResponses,
  );
}

/**
 * The signing of round states, and the record of used confirmations. With a ledger shared by a
 * fleet (GATEWAY_LEDGER_URL), the key is a random one kept in that database, so that every replica
 * sharing it takes the others' states with no secret handed out; otherwise it is derived from
 * GATEWAY_MCP_TOKEN when that is set (replicas with the same token take each other's states), else
 * random per process. A used confirmation is recorded in the ledger's database (shared-state/),
 * where every process that could take the same state looks: sent again, to any of them, it is
 * refused.
 */
export const roundStates = perRuntime((runtime) => {
  const store = () => runtime.ledger().database();
  let made: Promise<RequestStateCodec<RoundState>> | undefined;
  const codec = (): Promise<RequestStateCodec<RoundState>> => {
    made ??= signingKey(runtime, store).then((key) =>
      createRequestStateCodec<RoundState>({ key, ttlSeconds: ROUND_STATE_SECONDS }),
    );
    made.catch(() => {
      made = undefined; // a store that could not be read is asked again by the next round
    });
    return made;
  };
  return {
    codec: {
      mint: async (payload: RoundState) => (await codec()).mint(payload),
      verify: async (...args: Parameters<RequestStateCodec<RoundState>['verify']>) =>
        (await codec()).verify(...args),
    },
    /** Marks a flow's confirmation as used; false when some process used it already. */
    spend: (nonce: string): Promise<boolean> => spendConfirmation(store, nonce, ROUND_STATE_SECONDS * 1000),
  };
});

function signingKey(runtime: Runtime, store: SharedStore): Promise<Uint8Array> {
  const token = runtime.config.mcpToken;
  if (runtime.config.ledgerUrl) return sharedKey(store, 'round-state');
  return Promise.resolve(
    token ? createHmac('sha256', token).update('gateway-tools-mcp round state').digest() : randomBytes(32),
  );
}

/** A value's digest, its object keys sorted: the same call gives the same digest. */
export function callDigest(...parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts, sortedKeys)).digest('base64url');
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
