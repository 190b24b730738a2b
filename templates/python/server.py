"""The {{stack}} stack: WORKERS processes, each an asyncio event loop with its own SO_REUSEPORT
listener on $HOST:$PORT, answering the hello scenario with HTTP/1.1 keep-alive. Replace it
with the framework you want to measure (FastAPI under uvicorn, Django under gunicorn...)."""

import asyncio
import os
import socket

HELLO = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\nHello World!"
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nnot found"


async def serve(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            parts = head.split(b" ", 2)
            path = parts[1] if len(parts) > 1 else b""
            writer.write(HELLO if path == b"/" else NOT_FOUND)
            await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        pass
    finally:
        writer.close()


def listener(host, port):
    # HOST is the address to bind: 127.0.0.1, or the server host's own address when the lab places
    # the server on a host of its own. Never 0.0.0.0: a benchmark never opens a port to the network.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(1024)
    return sock


async def worker(host, port):
    server = await asyncio.start_server(serve, sock=listener(host, port))
    async with server:
        await server.serve_forever()


def main():
    host = os.environ.get("HOST") or "127.0.0.1"
    port = int(os.environ["PORT"])
    workers = max(1, int(os.environ.get("WORKERS", "1")))
    children = []
    for _ in range(workers - 1):
        pid = os.fork()
        if pid == 0:
            asyncio.run(worker(host, port))
            return
        children.append(pid)

    # The lab stops the whole process group: every worker gets its own SIGTERM.
    print(f"{{stack}} listening on {host}:{port} with {workers} processes", flush=True)
    asyncio.run(worker(host, port))


if __name__ == "__main__":
    main()
