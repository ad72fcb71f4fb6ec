// Node's built-in SQLite, loaded on the first use of the ledger (start-up does not pay for it).
// Node 22 announces the module with an ExperimentalWarning on stderr, which a user's terminal or
// client log would show at every start; that one warning is held back while the module loads.
// Node 24 and later print none.

type SqliteModule = typeof import('node:sqlite');

let loading: Promise<SqliteModule> | undefined;

export function loadSqlite(): Promise<SqliteModule> {
  loading ??= importQuietly();
  return loading;
}

async function importQuietly(): Promise<SqliteModule> {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const text = typeof warning === 'string' ? warning : warning.message;
    if (type === 'ExperimentalWarning' && text.startsWith('SQLite')) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return await import('node:sqlite');
  } finally {
    process.emitWarning = emitWarning;
  }
}
