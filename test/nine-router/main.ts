// `npm run real-gateway`: the real gateway with its fake upstreams, for trying the server by hand.
// Prints where it listens and the key, and stops (by PID) on Ctrl-C.
import { startTestGateway } from './start.js';

const gateway = await startTestGateway();
console.log(`9router ${gateway.version} at ${gateway.url} (pid ${gateway.pid})`);
console.log(`GATEWAY_BASE_URL=${gateway.url} GATEWAY_API_KEY=${gateway.apiKey}`);
console.log(
  `GATEWAY_ALLOW_PRIVATE_URLS=${new URL(gateway.upstreamUrl).host}  # finished videos are served here`,
);
console.log(`what reached the fake upstreams: ${gateway.upstreamUrl}/__journal`);
console.log(`gateway log: ${gateway.logFile}`);
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void gateway.stop().then(() => process.exit(0));
  });
}
