// A view's self-contained HTML. The bundle carries the views built by scripts/build.mjs (in the
// chunk this module becomes, loaded on the first read); run from source, they are built on first
// use with the same code (scripts/build-views.mjs).

/** The views as JSON, put in by the build. */
declare const __GATEWAY_VIEWS__: string | undefined;
const PREBUILT: Record<string, string> | undefined =
  typeof __GATEWAY_VIEWS__ === 'string' ? JSON.parse(__GATEWAY_VIEWS__) : undefined;

let fromSource: Promise<Record<string, string>> | undefined;

export async function viewHtml(name: string): Promise<string> {
  const views = PREBUILT ?? (await builtFromSource());
  const html = views[name];
  if (html === undefined) throw new Error(`no view named ${name}`);
  return html;
}

function builtFromSource(): Promise<Record<string, string>> {
  // A specifier the bundler does not follow: the bundle never carries the build code.
  const builder = `../../scripts/build-views.mjs`;
  fromSource ??= import(builder).then((module: { buildViews(): Promise<Record<string, string>> }) =>
    module.buildViews(),
  );
  return fromSource;
}
