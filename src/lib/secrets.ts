// Removing secrets from text. Two strengths: the exact secrets only (for what the gateway sends,
// where a page that documents `Authorization: Bearer ...` must stay intact), and the exact secrets
// plus anything shaped like a bearer token (for logs and error messages).
//
// Text is cleaned before it is cut anywhere: a cut through a secret would leave a part of it that
// no later scrub recognises.

export type Scrub = (text: string) => string;

/** Replaces every occurrence of each secret with ***. */
export function withoutSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('***');
  return out;
}

/** Builds a function that replaces every secret (and anything shaped like a bearer token) with ***. */
export function secretScrubber(secrets: readonly (string | undefined)[]): Scrub {
  const known = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4);
  return (text) => withoutSecrets(text, known).replace(/(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1***');
}
