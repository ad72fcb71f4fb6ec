// Writes dist/THIRD-PARTY-NOTICES.md: the bundle carries code of the packages below, so the
// package ships their names, versions and license texts (the packages themselves are not
// installed with it; only undici and pg, which stay external, are).
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The package directories (`node_modules/<name>` or `node_modules/@scope/<name>`) a bundle used. */
function bundledPackages(metafile) {
  const dirs = new Set();
  for (const output of Object.values(metafile.outputs)) {
    for (const input of Object.keys(output.inputs)) {
      const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input.replaceAll('\\', '/'));
      if (match) dirs.add(match[1]);
    }
  }
  return [...dirs].sort();
}

function licenseText(dir) {
  const file = readdirSync(dir).find((name) => /^(licen[cs]e|copying)(\.|$)/i.test(name));
  return file ? readFileSync(join(dir, file), 'utf8').trim() : undefined;
}

export async function writeThirdPartyNotices(metafile, outfile) {
  const sections = bundledPackages(metafile).map((dir) => {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const text = licenseText(dir);
    if (!text) throw new Error(`no license file in ${dir}: the notice for ${pkg.name} cannot be written`);
    return `## ${pkg.name} ${pkg.version} (${pkg.license})\n\n\`\`\`\n${text}\n\`\`\``;
  });
  const intro =
    '# Third-party notices\n\nThe files in dist/ include code from the packages below, under these licenses.';
  await writeFile(outfile, `${intro}\n\n${sections.join('\n\n')}\n`);
}
