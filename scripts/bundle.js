// Bundles src/bq.ts (oclif, the commands index, the hooks) into dist/bq.js so that a start loads
// few modules. Code bq imports lazily (a broker adapter and its SDK, the schema registry, the
// prompts) becomes its own chunk under dist/chunks/ and is read only by the commands that need it.
import {build} from 'esbuild'
import {writeFileSync} from 'node:fs'
import path from 'node:path'

// tsc has just compiled the sources to dist/ (npm run build): the generator runs from there.
const {metaSchemaValidatorCode} = await import('../dist/lib/schema/meta-schema-code.js')

// Only what cannot be bundled stays outside: better-sqlite3 loads its compiled addon through a
// path it works out at run time, and oclif loads its plugins (and, from TypeScript sources, a
// tsconfig loader) by package name itself. Everything else, the broker SDKs included, is bundled:
// a bundled SDK is one module to read instead of hundreds of small CommonJS files to resolve and
// wrap, which costs 0.1-0.25 CPU s at every start of bq that touches Redis, SQS, Kafka or Service
// Bus (measured with 10 starts each; docs/testing.md). Commands still load an SDK only when they need it: the adapter that
// imports it is loaded lazily, so the SDK lands in that adapter's chunk.
const externalPackages = [
  'better-sqlite3', '@oclif/plugin-*',
  'typescript', 'ts-node', 'tsx',
  // optional native speed-ups of ws, not installed: ws falls back to JavaScript without them
  'bufferutil', 'utf-8-validate',
]

const result = await build({
  entryPoints: {bq: 'src/bq.ts'},
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: externalPackages,
  // oclif and its dependencies are CommonJS: give them the require they expect.
  banner: {js: "import {createRequire as bqCreateRequire} from 'node:module'; const require = bqCreateRequire(import.meta.url);"},
  // Less source for V8 to read at every start. Identifiers keep their names (stack traces,
  // profiles, oclif's class names) without esbuild's keepNames, whose helper renames every
  // closure each time it is created: a third of validate's time per message.
  plugins: [precompiledMetaSchema()],
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  metafile: true,
})

// Which packages each output file holds, for the start-cost test (a bundled package is never
// imported from node_modules, so only this says which command loads it). Not shipped.
const packagesByChunk = {}
for (const [output, {inputs}] of Object.entries(result.metafile.outputs)) {
  const names = new Set(Object.keys(inputs).flatMap((input) => input.match(/node_modules\/((@[^/]+\/)?[^/]+)/)?.[1] ?? []))
  packagesByChunk[output] = [...names].sort()
}
writeFileSync('dist/bundle-packages.json', JSON.stringify(packagesByChunk, null, 1) + '\n')

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
