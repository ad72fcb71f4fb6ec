/**
 * A problem with what the caller asked for (a path outside the roots, a file too big, a call the
 * user declined): its message is shown as it is. Thrown by the tools and everything they use.
 */
export class UserError extends Error {
  override name = 'UserError';
}
