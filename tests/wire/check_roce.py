#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""RoCEv2 wire oracle: validate every UDP/4791 frame of a pcap with scapy.

Independent of the firmware's C code: the ICRC is recomputed by scapy's
contrib.roce BTH (IBTA Annex A17.3.3, IPv4) or, over IPv6, the same way
here from scapy's IPv6 layer with traffic class, flow label and hop limit
masked (the contrib does IPv4 only), the headers are dissected by
scapy layers (contrib BTH/AETH plus small RETH, ImmDt, IETH, AtomicETH,
AtomicAckETH, DETH and XRCETH layers defined here and chained by BTH
opcode, IBTA vol. 1 9.2-9.3 and Annex A14 for XRC).

Checked per frame: IPv4 version/IHL/checksum/no fragmentation (IPv6:
version 6, next header UDP, no extension headers), IP and UDP lengths, UDP destination 4791 and source port >= 0xC000, BTH tver 0, known
opcode, extension headers present as the opcode requires, payload + pad a
multiple of 4 with pad <= it, no payload where the opcode carries none, RETH
DMA length = payload for WRITE ONLY, ICRC.  Per (source IP, destination QP
[, DETH source QP]) the request PSNs must advance by one modulo 2^24 (a READ
request advances by the number of response packets its length needs).
Going back is reported as a retransmission (an error with --strict-psn);
skipping ahead is an error unless --allow-psn-gaps.

Usage: check_roce.py PCAP [--min-frames N] [--expect-opcodes 0x06,0x0c,...]
                          [--strict-psn] [--allow-psn-gaps] [--pmtu N]
                          [--family 4|6] [--dump] [--quiet]
Exit status: 0 all good, 1 any error, 2 usage or unreadable file.
"""
import argparse
import logging
import sys
import zlib

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.compat import raw  # noqa: E402
from scapy.contrib.roce import AETH, BTH  # noqa: E402
from scapy.fields import (IntField, X3BytesField,  # noqa: E402
                          XByteField, XIntField, XLongField)
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Packet, Raw, bind_layers  # noqa: E402
from scapy.utils import PcapReader, checksum  # noqa: E402

ROCE_PORT = 4791
PSN_MOD = 1 << 24


# ---- extension header layers (IBTA 9.3) ----

class _Ext(Packet):
    """Extension header whose successor depends on the BTH opcode."""

    def guess_payload_class(self, payload):
        return _next_layer(self, payload)


class RETH(_Ext):
    name = "RETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0),
                   IntField("dmalen", 0)]


class ImmDt(_Ext):
    name = "ImmDt"
    fields_desc = [XIntField("imm", 0)]


class IETH(_Ext):
    name = "IETH"
    fields_desc = [XIntField("rkey", 0)]


class AtomicETH(_Ext):
    name = "AtomicETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0),
                   XLongField("swap_add", 0), XLongField("cmp", 0)]


class AtomicAckETH(_Ext):
    name = "AtomicAckETH"
    fields_desc = [XLongField("orig", 0)]


class DETH(_Ext):
    name = "DETH"
    fields_desc = [XIntField("qkey", 0), XByteField("resv", 0),
                   X3BytesField("sqpn", 0)]


class XRCETH(_Ext):
    """XRC extended transport header (Annex A14): the target's XRC SRQ."""
    name = "XRCETH"
    fields_desc = [XByteField("resv", 0), X3BytesField("xrcsrq", 0)]


HDR_LEN = {RETH: 16, ImmDt: 4, IETH: 4, AtomicETH: 28, AtomicAckETH: 8,
           DETH: 8, AETH: 4, XRCETH: 4}

# Opcode -> (name, extension header sequence, carries payload, is request).
# RC 0x00-0x17 (0x15 RESYNC excluded), UC SEND/WRITE, UD SEND (table 37),
# XRC 0xa0-0xb4: RC's, every request with the XRCETH first (Annex A14).
OPS = {}


def _send_write(base, t):
    OPS.update({
        base | 0x00: (t + "_SEND_FIRST", [], True, True),
        base | 0x01: (t + "_SEND_MIDDLE", [], True, True),
        base | 0x02: (t + "_SEND_LAST", [], True, True),
        base | 0x03: (t + "_SEND_LAST_IMM", [ImmDt], True, True),
        base | 0x04: (t + "_SEND_ONLY", [], True, True),
        base | 0x05: (t + "_SEND_ONLY_IMM", [ImmDt], True, True),
        base | 0x06: (t + "_WRITE_FIRST", [RETH], True, True),
        base | 0x07: (t + "_WRITE_MIDDLE", [], True, True),
        base | 0x08: (t + "_WRITE_LAST", [], True, True),
        base | 0x09: (t + "_WRITE_LAST_IMM", [ImmDt], True, True),
        base | 0x0a: (t + "_WRITE_ONLY", [RETH], True, True),
        base | 0x0b: (t + "_WRITE_ONLY_IMM", [RETH, ImmDt], True, True),
    })


