// The kinds of billed call GATEWAY_CONFIRM names: the setting's words, read here.

/** The kinds of billed call GATEWAY_CONFIRM can ask the user about. */
export const CONFIRM_KINDS = ['video', 'speech', 'transcription', 'chat'] as const;
export type ConfirmKind = (typeof CONFIRM_KINDS)[number];
/** What GATEWAY_CONFIRM accepts: the kinds, `audio` (speech and transcription) and `all`. */
export const CONFIRM_CHOICES: readonly string[] = [...CONFIRM_KINDS, 'audio', 'all'];

export function confirmKinds(given: readonly string[]): ConfirmKind[] {
  const kinds = new Set<ConfirmKind>();
  for (const choice of given.map((g) => g.toLowerCase())) {
    if (choice === 'all') for (const kind of CONFIRM_KINDS) kinds.add(kind);
    else if (choice === 'audio') kinds.add('speech').add('transcription');
    else if ((CONFIRM_KINDS as readonly string[]).includes(choice)) kinds.add(choice as ConfirmKind);
  }
  return [...kinds];
}
