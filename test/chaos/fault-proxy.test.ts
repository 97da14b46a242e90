// The chaos suites' TCP fault proxy (test/support/chaos/fault-proxy.ts) in front of a real TCP echo
// server: pass forwards, blackhole holds bytes both ways and delivers them at the heal, delay keeps
// the order, reset refuses (RST) open and new connections. Orderings only, no latency bounds.
import assert from 'node:assert/strict';
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';
import { after, before, test } from 'node:test';
import { FaultProxy } from '../support/chaos/fault-proxy.ts';

let echo: Server;
const echoSockets = new Set<Socket>();
/** Every client socket a test opened, destroyed at the end whatever state it was left in. */
const clients = new Set<Socket>();
let proxy: FaultProxy;

before(async () => {
  echo = createServer((socket) => {
    echoSockets.add(socket);
    socket.once('close', () => echoSockets.delete(socket));
    // The proxy resets its side in the reset test.
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', () => resolve()));
  proxy = await FaultProxy.start((echo.address() as AddressInfo).port);
});
after(async () => {
  for (const socket of clients) socket.destroy();
  await proxy.close();
  // Stop listening and drop what is left; not waiting for close's callback, which the test runner's
  // child process did not always get (no handle was left to keep it alive).
  echo.close();
  for (const socket of echoSockets) socket.destroy();
});

/** A client connected through the proxy, collecting what comes back and how it ended. */
async function connect(): Promise<{ socket: Socket; received: () => string; ended: Promise<string> }> {
  const socket = new Socket();
  clients.add(socket);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  const ended = new Promise<string>((resolve) => {
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    socket.once('close', () => resolve('closed'));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
    socket.connect(proxy.port, '127.0.0.1');
  });
  return { socket, received: () => received, ended };
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('pass forwards both ways', async () => {
  proxy.set('pass');
  const link = await connect();
  link.socket.write('hello');
  await waitFor(() => link.received() === 'hello', 'the echo');
  link.socket.destroy();
});

test('blackhole holds bytes of open and new connections, and delivers them in order at the heal', async () => {
  proxy.set('pass');
  const accepted = proxy.connections;
  const open = await connect();
  open.socket.write('a');
  await waitFor(() => open.received() === 'a', 'the first echo');
  proxy.set('blackhole');
  open.socket.write('b');
  const fresh = await connect();
  fresh.socket.write('x');
  // Nothing can prove a negative at once: wait until the proxy accepted the new connection, then a little.
  await waitFor(() => proxy.connections >= accepted + 2, 'the new connection to be accepted');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(open.received(), 'a', 'nothing passes the blackhole');
  assert.equal(fresh.received(), '');
  proxy.set('pass');
  await waitFor(() => open.received() === 'ab' && fresh.received() === 'x', 'the held bytes at the heal');
  open.socket.destroy();
  fresh.socket.destroy();
});

test('delay keeps the order of the chunks', async () => {
  proxy.set('delay', 20);
  const link = await connect();
  for (const part of ['1', '2', '3', '4']) link.socket.write(part);
  await waitFor(() => link.received() === '1234', 'every chunk, in order');
  proxy.set('pass');
  link.socket.destroy();
});

test('reset resets open connections and refuses new ones until the heal', async () => {
  proxy.set('pass');
  const open = await connect();
  open.socket.write('ping');
  await waitFor(() => open.received() === 'ping', 'the connection to be through');
  proxy.set('reset');
  assert.equal(await open.ended, 'ECONNRESET');
  const refused = await connect()
    .then((link) => link.ended)
    .catch((error: NodeJS.ErrnoException) => error.code ?? 'error');
  assert.match(refused, /ECONNRESET|closed/);
  proxy.set('pass');
  const after = await connect();
  after.socket.write('back');
  await waitFor(() => after.received() === 'back', 'the echo after the heal');
  after.socket.destroy();
});
