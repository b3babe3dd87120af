#!/usr/bin/env python3
"""A big packet capture for the measurements of docs/PERFORMANCE.md ("Reading traces"):
10^7 Ethernet/IPv4 packets of 54 bytes (TCP, or UDP padded to 54 bytes) whose 5-tuples
are drawn Zipf(1.1) over 10^6 flows, one microsecond apart. Classic pcap (microsecond,
little-endian, 70 bytes a packet: 700 MB) or, with --pcapng, the same packets as
enhanced packet blocks of one interface. Python 3 standard library only: the 10^6
frames are built once, then each packet is a table look-up (about 40 s).

    python3 scripts/big-pcap.py /work/big/big.pcap [packets] [--pcapng] [--seed S]
"""
import argparse
import bisect
import itertools
import os
import random
import struct

FLOWS = 1_000_000
ZIPF = 1.1


def checksum(header):
    s = sum(struct.unpack("!10H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def frame(rng):
    """One flow's 54-byte Ethernet/IPv4 frame: TCP (60 %) or UDP with 12 payload bytes."""
    eth = bytes.fromhex("020000000001020000000002") + b"\x08\x00"
    tcp = rng.random() < 0.6
    proto, ip_len = (6, 40) if tcp else (17, 40)
    src = rng.getrandbits(32) | 0x0A000000
    dst = rng.getrandbits(32)
    sport, dport = rng.randrange(1024, 65536), rng.choice((53, 80, 443, 8080, rng.randrange(1, 65536)))
    ip = struct.pack("!BBHHHBBHII", 0x45, 0, ip_len, 0, 0x4000, 64, proto, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    if tcp:
        l4 = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 0x50, 0x10, 65535, 0, 0)
    else:
        l4 = struct.pack("!HHHH", sport, dport, 20, 0) + bytes(12)
    f = eth + ip + l4
    assert len(f) == 54
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("packets", nargs="?", type=int, default=10_000_000)
    ap.add_argument("--pcapng", action="store_true")
    ap.add_argument("--seed", type=int, default=41)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    frames = [frame(rng) for _ in range(FLOWS)]
    # Zipf(1.1) over the flows by inverse transform on the cumulative weights.
    cum = list(itertools.accumulate(r ** -ZIPF for r in range(1, FLOWS + 1)))
    total = cum[-1]
    rec = struct.Struct("<IIII")
    # pcapng enhanced packet block: type 6, length 88, interface 0, time high/low,
    # captured and original length, 54 bytes of data padded to 56, length again.
    epb = struct.Struct("<IIIIIII")
    tmp = a.path + ".tmp"
    with open(tmp, "wb") as out:
        if a.pcapng:
            # Section header (no options) and one Ethernet interface (microseconds).
            out.write(struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 28))
            out.write(struct.pack("<IIHHII", 1, 20, 1, 0, 65535, 20))
        else:
            out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        step = 1 << 20
        t0 = 1_700_000_000 * 1_000_000
        for s in range(0, a.packets, step):
            n = min(step, a.packets - s)
            picks = [bisect.bisect(cum, rng.random() * total) for _ in range(n)]
            chunk = []
            for i, p in enumerate(picks):
                t = t0 + s + i
                f = frames[min(p, FLOWS - 1)]
                if a.pcapng:
                    chunk.append(epb.pack(6, 88, 0, t >> 32, t & 0xFFFFFFFF, 54, 54))
                    chunk.append(f)
                    chunk.append(b"\x00\x00\x58\x00\x00\x00")
                else:
                    chunk.append(rec.pack(t // 1_000_000, t % 1_000_000, 54, 54))
                    chunk.append(f)
            out.write(b"".join(chunk))
    os.replace(tmp, a.path)


if __name__ == "__main__":
    main()
