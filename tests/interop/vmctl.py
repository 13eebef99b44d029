#!/usr/bin/python3
"""Run one shell command line in the soft-RoCE peer VM (tests/interop/vm-init).

usage: vmctl.py SOCKET SECONDS COMMAND

Connects to QEMU's unix socket of the virtio-serial port "snic.ctl"
(retrying until SECONDS pass, so it also waits for the VM to boot), sends
"SEQ COMMAND", copies the command's output to stdout and exits with its
status.  124 when SECONDS pass first, 125 on a control-channel error.
Output of an earlier command that was abandoned (its client timed out) is
skipped: only what lies between "@@begin SEQ" and "@@done SEQ" counts.
"""
import os
import socket
import sys
import time


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 125
    path, secs, cmd = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    if "\n" in cmd:
        print("vmctl: the command must be one line", file=sys.stderr)
        return 125
    deadline = time.monotonic() + secs
    seq = "%d.%d" % (os.getpid(), time.monotonic_ns())
    sock = None
    while sock is None:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            sock = s
        except OSError:
            s.close()
            if time.monotonic() >= deadline:
                print("vmctl: cannot connect to %s" % path, file=sys.stderr)
                return 124
            time.sleep(0.2)
    sock.sendall(("%s %s\n" % (seq, cmd)).encode())
    buf = b""
    inside = False
    begin = ("@@begin %s" % seq).encode()
    done = ("@@done %s " % seq).encode()
    out = sys.stdout.buffer
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            print("vmctl: no answer within %gs to: %s" % (secs, cmd), file=sys.stderr)
            return 124
        sock.settimeout(left)
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        if not data:
            print("vmctl: the VM closed the channel", file=sys.stderr)
            return 125
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if not inside:
                inside = line == begin
            elif line.startswith(done):
                out.flush()
                return int(line[len(done):])
            else:
                out.write(line + b"\n")


if __name__ == "__main__":
    sys.exit(main())
