/** The fault tests' TCP proxy (test/support/fault-proxy.ts), against a local echo server. */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {connect, createServer} from 'node:net'
import type {Server, Socket} from 'node:net'

import {FaultProxy} from '../support/fault-proxy.js'

let echo: Server
let echoPort: number
before(async () => {
  echo = createServer((socket) => socket.pipe(socket))
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', () => resolve()))
  echoPort = (echo.address() as {port: number}).port
})
after(() => new Promise<void>((resolve) => echo.close(() => resolve())))

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({host: '127.0.0.1', port}, () => resolve(socket))
    socket.once('error', reject)
  })
}

/** The first echoed data within `ms`, or undefined. */
function reply(socket: Socket, text: string, ms = 1000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.off('data', onData)
      resolve(undefined)
    }, ms)
    const onData = (chunk: Buffer) => {
      clearTimeout(timer)
      resolve(chunk.toString())
    }
    socket.once('data', onData)
    socket.write(text)
  })
}

function closed(socket: Socket, ms = 1000): Promise<boolean> {
  if (socket.destroyed) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    socket.once('close', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}

describe('fault proxy', () => {
  test('forwards both ways', async () => {
    const proxy = await FaultProxy.start('127.0.0.1', echoPort)
    try {
      const socket = await open(proxy.port)
      assert.equal(await reply(socket, 'hello'), 'hello')
      assert.equal(proxy.connections, 1)
      socket.destroy()
    } finally {
      await proxy.close()
    }
  })

  test('reset() cuts open connections; new ones work', async () => {
    const proxy = await FaultProxy.start('127.0.0.1', echoPort)
    try {
      const socket = await open(proxy.port)
      socket.on('error', () => {})
      assert.equal(await reply(socket, 'a'), 'a')
      const gone = closed(socket)
      proxy.reset()
      assert.equal(await gone, true)
      const again = await open(proxy.port)
      assert.equal(await reply(again, 'b'), 'b')
      again.destroy()
    } finally {
      await proxy.close()
    }
  })

  test('blackhole(true) keeps connections open and forwards nothing, old or new; lifting it delivers what was held', async () => {
    const proxy = await FaultProxy.start('127.0.0.1', echoPort)
    try {
      const socket = await open(proxy.port)
      proxy.blackhole(true)
      const pending = reply(socket, 'held', 3000)
      const fresh = await open(proxy.port) // accepted, never forwarded
      assert.equal(await reply(fresh, 'x', 400), undefined)
      assert.equal(socket.destroyed, false)
      await new Promise((resolve) => setTimeout(resolve, 200))
      proxy.blackhole(false)
      assert.equal(await pending, 'held')
      socket.destroy()
      fresh.destroy()
    } finally {
      await proxy.close()
    }
  })

  test('delay(ms) holds each chunk about that long, and keeps order', async () => {
    const proxy = await FaultProxy.start('127.0.0.1', echoPort)
    try {
      const socket = await open(proxy.port)
      proxy.delay(150)
      const started = Date.now()
      assert.equal(await reply(socket, 'slow'), 'slow')
      const took = Date.now() - started
      // Once each way: about 300 ms.
      assert.ok(took >= 280 && took < 900, `took ${took} ms`)
      let received = ''
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
      for (const part of ['1', '2', '3', '4']) socket.write(part)
      await new Promise((resolve) => setTimeout(resolve, 600))
      assert.equal(received, '1234')
      socket.destroy()
    } finally {
      await proxy.close()
    }
  })

  test('refuse(true) closes new connections at once; refuse(false) accepts again', async () => {
    const proxy = await FaultProxy.start('127.0.0.1', echoPort)
    try {
      proxy.refuse(true)
      const socket = connect({host: '127.0.0.1', port: proxy.port})
      socket.on('error', () => {})
      assert.equal(await closed(socket), true)
      proxy.refuse(false)
      const again = await open(proxy.port)
      assert.equal(await reply(again, 'ok'), 'ok')
      again.destroy()
    } finally {
      await proxy.close()
    }
  })

  test('close() ends every connection and stops listening', async () => {
    const proxy = await FaultProxy.start('127.0.0.1', echoPort)
    const socket = await open(proxy.port)
    socket.on('error', () => {})
    const gone = closed(socket)
    await proxy.close()
    assert.equal(await gone, true)
    await assert.rejects(open(proxy.port))
  })
})
