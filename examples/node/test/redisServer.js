// A throwaway redis-server with the redis-rl module, for one test file.
//
// It listens on a free loopback port (never 6379), saves nothing, and is
// killed by stop(), which the tests call from after() so that it also runs
// when a test fails; and on process exit, whatever happens.
//
// REDIS_RL_MODULE: the module (default: <repo>/target/release/libredis_rl.so).
// REDIS_SERVER: the server binary (default: redis-server on PATH).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const DEFAULT_MODULE = path.join(REPO, 'target', 'release', 'libredis_rl.so');
const START_DEADLINE_MS = 10_000;

export async function freePort() {
  const probe = net.createServer();
  await new Promise((resolve, reject) => probe.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

function ping(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok) => { socket.destroy(); resolve(ok); };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class RedisServer {
  // withModule false: a managed service stood in for, with no module and
  // MODULE LOAD refused (--enable-module-command no).
  static async start({ withModule = true } = {}) {
    // Absolute: redis-server changes into --dir before it loads modules.
    const module = withModule ? path.resolve(process.env.REDIS_RL_MODULE || DEFAULT_MODULE) : null;
    const binary = process.env.REDIS_SERVER || 'redis-server';
    if (module && !fs.existsSync(module)) {
      throw new Error(`module not found: ${module} (run \`cargo build --release\`, or set REDIS_RL_MODULE)`);
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-rl-example-'));
    let state = 'not started';
    // The free port can be taken by someone else before redis binds it: then
    // redis exits at once and we try another port.
    for (let tries = 0; tries < 3; tries++) {
      const server = new RedisServer(binary, module, dir, await freePort());
      state = await server.waitForPong();
      if (state === 'ready') return server;
      const log = server.logTail();
      server.kill();
      if (tries === 2 || state !== 'exited') {
        fs.rmSync(dir, { recursive: true, force: true });
        throw new Error(`redis-server did not start (${state}); its log:\n${log}`);
      }
    }
    throw new Error('unreachable');
  }

  constructor(binary, module, dir, port) {
    Object.assign(this, { dir, port, log: path.join(dir, `redis-${port}.log`) });
    this.child = spawn(binary, [
      '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
      '--dir', dir, '--logfile', this.log, ...(module ? ['--loadmodule', module] : ['--enable-module-command', 'no']),
    ], { stdio: 'ignore' });
    this.exited = false;
    this.spawnError = null;
    this.child.once('error', (err) => { this.spawnError = err; this.exited = true; });
    this.child.once('exit', () => { this.exited = true; });
    this.onExit = () => this.kill(); // even if the test process dies before after() runs
    process.once('exit', this.onExit);
  }

  async waitForPong() {
    const deadline = Date.now() + START_DEADLINE_MS;
    while (Date.now() < deadline) {
      if (this.spawnError) return `cannot run it: ${this.spawnError.message}`;
      if (this.exited) return 'exited';
      if (await ping(this.port)) return 'ready';
      await pause(20); // polling start-up only; no test waits on a limit's window
    }
    return 'timeout';
  }

  logTail() {
    try {
      return fs.readFileSync(this.log, 'utf8').split('\n').slice(-20).join('\n');
    } catch {
      return '(no log)';
    }
  }

  // SIGSTOP: the server still accepts connections but answers nothing (a timeout).
  pause() {
    this.child.kill('SIGSTOP');
  }

  // SIGKILL: connections are refused (unreachable). Resolves once it is gone.
  kill() {
    if (this.exited) return Promise.resolve();
    const gone = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    return gone;
  }

  async stop() {
    await this.kill();
    process.removeListener('exit', this.onExit);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
