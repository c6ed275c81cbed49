import assert from 'node:assert/strict'
import {describe, test} from 'node:test'
import {Command} from 'ioredis'

import {encodeCommand} from '../../../src/lib/brokers/redis/scripts.js'

describe('encodeCommand', () => {
  test('writes exactly the bytes ioredis itself would send', () => {
    const cases: Array<Array<string | Buffer | number>> = [
      [],
      ['abc', 3, 'k1', Buffer.from('x'.repeat(300)), Buffer.alloc(0), '', 'é€😀', 0, 1234567890, Buffer.from([0, 0xff, 0x0d, 0x0a])],
      Array.from({length: 1500}, (_, i) => (i % 3 === 0 ? i : i % 3 === 1 ? Buffer.from(`{"n":${i}}`.repeat(1 + (i % 40))) : `key:${i}`)),
    ]
    for (const args of cases) {
      // ioredis turns numbers into strings when it builds a Command; so does the script call.
      const command = new Command('evalsha', args)
      assert.ok(Buffer.compare(Buffer.from(command.toWritable({})), encodeCommand('evalsha', command.args as Array<string | Buffer>)) === 0)
      assert.ok(Buffer.compare(Buffer.from(command.toWritable({})), encodeCommand('evalsha', args)) === 0)
    }
  })
})
