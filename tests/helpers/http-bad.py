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
  multipart a ranged GET answered 206 as multipart/byteranges (no Content-Range)
  total     a ranged GET answered 206 with the range of a file one byte longer
  416       a ranged GET answered 416 Range Not Satisfiable
  503       every request answered 503 with Retry-After: 3600
  chunkcut  FILE chunked (no Content-Length), cut after its first MiB
  chunkbad  FILE chunked, a chunk size line of garbage after its first MiB
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


def chunked(body, n=65536):
    return b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + n]), body[i:i + n])
                    for i in range(0, len(body), n))


def ranged(req):
    r = req.split(b"Range: bytes=")[1].split(b"\r\n")[0] if b"Range: bytes=" in req else None
    return (int(x) for x in r.split(b"-")) if r else None


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
        elif mode in ("multipart", "total", "416") and ranged(req):
            first, last = ranged(req)
            n = last - first + 1
            if mode == "multipart":
                part = (b"--SEP\r\nContent-Type: application/octet-stream\r\n"
                        b"Content-Range: bytes %d-%d/%d\r\n\r\n" % (first, last, len(data))
                        + data[first:last + 1] + b"\r\n--SEP--\r\n")
                c.sendall(b"HTTP/1.1 206 Partial Content\r\nContent-Length: %d\r\n"
                          b"Content-Type: multipart/byteranges; boundary=SEP\r\n"
                          b"ETag: \"e1\"\r\nConnection: close\r\n\r\n" % len(part) + part)
            elif mode == "total":
                c.sendall(b"HTTP/1.1 206 Partial Content\r\nContent-Length: %d\r\n"
                          b"Content-Range: bytes %d-%d/%d\r\nETag: \"e1\"\r\n"
                          b"Connection: close\r\n\r\n" % (n, first, last, len(data) + 1)
                          + data[first:last + 1])
            else:
                c.sendall(b"HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */%d\r\n"
                          b"Content-Length: 0\r\nConnection: close\r\n\r\n" % len(data))
        elif mode == "503":
            c.sendall(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 3600\r\n"
                      b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        elif mode in ("chunkcut", "chunkbad"):
            c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nETag: \"e1\"\r\n"
                      b"Connection: close\r\n\r\n")
            if not req.startswith(b"HEAD "):
                c.sendall(chunked(data[:1048576]) + (b"" if mode == "chunkcut" else b"zz\r\n"))
        elif mode == "changed":
            hops += 1
            c.sendall(head(len(data), hops) + (b"" if req.startswith(b"HEAD ") else data))
        else:
            c.sendall(head(len(data)) + (b"" if req.startswith(b"HEAD ") else data))
    except OSError:
        pass
    c.close()
