// manifest.json of the MCP Bundle (.mcpb): what Claude Desktop shows and asks at install, and how
// it starts the server. The bundle holds the npm package as installed (package.json, dist/,
// node_modules/undici), so the host runs dist/cli.js with the Node.js it ships.

/** `${name}`: a variable the host substitutes when it starts the server. */
const hostVariable = (name) => `\${${name}}`;

/** `tools`: the server's own tools/list answer (name + description), so the listing never drifts. */
export function mcpbManifest(pkg, tools) {
  return {
    manifest_version: '0.3',
    name: pkg.name,
    display_name: 'Gateway Tools',
    version: pkg.version,
    description: pkg.description,
    long_description: [
      "Gives the assistant an AI gateway's capabilities as tools: web search and web fetch, video",
      'generation jobs, speech, transcription, and asking another model. It speaks to a',
      '9router-compatible gateway (by default http://127.0.0.1:20128) with your gateway key; nothing',
      'else leaves your machine. Saved files go to the output folder you choose; audio and images',
      'are read only from the input folder you choose.',
    ].join(' '),
    author: { name: 'gateway-tools-mcp contributors' },
    license: pkg.license,
    keywords: pkg.keywords,
    server: {
      type: 'node',
      entry_point: 'dist/cli.js',
      mcp_config: {
        command: 'node',
        args: [`${hostVariable('__dirname')}/dist/cli.js`],
        env: {
          GATEWAY_BASE_URL: hostVariable('user_config.base_url'),
          GATEWAY_API_KEY: hostVariable('user_config.api_key'),
          GATEWAY_OUTPUT_DIR: hostVariable('user_config.output_dir'),
          GATEWAY_INPUT_ROOTS: hostVariable('user_config.input_dir'),
        },
      },
    },
    tools: tools.map(({ name, description }) => ({ name, description: firstSentence(description) })),
    compatibility: {
      platforms: ['darwin', 'win32', 'linux'],
      runtimes: { node: pkg.engines.node },
    },
    user_config: {
      base_url: {
        type: 'string',
        title: 'Gateway URL',
        description: 'Where the gateway listens (9router: http://127.0.0.1:20128).',
        default: 'http://127.0.0.1:20128',
        required: true,
      },
      api_key: {
        type: 'string',
        title: 'Gateway API key',
        description: 'The key the gateway gave you; sent to the gateway only. Leave empty if it needs none.',
        sensitive: true,
        // An empty default, not none: an unset field would reach the server as the literal
        // placeholder, and the server would send that as the key.
        default: '',
        required: false,
      },
      output_dir: {
        type: 'directory',
        title: 'Output folder',
        description: 'Where speech, transcripts and downloaded videos are saved.',
        required: true,
      },
      input_dir: {
        type: 'directory',
        title: 'Input folder',
        description: 'The folder audio files (to transcribe) and images (for videos) may be read from.',
        required: true,
      },
    },
  };
}

function firstSentence(text) {
  const sentence = /^.*?[.!?](?=\s|$)/s.exec(text)?.[0] ?? text;
  return sentence.replace(/\s+/g, ' ').trim();
}
