// Where doctor points a user who has no gateway: the guide the package ships (docs/gateway.md),
// at its installed path, so it can be opened without a network or a browser.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Said when the guide is not beside the running code (a bundle copied elsewhere). */
export const GUIDE_ELSEWHERE = 'docs/gateway.md in the gateway-tools-mcp package';

/**
 * The guide's path when it is there, else where to find it. `candidate`: docs/gateway.md as the
 * entry point sees it (`../docs/gateway.md` from dist/cli.js, the same from src/cli.ts).
 */
export function gatewayGuide(candidate: URL | undefined): string {
  if (candidate?.protocol === 'file:') {
    const path = fileURLToPath(candidate);
    if (existsSync(path)) return path;
  }
  return GUIDE_ELSEWHERE;
}
