// How GitHub names a heading's anchor, for checking the links messages and docs give.

/** The anchors of a markdown page's headings, as GitHub makes them (lower case, punctuation dropped, spaces to dashes). */
export function headingAnchors(markdown: string): string[] {
  const seen = new Map<string, number>();
  return markdown
    .replace(/^```[\s\S]*?^```/gm, '')
    .split('\n')
    .flatMap((line) => {
      const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
      if (heading === undefined) return [];
      const base = heading
        .replace(/`/g, '')
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-');
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      return [count === 0 ? base : `${base}-${count}`];
    });
}
