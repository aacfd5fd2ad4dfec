"""A TCP proxy on 127.0.0.1 in front of the server that can hold a page's realtime
socket back, so a test sees what the page shows before the server has answered.

Everything (the page, REST, audio, the WebSocket upgrade) is relayed byte for byte;
nothing in the page knows about it. A connection whose client bytes ask for a
WebSocket upgrade is a socket connection; `hold()` stops relaying its bytes in the
chosen directions (the relay thread waits with the bytes it has read, so the kernel's
flow control holds the rest) until `release()`. Only WebSocket connections are held,
so REST calls and audio keep flowing.
"""

import socket
import threading
import time

UP = "up"  # page -> server (commands)
DOWN = "down"  # server -> page (acks, errors, events)


class HoldProxy:
    def __init__(self, target_host, target_port):
        self.target = (target_host, target_port)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.state = threading.Condition()
        self.held = {UP: False, DOWN: False}
        self.waiting = {UP: 0, DOWN: 0}  # socket chunks that are being held back now
        self.sockets = []
        self.closed = False
        threading.Thread(target=self._accept, name="hold-proxy-accept", daemon=True).start()

    # MARK: control

    def hold(self, *directions):
        """From now on, bytes on socket connections in these directions wait (default: both)."""
        with self.state:
            for direction in directions or (UP, DOWN):
                self.held[direction] = True

    def release(self, *directions):
        """Lets the held bytes go, in order (default: both; page -> server first)."""
        for direction in directions or (UP, DOWN):
            with self.state:
                self.held[direction] = False
                self.state.notify_all()

    def wait_held(self, direction, timeout=5):
        """Waits until something on a socket connection is being held in `direction`
        (e.g. the page's command has reached the proxy and not the server)."""
        deadline = time.monotonic() + timeout
        with self.state:
            while self.waiting[direction] == 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"nothing was held going {direction} within {timeout} s")
                self.state.wait(left)

    def close(self):
        with self.state:
            self.closed = True
            self.held = {UP: False, DOWN: False}
            self.state.notify_all()
            sockets = list(self.sockets)
        # close() alone does not wake a thread blocked in accept(): the listener would take
        # one more connection (a page's reconnect) after the proxy is "gone". shutdown() does.
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        for s in [self.listener, *sockets]:
            try:
                s.close()
            except OSError:
                pass

    # MARK: relaying

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.state:
                # Accepted as the proxy closed: it is gone for this connection too.
                if self.closed:
                    client.close()
                    server.close()
                    return
                self.sockets += [client, server]
            connection = {"websocket": False}
            threading.Thread(target=self._pump, args=(client, server, UP, connection), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, DOWN, connection), daemon=True).start()

    def _pump(self, source, sink, direction, connection):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if direction == UP and not connection["websocket"] and b"upgrade: websocket" in data.lower():
                    connection["websocket"] = True
                if connection["websocket"]:
                    with self.state:
                        if self.held[direction] and not self.closed:
                            self.waiting[direction] += 1
                            self.state.notify_all()
                            while self.held[direction] and not self.closed:
                                self.state.wait()
                            self.waiting[direction] -= 1
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
