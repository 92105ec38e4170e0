#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""http-bad.py PORT MODE FILE: an HTTP server on 127.0.0.1:PORT that answers
what no real server does, for tests/http.bats. One connection at a time,
until killed (the test's timeout bounds it). MODE:
  short     FILE's Content-Length, its first MiB, then the connection closed
  stall     FILE's head, then nothing
  headers   a status line and 10,000 header lines
  loop      each request redirected to the next path, without end
  redirect  one redirect, then FILE whole
  changed   FILE whole, with another ETag at each request (a file replaced)
  short206  a HEAD answered right; a ranged GET answered 206 with the range's
            Content-Range and Content-Length, half its bytes, then closed
"""
import os
import socket
import sys
import time

port, mode, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
data = open(path, "rb").read()
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(8)


def head(n, etag=1):
    return (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nETag: \"e%d\"\r\n"
            b"Connection: close\r\n\r\n" % (n, etag))


hops = 0
while True:
    c, _ = srv.accept()
    req = b""
    while b"\r\n\r\n" not in req:
        b = c.recv(4096)
        if not b:
            break
        req += b
    target = req.split(b" ")[1] if req.count(b" ") >= 2 else b"/"
    try:
        if mode == "short":
            c.sendall(head(len(data)) + data[:1048576])
        elif mode == "stall":
            c.sendall(head(len(data)))
            time.sleep(60)
        elif mode == "headers":
            c.sendall(b"HTTP/1.1 200 OK\r\n" + b"X-Filler: 0123456789\r\n" * 10000 + b"\r\n")
        elif mode == "loop":
            hops += 1
            c.sendall(b"HTTP/1.1 302 Found\r\nLocation: /hop%d\r\nContent-Length: 0\r\n\r\n" % hops)
        elif mode == "redirect" and target != b"/moved":
            c.sendall(b"HTTP/1.1 301 Moved\r\nLocation: /moved\r\nContent-Length: 0\r\n"
                      b"Connection: close\r\n\r\n")
        elif mode == "short206" and not req.startswith(b"HEAD "):
            r = req.split(b"Range: bytes=")[1].split(b"\r\n")[0] if b"Range: bytes=" in req \
                else b"0-%d" % (len(data) - 1)
            first, last = (int(x) for x in r.split(b"-"))
            c.sendall(b"HTTP/1.1 206 Partial Content\r\nContent-Length: %d\r\n"
                      b"Content-Range: bytes %d-%d/%d\r\nETag: \"e1\"\r\n"
                      b"Connection: close\r\n\r\n" % (last - first + 1, first, last, len(data))
                      + data[first:first + (last - first + 1) // 2])
        elif mode == "changed":
            hops += 1
            c.sendall(head(len(data), hops) + (b"" if req.startswith(b"HEAD ") else data))
        else:
            c.sendall(head(len(data)) + (b"" if req.startswith(b"HEAD ") else data))
    except OSError:
        pass
    c.close()
