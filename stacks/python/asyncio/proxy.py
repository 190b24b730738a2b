"""proxy.py: the python/asyncio TCP proxy: asyncio streams relaying both ways, one event loop per worker process."""
import asyncio
import os
import signal
import socket
import sys

CHUNK = 65536  # the StreamReader's own default limit: one read takes whatever arrived, up to 64 KiB


async def pipe(reader, writer, other):
    """Copy reader to writer until EOF; pass the EOF on as a half-close.

    On an error (a client that resets or leaves mid-response) both connections are aborted, which
    also ends the other direction: its read sees EOF, its write is dropped.
    """
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            writer.write(data)
            await writer.drain()  # backpressure: wait while the peer is slower than the source
        if not writer.transport.is_closing() and writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError, RuntimeError):
        # RuntimeError: uvloop's answer to a write on a transport that was already closed.
        writer.transport.abort()
        other.transport.abort()


async def relay(client_reader, client_writer, host, port):
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(host, port)
    except OSError:
        client_writer.transport.abort()
        return
    # asyncio sets TCP_NODELAY on every TCP transport itself.
    try:
        await asyncio.gather(
            pipe(client_reader, upstream_writer, client_writer),
            pipe(upstream_reader, client_writer, upstream_writer),
        )
    finally:
        client_writer.close()
        upstream_writer.close()


async def serve(port, host, upstream_port):
    # reuse_port: every worker process has its own listening socket; the kernel spreads connections.
    # HOST: the address to bind (127.0.0.1 unless the lab places the server on a host of its own).
    server = await asyncio.start_server(
        lambda r, w: relay(r, w, host, upstream_port),
        os.environ.get("HOST") or "127.0.0.1", port, reuse_port=True, backlog=4096,
    )
    async with server:
        await server.serve_forever()


def run_worker(port, host, upstream_port):
    if os.environ.get("USE_UVLOOP") == "1":
        import uvloop
        uvloop.run(serve(port, host, upstream_port))
    else:
        asyncio.run(serve(port, host, upstream_port))


def main():
    port = int(os.environ["PORT"])
    host, _, upstream_port = os.environ["UPSTREAM"].rpartition(":")
    workers = int(os.environ.get("WORKERS") or os.cpu_count() or 1)
    if workers <= 1:
        run_worker(port, host, int(upstream_port))
        return
    # An event loop uses one core: WORKERS forked processes, each with its own loop and listener.
    # This process only supervises: it stops the workers on SIGTERM/SIGINT and exits if one dies.
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            run_worker(port, host, int(upstream_port))
            os._exit(0)
        children.append(pid)

    def stop(signum, _frame):
        for child in children:
            try:
                os.kill(child, signal.SIGTERM)
            except ProcessLookupError:
                pass
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    pid, status = os.wait()
    print(f"worker {pid} exited with status {status}; stopping", file=sys.stderr)
    stop(signal.SIGTERM, None)


if __name__ == "__main__":
    main()
