// Bundles src/bq.ts (oclif, the commands index, the hooks) into dist/bq.js so that a start loads
// one module. Packages a command loads only when it needs them stay outside the bundle and are
// imported from node_modules at that moment: the broker SDKs, ajv, inquirer, cli-table3, and
// the oclif plugins (oclif loads those itself). Code bq imports lazily (a broker adapter, the
// schema registry) becomes its own chunk under dist/chunks/.
import {build} from 'esbuild'
import path from 'node:path'

// tsc has just compiled the sources to dist/ (npm run build): the generator runs from there.
const {metaSchemaValidatorCode} = await import('../dist/lib/schema/meta-schema-code.js')

const lazyPackages = [
  '@aws-sdk/*', '@azure/*', 'amqplib', 'better-sqlite3', 'ioredis', 'kafkajs', 'rhea', 'ws',
  'ajv', 'ajv-formats', 'inquirer', 'cli-table3', 'cli-progress', '@oclif/plugin-*',
  // oclif reads a tsconfig with these only when run from TypeScript sources.
  'typescript', 'ts-node', 'tsx',
]

await build({
  entryPoints: {bq: 'src/bq.ts'},
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: lazyPackages,
  // oclif and its dependencies are CommonJS: give them the require they expect.
  banner: {js: "import {createRequire as bqCreateRequire} from 'node:module'; const require = bqCreateRequire(import.meta.url);"},
  // Less source for V8 to read at every start. Identifiers keep their names (stack traces,
  // profiles, oclif's class names) without esbuild's keepNames, whose helper renames every
  // closure each time it is created: a third of validate's time per message.
  plugins: [precompiledMetaSchema()],
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
})

/**
 * Puts draft-07's meta-schema validator, as ajv standalone code, in place of the placeholder
 * module src/lib/schema/precompiled-meta-schema.ts (which says why). The generated code is
 * CommonJS that requires ajv's small runtime helpers (external, from node_modules).
 */
function precompiledMetaSchema() {
  const placeholder = path.resolve('src/lib/schema/precompiled-meta-schema.ts')
  return {
    name: 'bq-precompiled-meta-schema',
    setup(build) {
      build.onLoad({filter: /precompiled-meta-schema\.ts$/}, (args) => {
        if (path.resolve(args.path) !== placeholder) return undefined
        return {contents: "import validate from 'bq-generated:draft-07-meta-schema'\nexport const precompiledMetaSchema = validate\n", loader: 'js'}
      })
      build.onResolve({filter: /^bq-generated:/}, (args) => ({path: args.path, namespace: 'bq-generated'}))
      build.onLoad({filter: /.*/, namespace: 'bq-generated'}, () => ({contents: metaSchemaValidatorCode(), loader: 'js', resolveDir: path.resolve('.')}))
    },
  }
}
