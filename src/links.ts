// Where the project's documents are published. Messages for a person (doctor, --help, the demo)
// point here rather than at files in the installed package: an install made by npx lives in a
// cache folder nobody should have to find, and these pages are the ones the README links to.

/** The repository, as package.json's `repository` names it. */
export const REPOSITORY_URL = 'https://github.com/gateway-tools-mcp/gateway-tools-mcp';

/** A document of the repository on the web, optionally at one of its headings (`#quick-start`). */
export function docUrl(path: 'README.md' | `docs/${string}.md`, anchor?: string): string {
  const page = path === 'README.md' ? REPOSITORY_URL : `${REPOSITORY_URL}/blob/main/${path}`;
  return anchor ? `${page}#${anchor}` : page;
}

/** The guide from nothing to a working gateway (docs/gateway.md). */
export const GATEWAY_GUIDE_URL = docUrl('docs/gateway.md');
