"""A TCP proxy that makes a replica lag its master: every chunk from the master is
delivered to the replica D ms after it arrived (order kept). Replies from the
replica (REPLCONF ACK) pass at once.

Run as its own process (no GIL shared with the test's clients):

    python3 lagproxy.py LISTEN_PORT TARGET_PORT DELAY_MS

It prints "ready" once listening. Loopback only.

A lagging replica loses what it has not received when its master dies: when the
master's side closes, chunks still queued here are dropped, not delivered (the
replica is D ms behind; the last D ms of writes die with the master).

Signals: SIGUSR1 cuts the link (closes every connection and stops listening, so
the replica's reconnects are refused); SIGUSR2 listens again. SIGTERM ends it.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from typing import Optional, Set

HOST = "127.0.0.1"


class Proxy:
    def __init__(self, listen: int, target: int, delay_ms: float) -> None:
        self.listen = listen
        self.target = target
        self.delay = delay_ms / 1000.0
        self.server: Optional[asyncio.base_events.Server] = None
        self.writers: Set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self.accept, HOST, self.listen, reuse_address=True)

    def cut(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None
        for w in list(self.writers):
            abort(w)

    async def restore(self) -> None:
        if self.server is None:
            await self.start()

    async def accept(self, r_client: asyncio.StreamReader, w_client: asyncio.StreamWriter) -> None:
        try:
            r_up, w_up = await asyncio.wait_for(asyncio.open_connection(HOST, self.target), 2.0)
        except (OSError, asyncio.TimeoutError):
            abort(w_client)
            return
        self.writers.update((w_client, w_up))
        # master -> replica: delayed, dropped on close; replica -> master: at once
        down = asyncio.ensure_future(self.pump(r_up, w_client, self.delay))
        up = asyncio.ensure_future(self.pump(r_client, w_up, 0.0))
        await asyncio.wait([down, up], return_when=asyncio.FIRST_COMPLETED)
        for t in (down, up):
            t.cancel()
        for w in (w_client, w_up):
            abort(w)
            self.writers.discard(w)

    async def pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
        if delay <= 0:
            while True:
                data = await reader.read(65536)
                if not data:
                    return
                writer.write(data)
                await writer.drain()
        queue: "asyncio.Queue[tuple[float, bytes]]" = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()

        sender = asyncio.ensure_future(deliver())
        try:
            while True:
                data = await reader.read(65536)
                if not data or sender.done():
                    return  # what is still queued is lost with the master
                queue.put_nowait((time.monotonic() + delay, data))
        finally:
            sender.cancel()


def abort(w: asyncio.StreamWriter) -> None:
    try:
        w.transport.abort()
    except Exception:
        pass


async def main() -> None:
    listen, target, delay = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    proxy = Proxy(listen, target, delay)
    await proxy.start()
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    loop.add_signal_handler(signal.SIGUSR1, proxy.cut)
    loop.add_signal_handler(signal.SIGUSR2, lambda: asyncio.ensure_future(proxy.restore()))
    loop.add_signal_handler(signal.SIGTERM, lambda: done.done() or done.set_result(None))
    print("ready", flush=True)
    await done
    proxy.cut()


if __name__ == "__main__":
    asyncio.run(main())
