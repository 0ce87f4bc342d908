// A TCP server that speaks just enough RESP2 to answer every command with a
// reply chosen by the test (e.g. an error reply such as -LOADING), for the
// failure policy's tests. Connection set-up commands get +OK.
import net from 'node:net';

function parseCommands(buf) {
  const out = [];
  let i = 0;
  for (;;) {
    if (i >= buf.length) break;
    if (buf[i] !== 0x2a) { // inline command
      const end = buf.indexOf('\r\n', i);
      if (end < 0) break;
      out.push(buf.subarray(i, end).toString().split(' '));
      i = end + 2;
      continue;
    }
    const start = i;
    let end = buf.indexOf('\r\n', i);
    if (end < 0) break;
    const n = Number(buf.subarray(i + 1, end).toString());
    i = end + 2;
    const args = [];
    let complete = true;
    for (let k = 0; k < n; k++) {
      end = buf.indexOf('\r\n', i);
      if (end < 0) { complete = false; break; }
      const len = Number(buf.subarray(i + 1, end).toString());
      if (buf.length < end + 2 + len + 2) { complete = false; break; }
      args.push(buf.subarray(end + 2, end + 2 + len).toString());
      i = end + 2 + len + 2;
    }
    if (!complete) { i = start; break; }
    out.push(args);
  }
  return { commands: out, rest: buf.subarray(i) };
}

// reply(args) -> a raw RESP string for RL.* commands.
export async function startFakeRedis(reply) {
  const seen = [];
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      const { commands, rest } = parseCommands(Buffer.concat([pending, chunk]));
      pending = rest;
      for (const args of commands) {
        seen.push(args);
        const name = String(args[0]).toUpperCase();
        socket.write(name.startsWith('RL.') ? reply(args) : name === 'PING' ? '+PONG\r\n' : '+OK\r\n');
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    seen,
    close: () => new Promise((resolve) => { for (const s of sockets) s.destroy(); server.close(resolve); }),
  };
}
