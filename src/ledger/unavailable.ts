// The one way the ledger says it cannot do its work: a billed call it cannot record is not sent,
// and the message says why and what to do.

/** The ledger cannot record a billed call, so the call is not sent: the message says why. */
export class LedgerUnavailable extends Error {
  override name = 'LedgerUnavailable';
}

/** An error's code (errno, SQLite or PostgreSQL), else its message. */
export function codeOf(error: unknown): string {
  const e = error as { code?: unknown; errcode?: unknown; errstr?: unknown };
  if (typeof e.errstr === 'string' && e.errstr) return e.errstr;
  if (typeof e.code === 'string' && e.code && e.code !== 'ERR_SQLITE_ERROR') return e.code;
  return error instanceof Error ? error.message : String(error);
}
