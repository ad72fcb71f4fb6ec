// One line of the doctor's report, and the report itself.

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface Check {
  id: string;
  status: CheckStatus;
  /** Required checks decide the exit status; the others are warnings at worst. */
  required: boolean;
  message: string;
  fix: string | null;
}

export interface DoctorReport {
  ok: boolean;
  version: string;
  base_url: string;
  api_key: 'set' | 'not set';
  checks: Check[];
}

/** The error's message without the "The service answered 401:" lead the check line already says. */
export function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^The service answered \d+: /, '');
}

export function ok(id: string, required: boolean, message: string): Check {
  return { id, status: 'ok', required, message, fix: null };
}

export function warn(id: string, required: boolean, message: string, fix: string): Check {
  return { id, status: 'warn', required, message, fix };
}

export function fail(id: string, required: boolean, message: string, fix: string): Check {
  return { id, status: 'fail', required, message, fix };
}

export function skipped(id: string, label: string, required: boolean, why: string): Check {
  return { id, status: 'skip', required, message: `${label}: not checked (${why})`, fix: null };
}