_send_write(0x00, "RC")
_send_write(0x20, "UC")
OPS.update({
    0x0c: ("RC_READ_REQ", [RETH], False, True),
    0x0d: ("RC_READ_RESP_FIRST", [AETH], True, False),
    0x0e: ("RC_READ_RESP_MIDDLE", [], True, False),
    0x0f: ("RC_READ_RESP_LAST", [AETH], True, False),
    0x10: ("RC_READ_RESP_ONLY", [AETH], True, False),
    0x11: ("RC_ACK", [AETH], False, False),
    0x12: ("RC_ATOMIC_ACK", [AETH, AtomicAckETH], False, False),
    0x13: ("RC_CMP_SWAP", [AtomicETH], False, True),
    0x14: ("RC_FETCH_ADD", [AtomicETH], False, True),
    0x16: ("RC_SEND_LAST_INV", [IETH], True, True),
    0x17: ("RC_SEND_ONLY_INV", [IETH], True, True),
    0x64: ("UD_SEND_ONLY", [DETH], True, True),
    0x65: ("UD_SEND_ONLY_IMM", [DETH, ImmDt], True, True),
})
XRC = 0xa0
for _op in range(0x00, 0x15):
    _n, _seq, _p, _r = OPS[_op]
    OPS[XRC | _op] = ("XRC" + _n[2:], ([XRCETH] if _r else []) + _seq, _p, _r)
READ_REQS = {0x0c, XRC | 0x0c}


def _with_xrc(ops):
    return set(ops) | {XRC | op for op in ops if op < 0x20}


# FIRST and MIDDLE packets carry exactly one PMTU of payload (IBTA vol. 1 9.7).
PMTU_SIZED = _with_xrc({0x00, 0x01, 0x06, 0x07, 0x0d, 0x0e, 0x20, 0x21, 0x26,
                        0x27})
PMTUS = {256, 512, 1024, 2048, 4096}
WRITE_ONLY = _with_xrc({0x0a, 0x0b, 0x2a, 0x2b})
WRITE_FIRST = _with_xrc({0x06, 0x26})
WRITE_LAST = _with_xrc({0x08, 0x09, 0x28, 0x29})
WRITE_MIDDLE = _with_xrc({0x07, 0x27})


def _next_layer(layer, payload):
    """The header after `layer` in its BTH opcode's sequence, else Raw."""
    bth = layer
    while bth is not None and not isinstance(bth, BTH):
        bth = bth.underlayer
    seq = OPS.get(bth.opcode, (None, []))[1] if bth is not None else []
    if isinstance(layer, BTH):
        return seq[0] if seq else Raw
    for i, cls in enumerate(seq[:-1]):
        if type(layer) is cls:
            return seq[i + 1]
    return Raw


# Chain every extension header from the BTH opcode (the contrib only binds
# AETH for ACK): BTH and the contrib AETH dispatch through the same table.
BTH.payload_guess = [g for g in BTH.payload_guess if g[1] is not AETH]
BTH.guess_payload_class = _next_layer
AETH.guess_payload_class = _next_layer
for _op, (_n, _seq, _p, _r) in OPS.items():
    if _seq:
        bind_layers(BTH, _seq[0], opcode=_op)  # for building/show only


# ---- checks ----

def payload_len(bth, udp):
    """Payload bytes (without pad) per the UDP length, or None."""
    if bth.opcode not in OPS:
        return None
    ext = sum(HDR_LEN[c] for c in OPS[bth.opcode][1])
    n = udp.len - 8 - 12 - 4 - ext - bth.padcount
    return n if n >= 0 else None


def learn_pmtu(path):
    """The PMTU if every FIRST/MIDDLE packet in the capture agrees on one."""
    seen = set()
    with PcapReader(path) as rd:
        for pkt in rd:
            if (pkt.haslayer(UDP) and pkt.haslayer(BTH) and
                    pkt[BTH].opcode in PMTU_SIZED):
                seen.add(payload_len(pkt[BTH], pkt[UDP]))
    return seen.pop() if len(seen) == 1 and seen <= PMTUS else 0


