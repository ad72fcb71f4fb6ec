// Reading doctor's text report: one check a line, marked ✓ ✗ ! or ·.

/** The check line that mentions `what`. */
export const lineFor = (stdout: string, what: RegExp): string =>
  stdout.split('\n').find((l) => /^[✓✗!·] /.test(l) && what.test(l)) ?? '';

/** The lines of the key and the models (what needs a gateway, before the file lines). */
export const MODEL_LINES = [
  /API key/,
  /Web search/,
  /Web fetch/,
  /Chat/,
  /Page questions/,
  /Speech/,
  /Transcription/,
  /Video/,
];
