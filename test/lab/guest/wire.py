"""wire.py (inside the lab guest, run in a VM's or a host's namespace by lab.sh check_wire): the
probes of what a tenant VM may claim on the wire (docs/adr/0016-tenant-wire.md), as root in the VM.

  wire.py forge SRC RESOLVER OUTSIDE   3 DNS queries from SRC:40053 to RESOLVER:53 and 3 TCP
                                       connects from SRC:40080-40082 to OUTSIDE:22 (SRC added to
                                       eth0 by the caller: another tenant's address)
  wire.py flood N SRCIP DSTIP          N frames out of eth0, each from a new source MAC
                                       (02:00:xx:xx:xx:xx), IPv4 from SRCIP (the VM's own) to DSTIP
  wire.py blast DST PORT SECONDS       UDP datagrams of 1400 bytes to DST:PORT as fast as it can
  wire.py sink PORT SECONDS WARM       counts what arrives on UDP PORT after WARM seconds, until
                                       SECONDS: prints "mbps <received Mbit/s>"
"""
import socket
import struct
import sys
import time


def forge(src, resolver, outside):
    query = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0) + b"\x07example\x00\x00\x01\x00\x01"
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind((src, 40053))
    for attempt in range(3):
        u.sendto(query, (resolver, 53 + 0 * attempt))
        time.sleep(0.2)
    for port in (40080, 40081, 40082):
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t.bind((src, port))
        t.setblocking(False)
        try:
            t.connect((outside, 22))
        except BlockingIOError:
            pass
        time.sleep(0.2)
        t.close()
    time.sleep(1)
    print("sent 3 udp 3 tcp from", src)


def checksum(h):
    s = sum(struct.unpack(">10H", h))
    s = (s & 0xFFFF) + (s >> 16)
    return ~(s + (s >> 16)) & 0xFFFF


def flood(n, src_ip, dst_ip):
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 28, 0, 0, 64, 17, 0,
                               socket.inet_aton(src_ip), socket.inet_aton(dst_ip)))
    ip[10:12] = struct.pack(">H", checksum(bytes(ip)))
    udp = struct.pack(">HHHH", 9999, 9, 8, 0)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind(("eth0", 0))
    dst = bytes.fromhex("020000009901")  # no one's: the bridge learns only sources
    for i in range(n):
        src = bytes([0x02, 0x00, (i >> 24) & 0xFF, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF])
        s.send(dst + src + b"\x08\x00" + bytes(ip) + udp)
    print("sent", n)


def blast(dst, port, seconds):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = b"\x00" * 1400
    end = time.time() + seconds
    while time.time() < end:
        try:
            s.sendto(payload, (dst, port))
        except OSError:
            pass  # ENOBUFS under a full queue: the blast goes on


def sink(port, seconds, warm):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(("0.0.0.0", port))
    s.settimeout(0.5)
    start = time.time()
    n = 0
    while time.time() - start < seconds + 1:
        try:
            k = len(s.recv(2048))
        except socket.timeout:
            continue
        if warm < time.time() - start <= seconds:
            n += k
    print("mbps %.1f" % (n * 8 / (seconds - warm) / 1e6))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "forge":
        forge(*args)
    elif cmd == "flood":
        flood(int(args[0]), args[1], args[2])
    elif cmd == "blast":
        blast(args[0], int(args[1]), float(args[2]))
    elif cmd == "sink":
        sink(int(args[0]), float(args[1]), float(args[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
