import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { type Era, MODERN } from '../../harness/eras.js';
import { type RawServer, spawnServer } from '../../harness/harness.js';
import { scaled } from '../../harness/time.js';
import { ENVELOPE } from './json-rpc-lines.js';

/** One line the server wrote to stdout, parsed. */
export interface Answer {
  id?: string | number;
  result?: unknown;
  error?: { code: number; message: string };
}

/**
 * The built server spawned with raw pipes: lines go in as written, and every stdout line is
 * checked to be a JSON-RPC message (stdout must carry nothing else).
 */
export class RawSession {
  private read = 0;
  readonly answers: Answer[] = [];

  private constructor(readonly server: RawServer) {}

  /**
   * Spawns the server and opens the connection in `era`: `initialize` (2025), or `server/discover`
   * with the per-request envelope (2026-07-28, whose requests must each carry it: see ENVELOPE).
   */
  static async start(env: Record<string, string>, era: Era = '2025-era'): Promise<RawSession> {
    const session = new RawSession(spawnServer({ GATEWAY_LOG_LEVEL: 'warn', ...env }));
    session.server.child.stdin.on('error', () => undefined);
    if (era === MODERN) {
      session.send({
        jsonrpc: '2.0',
        id: 'discover',
        method: 'server/discover',
        params: { _meta: ENVELOPE },
      });
      await session.answerTo('discover');
      return session;
    }
    session.send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    await session.answerTo('init');
    session.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return session;
  }

  send(message: unknown): void {
    this.writeLine(JSON.stringify(message));
  }

  writeLine(line: string): void {
    this.server.child.stdin.write(`${line}\n`);
  }

  /** Parses new stdout lines; throws on anything that is not a JSON-RPC message. */
  collect(): Answer[] {
    const text = this.server.stdout();
    const end = text.lastIndexOf('\n') + 1;
    const fresh: Answer[] = [];
    for (const line of text.slice(this.read, end).split('\n')) {
      if (line === '') continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new Error(`stdout carried a line that is not JSON: ${line.slice(0, 200)}`);
      }
      if (!JSONRPCMessageSchema.safeParse(parsed).success) {
        throw new Error(`stdout carried JSON that is not a JSON-RPC message: ${line.slice(0, 200)}`);
      }
      fresh.push(parsed as Answer);
    }
    this.read = end;
    this.answers.push(...fresh);
    return fresh;
  }

  /** Waits (bounded) until every id has been answered; returns the answers by id. */
  async answersTo(ids: (string | number)[], timeoutMs = 15_000): Promise<Map<string | number, Answer>> {
    const deadline = Date.now() + scaled(timeoutMs);
    const found = new Map<string | number, Answer>();
    for (;;) {
      this.collect();
      for (const a of this.answers) if (a.id !== undefined && ids.includes(a.id)) found.set(a.id, a);
      if (found.size === ids.length) return found;
      if (this.server.child.exitCode !== null) throw new Error(`the server exited: ${this.server.stderr()}`);
      if (Date.now() > deadline) {
        const missing = ids.filter((id) => !found.has(id));
        throw new Error(`no answer within ${scaled(timeoutMs)} ms to ${JSON.stringify(missing)}`);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  async answerTo(id: string | number): Promise<Answer> {
    return (await this.answersTo([id])).get(id) as Answer;
  }

  /** Answers without an id (parse errors, invalid requests) seen so far. */
  anonymousErrors(): Answer[] {
    this.collect();
    return this.answers.filter((a) => a.id === undefined && a.error !== undefined);
  }

  async close(): Promise<number | null> {
    this.server.child.stdin.end();
    return this.server.exited;
  }
}
