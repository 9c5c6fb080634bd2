"""pftrace_encode.py — a traceEvents JSON document written as the Perfetto
trace (.pftrace) that rocprofv3 would have written for the same events,
with no protobuf library: every complete event (ph X) becomes a
SLICE_BEGIN / SLICE_END pair of TrackEvents on the thread track of its
pid/tid, its args debug annotations; instants and counters become
TYPE_INSTANT / TYPE_COUNTER events. Event names, categories and
annotation names are interned on one packet sequence (cleared by the first
packet), so the reader's interning path is exercised too.

Used by tests/golden_pftrace.py: the tracelens reader must store the
.pftrace exactly as it stores the JSON (given the JSON is compact, as
json.dumps(..., separators=(",", ":"), ensure_ascii=False) writes it)."""

import struct
from decimal import Decimal

SEQ = 7


def _varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wt):
    return _varint((field << 3) | wt)


def _f_varint(field, v):
    return _key(field, 0) + _varint(v)


def _f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode("utf-8")
    return _key(field, 2) + _varint(len(b)) + b


def _f_double(field, d):
    return _key(field, 1) + struct.pack("<d", d)


def _us_to_ns(v):
    ns = Decimal(repr(v)) * 1000 if isinstance(v, float) else Decimal(v) * 1000
    if ns != ns.to_integral_value():
        raise ValueError(f"time {v} us is not a whole number of ns")
    return int(ns)


class _Interner:
    def __init__(self):
        self.tables = {1: {}, 2: {}, 3: {}}
        self.pending = {1: [], 2: [], 3: []}

    def iid(self, table, text):
        t = self.tables[table]
        if text not in t:
            t[text] = len(t) + 1
            self.pending[table].append((t[text], text))
        return t[text]

    def take(self):
        out = b""
        for table in (1, 2, 3):
            for iid, text in self.pending[table]:
                out += _f_bytes(table, _f_varint(1, iid) + _f_bytes(2, text))
            self.pending[table] = []
        return out


def _annotation(name_field, value, interner):
    body = name_field
    if isinstance(value, bool):
        body += _f_varint(2, int(value))
    elif isinstance(value, int):
        body += _f_varint(3, value) if value >= 0 else _f_varint(4, value)
    elif isinstance(value, float):
        body += _f_double(5, value)
    elif isinstance(value, str):
        body += _f_bytes(6, value)
    elif isinstance(value, dict):
        for k, v in value.items():
            body += _f_bytes(11, _annotation(_f_bytes(10, k), v, interner))
    elif isinstance(value, list):
        for v in value:
            body += _f_bytes(12, _annotation(b"", v, interner))
    elif value is None:
        body += _f_bytes(9, "null")
    else:
        raise TypeError(type(value))
    return body


def _packet(ts, event, interner, first):
    body = b""
    if ts is not None:
        body += _f_varint(8, ts)
    body += _f_varint(10, SEQ)
    interned = interner.take()
    if interned:
        body += _f_bytes(12, interned)
    if first:
        body += _f_varint(13, 1)  # SEQ_INCREMENTAL_STATE_CLEARED
    body += _f_bytes(11, event)
    return _f_bytes(1, body)


class Encoder:
    """The streaming form of encode(): event() gives the bytes of one event
    (its thread track's descriptor first when the track is new), so that a
    large trace can be written one event at a time."""

    def __init__(self):
        self.interner = _Interner()
        self.tracks = {}
        self.first = True

    def _track(self, ev):
        key = (ev.get("pid", 0), ev.get("tid", 0))
        if key in self.tracks:
            return self.tracks[key], b""
        self.tracks[key] = len(self.tracks) + 1
        thread = _f_varint(1, key[0]) + _f_varint(2, key[1])
        desc = _f_varint(1, self.tracks[key]) + _f_bytes(4, thread)
        return self.tracks[key], _f_bytes(1, _f_bytes(60, desc))

    def event(self, ev):
        """bytes of the packets of one traceEvents element."""
        uuid, out = self._track(ev)
        interner, first = self.interner, self.first
        self.first = False
        if ev.get("ph") != "X":
            typ = 4 if ev.get("ph") == "C" else 3
            te = _f_varint(9, typ) + _f_varint(11, uuid)
            return out + _packet(_us_to_ns(ev.get("ts", 0)), te, interner, first)
        return out + self._slice(ev, uuid, _us_to_ns(ev["ts"]), _us_to_ns(ev["dur"]), first)

    def event_ns(self, ev, ts, dur):
        """bytes of a complete event (ph X) whose times are given in ns."""
        uuid, out = self._track(ev)
        first, self.first = self.first, False
        return out + self._slice(ev, uuid, ts, dur, first)

    def _slice(self, ev, uuid, ts, dur, first):
        interner = self.interner
        te = _f_varint(9, 1) + _f_varint(11, uuid)
        if "name" in ev:
            te += _f_varint(10, interner.iid(2, ev["name"]))
        if "cat" in ev:
            te += _f_varint(3, interner.iid(1, ev["cat"]))
        for k, v in (ev.get("args") or {}).items():
            name = _f_varint(1, interner.iid(3, k))
            te += _f_bytes(4, _annotation(name, v, interner))
        out = _packet(ts, te, interner, first)
        end = _f_varint(9, 2) + _f_varint(11, uuid)
        return out + _packet(ts + dur, end, interner, False)

def encode(doc):
    """bytes of the .pftrace holding the events of doc["traceEvents"]."""
    enc = Encoder()
    return b"".join(enc.event(ev) for ev in doc["traceEvents"])