def psn_diff(a, b):
    """Signed 24-bit distance a - b."""
    d = (a - b) % PSN_MOD
    return d - PSN_MOD if d >= PSN_MOD // 2 else d


class Checker:
    def __init__(self, args):
        self.args = args
        self.errors = 0
        self.warnings = 0
        self.frames = 0
        self.roce = 0
        self.per_op = {}
        self.next_psn = {}      # key -> (lo, hi) acceptable next PSN
        self.top_psn = {}       # key -> the PSN after the highest one sent
        self.retrans = 0
        self.writes = {}        # key -> [dmalen, bytes so far]
        self.pmtu = args.pmtu   # 0: unknown, READs may span 256..4096

    def err(self, fno, msg):
        self.errors += 1
        print("frame %d: ERROR: %s" % (fno, msg))

    def warn(self, fno, msg):
        self.warnings += 1
        if not self.args.quiet:
            print("frame %d: warning: %s" % (fno, msg))

    # IPv4 + UDP (RFC 791/768, Annex A17); returns the exact IP packet bytes.
    def check_l3l4(self, fno, pkt, ip, udp):
        b = raw(ip)
        if ip.version != 4 or ip.ihl != 5:
            self.err(fno, "IPv4 version %d IHL %d" % (ip.version, ip.ihl))
        if ip.len > len(b):
            self.err(fno, "IP total length %d > %d bytes" % (ip.len, len(b)))
            return None
        if checksum(b[:ip.ihl * 4]) != 0:
            self.err(fno, "bad IPv4 header checksum 0x%04x" % ip.chksum)
        if ip.flags.MF or ip.frag:
            self.err(fno, "fragmented IPv4 packet")
        if udp.len != ip.len - ip.ihl * 4:
            self.err(fno, "UDP length %d, IP payload %d"
                     % (udp.len, ip.len - ip.ihl * 4))
            return None
        if udp.sport < 0xC000:
            self.err(fno, "UDP source port 0x%04x < 0xC000" % udp.sport)
        if getattr(pkt, "wirelen", None) and pkt.wirelen > len(raw(pkt)):
            self.err(fno, "capture truncated (snaplen)")
        return b[:ip.len]

    # IPv6 + UDP (RFC 8200/768): no extension headers, UDP length = IPv6
    # payload length; returns the exact IP packet bytes.
    def check_l3l4_v6(self, fno, pkt, ip, udp):
        b = raw(ip)
        if ip.version != 6 or ip.nh != 17:
            self.err(fno, "IPv6 version %d next header %d"
                     % (ip.version, ip.nh))
        if ip.plen + 40 > len(b):
            self.err(fno, "IPv6 payload length %d > %d bytes"
                     % (ip.plen, len(b) - 40))
            return None
        if udp.len != ip.plen:
            self.err(fno, "UDP length %d, IPv6 payload %d"
                     % (udp.len, ip.plen))
            return None
        if udp.sport < 0xC000:
            self.err(fno, "UDP source port 0x%04x < 0xC000" % udp.sport)
        if getattr(pkt, "wirelen", None) and pkt.wirelen > len(raw(pkt)):
            self.err(fno, "capture truncated (snaplen)")
        return b[:40 + ip.plen]

    # ICRC over IPv6 (A17.3.3): 8 x 0xFF for the LRH, the IPv6 header with
    # traffic class, flow label and hop limit all ones, UDP with its
    # checksum all ones, BTH with FECN/BECN/reserved all ones, the rest up
    # to the ICRC; CRC-32 stored least-significant byte first.
    @staticmethod
    def icrc6(ipb):
        q = IPv6(ipb)
        q.tc, q.fl, q.hlim = 0xff, 0xfffff, 0xff
        q[UDP].chksum = 0xffff
        q[BTH].fecn, q[BTH].becn, q[BTH].resv6 = 1, 1, 0xff
        m = raw(q)
        if len(m) != len(ipb):
            return b"????"      # could not rebuild: reported as a mismatch
        crc = zlib.crc32(b"\xff" * 8 + m[:-4]) & 0xffffffff
        return crc.to_bytes(4, "little")

    # ICRC recomputed by scapy (contrib.roce BTH.compute_icrc, A17.3.3).
    def check_icrc(self, fno, ipb):
        stored = ipb[-4:]
        if ipb[0] >> 4 == 6:
            again = self.icrc6(ipb)
        else:
            q = IP(ipb)
            q[BTH].icrc = None
            again = raw(q)[-4:]
        if again != stored:
            self.err(fno, "ICRC %s, expected %s" % (stored.hex(),
                                                    again.hex()))

    # BTH and extension headers against the opcode (IBTA 9.2-9.3).
    def check_bth(self, fno, bth, udp):
        op = bth.opcode
        if op not in OPS:
            self.err(fno, "unknown BTH opcode 0x%02x" % op)
            return None
        name, seq, has_pay, _ = OPS[op]
        if bth.version != 0:
            self.err(fno, "BTH tver %d" % bth.version)
        ext = sum(HDR_LEN[c] for c in seq)
        rest = udp.len - 8 - 12 - 4 - ext
        if rest < 0:
            self.err(fno, "%s: %d bytes too short for its headers"
                     % (name, -rest))
            return None
        for cls in seq:
            if not bth.haslayer(cls):
                self.err(fno, "%s: %s missing" % (name, cls.__name__))
        if XRCETH in seq and bth.haslayer(XRCETH) and bth[XRCETH].resv:
            self.err(fno, "%s: XRCETH reserved byte 0x%02x"
                     % (name, bth[XRCETH].resv))
        if rest % 4:
            self.err(fno, "%s: payload+pad %d not a multiple of 4"
                     % (name, rest))
        if bth.padcount > rest:
            self.err(fno, "%s: pad %d > %d bytes" % (name, bth.padcount,
                                                    rest))
            return None
        if rest and not has_pay:
            self.err(fno, "%s carries %d payload bytes" % (name, rest))
        paylen = rest - bth.padcount
        if op in PMTU_SIZED and self.pmtu and paylen != self.pmtu:
            self.err(fno, "%s: payload %d != PMTU %d" % (name, paylen,
                                                         self.pmtu))
        return paylen

    def check_reth(self, fno, bth, key, paylen):
        op = bth.opcode
        if op in WRITE_ONLY and bth[RETH].dmalen != paylen:
            self.err(fno, "%s: RETH DMA length %d, payload %d"
                     % (OPS[op][0], bth[RETH].dmalen, paylen))
        if op in WRITE_FIRST:
            self.writes[key] = [bth[RETH].dmalen, paylen]
        elif op in WRITE_MIDDLE | WRITE_LAST and key in self.writes:
            self.writes[key][1] += paylen
            if op in WRITE_LAST:
                want, got = self.writes.pop(key)
                if want != got:
                    msg = "WRITE message carried %d bytes, RETH said %d" \
                          % (got, want)
                    # Retransmitted segments make the sum unreliable.
                    if self.retrans and not self.args.strict_psn:
                        self.warn(fno, msg + " (after a retransmission)")
                    else:
                        self.err(fno, msg)

    # Request PSN sequence per requester -> responder QP (IBTA vol. 1 9.7).
    def check_psn(self, fno, bth, key):
        psn = bth.psn
        if key in self.next_psn:
            lo, hi = self.next_psn[key]
            if psn_diff(psn, lo) < 0:
                self.retrans += 1
                msg = "PSN 0x%06x behind expected 0x%06x " \
                      "(retransmission/duplicate)" % (psn, lo)
                if self.args.strict_psn:
                    self.err(fno, msg)
                else:
                    self.warn(fno, msg)
            elif psn_diff(psn, hi) > 0:
                msg = "PSN 0x%06x skips ahead of 0x%06x" % (psn, hi)
                top = self.top_psn.get(key, hi)
                if psn_diff(psn, top) <= 0 and not self.args.strict_psn:
                    # Back within PSNs already sent: a go-back-N pass
                    # leaves out what the responder acknowledged meanwhile.
                    self.warn(fno, msg + " (already sent before)")
                elif self.args.allow_psn_gaps:
                    self.warn(fno, msg)
                else:
                    self.err(fno, msg)
        lo = hi = 1
        if bth.opcode in READ_REQS:
            # A READ consumes one PSN per response packet (IBTA 9.7).
            n = bth[RETH].dmalen
            if self.pmtu:
                lo = hi = max(1, -(-n // self.pmtu))
            else:
                lo, hi = max(1, -(-n // 4096)), max(1, -(-n // 256))
        self.next_psn[key] = ((psn + lo) % PSN_MOD, (psn + hi) % PSN_MOD)
        end = (psn + hi) % PSN_MOD
        if key not in self.top_psn or psn_diff(end, self.top_psn[key]) > 0:
            self.top_psn[key] = end

    def frame(self, fno, pkt):
        self.frames += 1
        if not pkt.haslayer(UDP) or pkt[UDP].dport != ROCE_PORT:
            return
        udp = pkt[UDP]
        self.roce += 1
        if pkt.haslayer(IPv6):
            ip = pkt[IPv6]
            ipb = self.check_l3l4_v6(fno, pkt, ip, udp)
            family, cls = 6, IPv6
        else:
            ip = pkt[IP]
            ipb = self.check_l3l4(fno, pkt, ip, udp)
            family, cls = 4, IP
        if self.args.family and family != self.args.family:
            self.err(fno, "RoCEv2 over IPv%d, expected IPv%d only"
                     % (family, self.args.family))
        if ipb is None or not pkt.haslayer(BTH):
            if ipb is not None:
                self.err(fno, "UDP/4791 without a BTH")
            return
        bth = cls(ipb)[BTH]
        self.check_icrc(fno, ipb)
        paylen = self.check_bth(fno, bth, udp)
        st = self.per_op.setdefault(bth.opcode, [0, 0])
        st[0] += 1
        if self.args.dump:
            # The format tshark -T fields prints (check_tshark.sh diffs).
            print("%d\t%d\t0x%06x\t%d" % (fno, bth.opcode, bth.dqpn,
                                          bth.psn))
        if paylen is None:
            return
        st[1] += paylen
        key = (ip.src, bth.dqpn)
        if bth.haslayer(DETH):
            key += (bth[DETH].sqpn,)
        if bth.haslayer(RETH):
            self.check_reth(fno, bth, key, paylen)
        if OPS[bth.opcode][3]:
            self.check_psn(fno, bth, key)

    def summary(self):
        out = sys.stderr if self.args.dump else sys.stdout
        print("%-24s %6s %10s" % ("opcode", "frames", "payload"), file=out)
        for op in sorted(self.per_op):
            n, b = self.per_op[op]
            name = OPS.get(op, ("?",))[0]
            print("0x%02x %-19s %6d %10d" % (op, name, n, b), file=out)
        print("%d frames, %d RoCEv2, %d errors, %d warnings, "
              "%d retransmitted/duplicate PSNs, PMTU %s"
              % (self.frames, self.roce, self.errors, self.warnings,
                 self.retrans, self.pmtu or "unknown"), file=out)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pcap")
    ap.add_argument("--min-frames", type=int, default=1,
                    help="fail with fewer RoCEv2 frames (default 1)")
    ap.add_argument("--expect-opcodes", default="",
                    help="comma-separated BTH opcodes that must appear")
    ap.add_argument("--strict-psn", action="store_true",
                    help="fail on retransmitted/duplicate request PSNs")
    ap.add_argument("--allow-psn-gaps", action="store_true",
                    help="only warn when request PSNs skip ahead")
    ap.add_argument("--pmtu", type=int, default=0,
                    help="path MTU (default: learnt from FIRST/MIDDLE "
                    "payloads if they agree), for READ PSN accounting")
    ap.add_argument("--family", type=int, choices=(4, 6), default=0,
                    help="every RoCEv2 frame must be over this IP version")
    ap.add_argument("--dump", action="store_true",
                    help="print frame, opcode, dest QP, PSN per frame "
                    "(summary goes to stderr)")
    ap.add_argument("--quiet", action="store_true", help="no warnings")
    args = ap.parse_args(argv)
    try:
        args.expect = [int(x, 0) for x in args.expect_opcodes.split(",")
                       if x.strip()]
    except ValueError:
        ap.error("bad --expect-opcodes %r" % args.expect_opcodes)
    return args


def main(argv):
    args = parse_args(argv)
    ck = Checker(args)
    try:
        if not ck.pmtu:
            ck.pmtu = learn_pmtu(args.pcap)
        with PcapReader(args.pcap) as rd:
            for fno, pkt in enumerate(rd, 1):
                if not isinstance(pkt, Ether):
                    ck.err(fno, "not an Ethernet frame")
                    continue
                try:
                    ck.frame(fno, pkt)
                except Exception as e:  # malformed beyond dissection
                    ck.err(fno, "cannot dissect: %r" % e)
    except (OSError, EOFError) as e:
        print("%s: %s" % (args.pcap, e), file=sys.stderr)
        return 2
    ck.summary()
    for op in args.expect:
        if op not in ck.per_op:
            ck.err(0, "expected opcode 0x%02x (%s) absent"
                   % (op, OPS.get(op, ("?",))[0]))
    if ck.roce < args.min_frames:
        ck.err(0, "%d RoCEv2 frames, fewer than %d"
               % (ck.roce, args.min_frames))
    return 1 if ck.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
