/** What a fuzz run did, for its assertions and (with FUZZ_REPORT=1) a look at the messages. */
export interface FuzzStats {
  calls: number;
  succeeded: number;
  failed: number;
  protocolErrors: number;
  /** Failure messages by shape (quoted parts and numbers elided), with counts. */
  messages: Map<string, number>;
  longest: string;
  /** Files in the output directory, with their signature when first seen (never to change). */
  saved: Map<string, string>;
  /** Calls and milliseconds per tool, to see where the time goes. */
  perTool: Map<string, { calls: number; ms: number }>;
}

export function newStats(): FuzzStats {
  return {
    calls: 0,
    succeeded: 0,
    failed: 0,
    protocolErrors: 0,
    messages: new Map(),
    longest: '',
    saved: new Map(),
    perTool: new Map(),
  };
}

export function countCall(stats: FuzzStats, tool: string, ms: number): void {
  stats.calls++;
  const entry = stats.perTool.get(tool) ?? { calls: 0, ms: 0 };
  entry.calls++;
  entry.ms += ms;
  stats.perTool.set(tool, entry);
}

export function countFailure(stats: FuzzStats, tool: string, message: string): void {
  stats.failed++;
  if (message.length > stats.longest.length) stats.longest = message;
  const shape = `${tool}: ${message.replace(/"[^"]*"|\d+/g, '…').slice(0, 160)}`;
  stats.messages.set(shape, (stats.messages.get(shape) ?? 0) + 1);
}

export function summary(stats: FuzzStats): string {
  return (
    `${stats.calls} calls — ${stats.succeeded} succeeded, ${stats.failed} refused with a tool error, ` +
    `${stats.protocolErrors} refused at the protocol level (non-object arguments); ` +
    `${stats.messages.size} distinct error shapes, the longest ${stats.longest.length} characters`
  );
}

/** Per-tool timings and every distinct error shape, most frequent first. */
export function report(stats: FuzzStats): string {
  const tools = [...stats.perTool].map(
    ([name, t]) => `${JSON.stringify(name)}: ${t.calls} calls, ${t.ms} ms`,
  );
  const shapes = [...stats.messages].sort((a, b) => b[1] - a[1]).map(([m, n]) => `${n}\t${m}`);
  return [...tools, `longest error: ${stats.longest}`, ...shapes].join('\n');
}
