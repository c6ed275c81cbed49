import js from '@eslint/js'
import {createTypeScriptImportResolver} from 'eslint-import-resolver-typescript'
import importX from 'eslint-plugin-import-x'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {ignores: ['dist/', 'dist.tmp/', 'node_modules/', 'bench/tmp/', '.bq-test/']},
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {globals: {process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setImmediate: 'readonly', URL: 'readonly'}},
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_', varsIgnorePattern: '^_'}],
      'no-constant-condition': ['error', {checkLoops: false}],
    },
  },
  // No import cycles in bq's own code: a module that needs a piece of another one's importer gets
  // that piece moved to a module both can import (type-only imports count too).
  {
    files: ['src/**/*.ts'],
    plugins: {'import-x': importX},
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({project: 'tsconfig.json'})],
    },
    rules: {'import-x/no-cycle': ['error', {ignoreExternal: true}]},
  },
)
