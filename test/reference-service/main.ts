// Runs the reference service on its own (`npm run reference-service`), e.g. to point a client at
// it by hand: `--port N` or PORT (default 20128), key from REFERENCE_API_KEY (default ref-test-key).
import { DEFAULT_API_KEY, startReferenceService } from './index.js';

const DEFAULT_PORT = 20128;

function portFrom(argv: readonly string[], env: NodeJS.ProcessEnv): number {
  let raw: string | undefined = env.PORT;
  for (const [index, arg] of argv.entries()) {
    if (arg === '--port') raw = argv[index + 1];
    else if (arg.startsWith('--port=')) raw = arg.slice('--port='.length);
  }
  if (raw === undefined || raw === '') return DEFAULT_PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`reference service: invalid port: ${raw}`);
    process.exit(2);
  }
  return port;
}

async function main(): Promise<void> {
  const port = portFrom(process.argv.slice(2), process.env);
  const apiKey = process.env.REFERENCE_API_KEY || DEFAULT_API_KEY;
  const service = await startReferenceService({ host: '127.0.0.1', port, apiKey });
  process.stdout.write(`reference service listening on ${service.url} (key: ${service.apiKey})\n`);
  const stop = () => {
    void service.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(`reference service: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
