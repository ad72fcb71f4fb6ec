/** Types of server-json.mjs, for the tests that import it. */
export const SERVER_JSON: string;
export function differences(
  pkg?: Record<string, unknown>,
  server?: Record<string, unknown>,
): [path: string, expected: unknown, actual: unknown][];
export function schemaErrors(server?: Record<string, unknown>): string[];
