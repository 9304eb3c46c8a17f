# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf recordings written byte by byte (the format of
doc/RECORD-FORMAT.md), for tests that need files the recorder would never
write: hostile ones (bad lengths, absurd counts) and valid ones built to
hurt (stacks hundreds of thousands of frames deep), and where a function
lies in an ELF file. Used by check_report_hostile.py, check_report.py and
the performance sweep (sweep/perf.py)."""
import struct
import zlib


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def svarint(v):
    return varint(((v << 1) ^ (v >> 63)) & (2**64 - 1))


def string(s):
    b = s.encode() if isinstance(s, str) else s
    return varint(len(b)) + b


HEADER = b"DKREC\x1a\n\x00" + struct.pack("<HHI", 1, 0, 0)


def chunk(payload, crc=None):
    c = zlib.crc32(payload) if crc is None else crc
    return b"C" + varint(len(payload)) + struct.pack("<I", c & 0xFFFFFFFF) + payload


def meta(k, v):
    return b"m" + string(k) + string(v)


def event(i, name, period=0, freq=999):
    return b"e" + varint(i) + string(name) + varint(period) + varint(freq)


def map_(pid, start, length, path, pgoff=0, id_kind=0, image_id=b""):
    return b"p" + svarint(pid) + varint(start) + varint(length) + varint(pgoff) + string(path) \
        + bytes([id_kind]) + varint(len(image_id)) + image_id


def comm(pid, name):
    return b"c" + svarint(pid) + varint(pid) + string(name)


def nodes(pairs):
    """pairs: (back, addr_delta) per node."""
    return b"n" + varint(len(pairs)) + b"".join(varint(b) + svarint(d) for b, d in pairs)


def sample(node, dt=1000, pid=None, period=None):
    change, fields = 0, b""
    if pid is not None:
        change |= 0x02
        fields += svarint(pid)
    if period is not None:
        change |= 0x10
        fields += svarint(period)
    head = node << 3 | (1 if change else 0)
    return b"s" + varint(head) + (bytes([change]) + fields if change else b"") + svarint(dt)


def end(n):
    return b"z" + varint(n)


FAR = 0x10000000


def chain_pairs(depth):
    """The nodes of a chain of depth frames, in turn in /nonexistent/deep.so
    at 0x400000 and deep2.so at 0x400000 + FAR (chain_maps), so that no two
    frames in a row are one [image] frame of report's; and the address of
    its last frame."""
    pairs = [(0, 0x401000)] + [(1, 0x10 + (FAR if i % 2 else -FAR)) for i in range(1, depth)]
    return pairs, 0x401000 + (depth - 1) * 0x10 + (FAR if (depth - 1) % 2 else 0)


def chain_maps(pid, depth):
    size = 0x100000 + depth * 0x10
    return map_(pid, 0x400000, size, "/nonexistent/deep.so") \
        + map_(pid, 0x400000 + FAR, size, "/nonexistent/deep2.so")


def deep(depth, nsamples, spread, pid=4242, nevents=1):
    """One chain of depth frames in two images without symbols
    (chain_pairs); nsamples samples at its last spread nodes, in turn
    (spread 1: every sample on the leaf), all of the first of nevents
    events."""
    pairs, _ = chain_pairs(depth)
    events = b"".join(event(i, "e%d" % i) for i in range(1, nevents))
    body = meta("comm", "deep") + event(0, "cpu-clock") + events + comm(pid, "deep") \
        + chain_maps(pid, depth) + nodes(pairs)
    chunks = [chunk(body)]
    samples = b""
    first = True
    for i in range(nsamples):
        samples += sample(depth - i % spread, pid=pid if first else None, period=1 if first else None)
        first = False
        if len(samples) > 60000:
            chunks.append(chunk(samples))
            samples, first = b"", True
    chunks.append(chunk(samples + end(nsamples)))
    return HEADER + b"".join(chunks)


def chunked(records, per=4000):
    """Records (bytes each) in chunks of per records: a chunk starts the
    sample fields again, so the first sample of each names its pid."""
    return [chunk(b"".join(records[i:i + per])) for i in range(0, len(records), per)]


def many_maps(n, images=1, pid=7):
    """One process with n maps of 4 KiB side by side, of images distinct
    images (/nonexistent/iK.so, in turn) at offsets of their own, and a
    one-frame stack in each map, sampled once: n distinct frames, each
    resolved through the maps."""
    head = meta("comm", "maps") + event(0, "cpu-clock") + comm(pid, "maps")
    maps = [map_(pid, 0x10000000 + i * 0x1000, 0x1000, "/nonexistent/i%d.so" % (i % images),
                 pgoff=i * 0x1000) for i in range(n)]
    body = [nodes([(0, 0x10000100 + i * 0x1000)]) for i in range(n)]
    samples = [sample(i + 1, pid=pid if i % 4000 == 0 else None) for i in range(n)]
    return HEADER + chunk(head) + b"".join(chunked(maps) + chunked(body) + chunked(samples)) \
        + chunk(end(n))


def remaps(n, images, nested=False, depth=1, pid=7):
    """One process that maps an image over the same address n times (of
    images distinct images, /nonexistent/iK.so in turn), each map followed
    by a sample there (a stack of depth frames 16 bytes apart): each map
    replaces the one before from its sample on, so the samples name every
    image. nested: the maps grow by 4 KiB each, each covering all before
    it (one address range per map)."""
    head = meta("comm", "remaps") + event(0, "cpu-clock") + comm(pid, "remaps") \
        + nodes([(0, 0x10000100)] + [(1, 0x10)] * (depth - 1))
    recs = [map_(pid, 0x10000000, 0x1000 * (i + 1 if nested else 1),
                 "/nonexistent/i%d.so" % (i % images)) + sample(depth, pid=pid) for i in range(n)]
    return HEADER + chunk(head) + b"".join(chunked(recs)) + chunk(end(n))


def shared_chain(depth, nsamples, npids, overlap=False):
    """A chain of depth frames in two images (chain_pairs), mapped at the
    same addresses in npids processes, each with a third map of its own
    image (elsewhere, or over the chain's last frame when overlap) so that
    no two lists of maps are the same; nsamples samples on its leaf, from
    the processes in turn."""
    pairs, chain_end = chain_pairs(depth)
    body = meta("comm", "shared") + event(0, "cpu-clock")
    for p in range(1, npids + 1):
        body += comm(p, "shared") + chain_maps(p, depth)
        at = chain_end if overlap else 0x7f0000000000 + p * 0x10000
        body += map_(p, at, 0x10, "/nonexistent/own%d.so" % p)
    body += nodes(pairs)
    samples = [sample(depth, pid=1 + i % npids) for i in range(nsamples)]
    return HEADER + chunk(body) + b"".join(chunked(samples)) + chunk(end(nsamples))


def elf_symbol(path, name, where=None):
    """The file offset of function name in ELF file path (64-bit, little-endian);
    where (a list), when given, receives the file offset of its symbol entry."""
    b = open(path, "rb").read()
    if b[:4] != b"\x7fELF" or b[4] != 2 or b[5] != 1:
        return None
    phoff, shoff = struct.unpack_from("<QQ", b, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", b, 0x36)
    secs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    for s in secs:
        if s[1] != 2:  # SHT_SYMTAB
            continue
        strtab = secs[s[6]]
        for k in range(s[5] // 24):
            st_name, st_info, _, _, st_value, _ = struct.unpack_from("<IBBHQQ", b, s[4] + k * 24)
            end_ = b.index(b"\0", strtab[4] + st_name)
            if st_info & 0xF == 2 and b[strtab[4] + st_name:end_] == name.encode():
                if where is not None:
                    where.append(s[4] + k * 24)
                for i in range(phnum):
                    p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
                        "<IIQQQQ", b, phoff + i * phentsize)
                    if p_type == 1 and p_vaddr <= st_value < p_vaddr + p_filesz:
                        return st_value - p_vaddr + p_offset
    return None
