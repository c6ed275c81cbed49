/** The Python SDK's Redis wire samples (test/support/interop/README.md). */
import {readFileSync} from 'node:fs'
import path from 'node:path'

import {repoRoot} from './conformance.js'

const load = <T>(name: string): T => JSON.parse(readFileSync(path.join(repoRoot, 'test', 'support', 'interop', name), 'utf8')) as T

export const pythonSdk = load<{published: string[]; dlq: string[]}>('redis-python-sdk.json')
export const pythonRedriveBypass = load<{dlq_before: string[]; after_python_redrive_bypass_to_sandbox: string[]}>('redis-python-redrive-bypass.json')
