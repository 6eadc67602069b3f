#!/usr/bin/env python3
"""make-corpus.py: writes the fuzzers' seed corpus (tests/fuzz/corpus/), small
valid files of every kind the readers take, so that fuzzing starts from deep
inside the decoders (and transport streams' ends for fuzz-ts-end, tiny
clips for fuzz-file-end, MP4 boxes for fuzz-mp4, Matroska, YUV4MPEG2 and the
first bytes of every container for fuzz-mkv, fuzz-y4m and fuzz-video-kind).
Run once with /usr/bin/python3 (numpy, Pillow), libjpeg-turbo-progs'
cjpeg/jpegtran, ffmpeg and GStreamer's gst-launch-1.0 (x264enc, the isomp4
and Matroska muxers, y4menc); the files are committed.  `make-corpus.py
KIND...` writes only those folders (mp4, mkv, ...): the others are left as
they are (the tools' output changes with their versions); png and jpeg, drawn
from one random sequence, are those of a run of all only when both are
written."""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def raw_png(width, height, depth, colour, rows, extra=b"", interlace=0):
    """A PNG from already packed rows (filter byte 0 added here)."""
    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, interlace)
    data = b"".join(b"\0" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra +
            chunk(b"IDAT", zlib.compress(data, 9)) + chunk(b"IEND", b""))


def pack_bits(values, depth):
    out, acc, n = bytearray(), 0, 0
    for v in values:
        acc = (acc << depth) | v
        n += depth
        if n == 8:
            out.append(acc)
            acc, n = 0, 0
    if n:
        out.append(acc << (8 - n))
    return bytes(out)


def write(kind, name, data):
    os.makedirs(os.path.join(OUT, kind), exist_ok=True)
    with open(os.path.join(OUT, kind, name), "wb") as f:
        f.write(data)


def pngs(rng):
    w, h = 7, 5
    for depth in (1, 2, 4, 8):
        rows = [pack_bits(rng.integers(0, 1 << depth, w), depth) for _ in range(h)]
        write("png", f"gray{depth}.png", raw_png(w, h, depth, 0, rows))
        palette = chunk(b"PLTE", bytes(rng.integers(0, 256, 3 * (1 << depth), dtype=np.uint8)))
        trns = chunk(b"tRNS", bytes(rng.integers(0, 256, 1 << depth, dtype=np.uint8)))
        write("png", f"palette{depth}.png", raw_png(w, h, depth, 3, rows, palette))
        write("png", f"palette{depth}-trns.png", raw_png(w, h, depth, 3, rows, palette + trns))
    gray16 = [rng.integers(0, 65536, w).astype(">u2").tobytes() for _ in range(h)]
    write("png", "gray16.png", raw_png(w, h, 16, 0, gray16))
    write("png", "gray16-sbit10.png", raw_png(w, h, 16, 0, gray16, chunk(b"sBIT", b"\x0a")))
    write("png", "gray8-trns.png",
          raw_png(w, h, 8, 0, [bytes(rng.integers(0, 4, w, dtype=np.uint8)) for _ in range(h)],
                  chunk(b"tRNS", b"\0\2")))
    for depth, dtype in ((8, np.uint8), (16, ">u2")):
        top = 1 << depth
        for colour, channels in ((2, 3), (4, 2), (6, 4)):
            rows = [rng.integers(0, top, w * channels).astype(dtype).tobytes() for _ in range(h)]
            write("png", f"c{colour}-{depth}.png", raw_png(w, h, depth, colour, rows))
            write("png", f"c{colour}-{depth}-adam7.png", adam7(w, h, depth, colour, channels, rng))
    rgb_trns = chunk(b"tRNS", b"\0\1\0\2\0\3")
    write("png", "rgb8-trns-text.png",
          raw_png(w, h, 8, 2, [bytes(rng.integers(0, 4, 3 * w, dtype=np.uint8)) for _ in range(h)],
                  rgb_trns + chunk(b"tEXt", b"Comment\0seed") + chunk(b"gAMA", b"\0\0\xb1\x8f")))
    write("png", "one-pixel.png", raw_png(1, 1, 8, 0, [b"\x80"]))


def adam7(w, h, depth, colour, channels, rng):
    """An Adam7-interlaced PNG: each pass's sub-image, rows filtered with 0."""
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
              (0, 1, 1, 2)]
    sample = depth // 8
    pixels = rng.integers(0, 1 << depth, (h, w, channels))
    data = b""
    for x0, y0, dx, dy in passes:
        cols = range(x0, w, dx)
        if not len(cols):
            continue
        for y in range(y0, h, dy):
            row = pixels[y, x0::dx].astype(">u2" if sample == 2 else np.uint8).tobytes()
            data += b"\0" + row
    ihdr = struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, 1)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(data, 9)) +
            chunk(b"IEND", b""))


def jpegs(rng, tmp):
    y, x = np.mgrid[0:16, 0:24]
    rgb = np.stack([(x * 10) % 256, (y * 15) % 256, (x * y) % 256], -1).astype(np.uint8)
    rgb = np.clip(rgb.astype(int) + rng.integers(-8, 8, rgb.shape), 0, 255).astype(np.uint8)
    Image.fromarray(rgb).save(os.path.join(tmp, "in.ppm"))
    Image.fromarray(rgb[:, :, 0]).save(os.path.join(tmp, "in.pgm"))
    variants = {
        "420.jpg": ["-sample", "2x2", "in.ppm"],
        "422.jpg": ["-sample", "2x1", "in.ppm"],
        "444.jpg": ["-sample", "1x1", "in.ppm"],
        "411.jpg": ["-sample", "4x1", "in.ppm"],
        "gray.jpg": ["-grayscale", "in.ppm"],
        "gray-pgm.jpg": ["in.pgm"],
        "progressive.jpg": ["-progressive", "in.ppm"],
        "restart.jpg": ["-restart", "1", "in.ppm"],
        "arithmetic.jpg": ["-arithmetic", "in.ppm"],
        "rgb-coded.jpg": ["-rgb", "in.ppm"],
        "optimized-q10.jpg": ["-optimize", "-quality", "10", "in.ppm"],
        "dct-float.jpg": ["-dct", "float", "-quality", "100", "in.ppm"],
    }
    for name, args in variants.items():
        data = subprocess.run(["cjpeg"] + args[:-1] + [os.path.join(tmp, args[-1])],
                              check=True, capture_output=True).stdout
        write("jpeg", name, data)
    # Odd sizes: partial MCUs at the right and bottom.
    Image.fromarray(rgb[:13, :11]).save(os.path.join(tmp, "odd.ppm"))
    write("jpeg", "odd-420.jpg", subprocess.run(
        ["cjpeg", "-sample", "2x2", os.path.join(tmp, "odd.ppm")], check=True,
        capture_output=True).stdout)
    cmyk = Image.fromarray(np.concatenate([rgb, rgb[:, :, :1]], -1), "CMYK")
    cmyk.save(os.path.join(tmp, "cmyk.jpg"), "JPEG", quality=80)
    write("jpeg", "cmyk.jpg", open(os.path.join(tmp, "cmyk.jpg"), "rb").read())
    Image.fromarray(rgb).save(os.path.join(tmp, "exif.jpg"), "JPEG", quality=75,
                              exif=b"Exif\0\0MM\0*\0\0\0\x08\0\0")
    write("jpeg", "exif.jpg", open(os.path.join(tmp, "exif.jpg"), "rb").read())


def analyze_seeds():
    """Inputs of fuzz-analyze.c: format, flags, width, height, stride delta,
    [depth], matrix, range, method, n percentiles, percentiles, [roi], pixels."""
    formats = ["GRAY8", "GRAY16", "RGB", "BGR", "RGBA", "BGRA", "RGBX", "BGRX", "RGB16", "RGBA16",
               "I420", "NV12", "P010"]
    for f, name in enumerate(formats):
        for flags, tag in ((0x00, "plain"), (0x20, "init"), (0xe0, "depth-roi")):
            head = struct.pack("<BBHHB", f, flags, 13, 7, 8 + 2 * (f % 3))
            if flags & 0x80:
                head += bytes([10 if f in (1, 8, 9) else 0])
            head += bytes([f % 3, f % 2, f % 3, 3])
            head += struct.pack("<HHH", 2400, 32400, 62394)  # p = raw / 600 - 4: 0, 50, 99.99
            if flags & 0x40:
                head += struct.pack("<HHHH", 6, 6, 9, 5)
            pixels = bytes((i * 37 + f) % 256 for i in range(13 * 7 * 8 * 2))
            write("analyze", f"{name.lower()}-{tag}.bin", head + pixels)


def ts_packet(pid, unit_start, continuity, payload):
    """One 188-byte packet; a payload under 184 bytes padded by an
    adaptation field, as muxers end a PES."""
    head = bytes([0x47, (0x40 if unit_start else 0) | pid >> 8, pid & 0xFF])
    if len(payload) == 184:
        return head + bytes([0x10 | continuity]) + payload
    field = 183 - len(payload)
    stuffing = bytes([0]) + b"\xff" * (field - 1) if field else b""
    return head + bytes([0x30 | continuity, field]) + stuffing + payload


def ts_stream(size, sync, pes_sizes, stated=True):
    """PES of the given payload sizes on PID 0x100 split into packets of
    size bytes (192: M2TS's time code first; 204: parity after)."""
    out, cc = bytearray(), 0
    for n in pes_sizes:
        body = bytes((i * 29) % 251 for i in range(n))
        length = len(body) + 8 if stated else 0
        pes = bytes([0, 0, 1, 0xE0, length >> 8, length & 0xFF, 0x80, 0x80, 5, 0x21, 0, 1, 0, 1])
        pes += body
        for at in range(0, len(pes), 184):
            out += bytes(sync) + ts_packet(0x100, at == 0, cc, pes[at:at + 184])
            out += bytes(size - 188 - sync)
            cc = (cc + 1) % 16
    return bytes(out)


def ts_end_seeds():
    """Inputs of fuzz-ts-end.c: the ends of transport streams, whole and cut,
    in each packet size."""
    sizes = [300, 1000, 50, 700, 2000]
    for size, sync in ((188, 0), (192, 4), (204, 0), (208, 0)):
        whole = ts_stream(size, sync, sizes)
        write("ts-end", f"whole-{size}.ts", whole)
        write("ts-end", f"cut-in-packet-{size}.ts", whole[:-size // 2])
        write("ts-end", f"cut-in-pes-{size}.ts", whole[:-3 * size])
    write("ts-end", "unstated-188.ts", ts_stream(188, 0, sizes, stated=False))


def file_end_seeds(tmp):
    """Inputs of fuzz-file-end.c: tiny clips in the containers whose ends it
    walks (MP4 with its sample tables first and fragmented, FLV, IVF, Ogg,
    MPEG-PS), whole and less their last bytes, written by FFmpeg."""
    clips = {
        "faststart.mp4": ["-c:v", "libx264", "-movflags", "+faststart"],
        "moov-last.mp4": ["-c:v", "libx264"],
        "fragmented.mp4": ["-c:v", "libx264", "-movflags", "frag_keyframe+empty_moov",
                           "-g", "1"],
        "h264.flv": ["-c:v", "libx264"],
        "vp8.ivf": ["-c:v", "libvpx"],
        "theora.ogv": ["-c:v", "libtheora"],
        "mpeg2.mpg": ["-c:v", "mpeg2video"],
        "mpeg1.mpg": ["-c:v", "mpeg1video", "-f", "mpeg"],
    }
    for name, args in clips.items():
        path = os.path.join(tmp, name)
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                        "testsrc2=size=16x16:duration=0.12:rate=25", *args, path], check=True)
        with open(path, "rb") as f:
            whole = f.read()
        write("file-end", name, whole)
        write("file-end", "cut-" + name, whole[:-37])


def box(kind, *parts):
    """A box with a 32-bit size (size 0: to the end of its parent)."""
    body = b"".join(parts)
    return struct.pack(">I", 8 + len(body)) + kind + body


def box64(kind, *parts):
    """A box with a 64-bit size (size field 1)."""
    body = b"".join(parts)
    return struct.pack(">I", 1) + kind + struct.pack(">Q", 16 + len(body)) + body


def full(kind, version, flags, *parts):
    return box(kind, struct.pack(">I", version << 24 | flags), *parts)


IDENTITY = (0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)


def rotation(quarter_turns, width, height):
    """The tkhd matrix of a clip turned clockwise (as phones write it)."""
    one, minus_one = 0x10000, 0xFFFF0000
    return {0: IDENTITY,
            1: (0, one, 0, minus_one, 0, 0, height << 16, 0, 0x40000000),
            2: (minus_one, 0, 0, 0, minus_one, 0, width << 16, height << 16, 0x40000000),
            3: (0, minus_one, 0, one, 0, 0, 0, width << 16, 0x40000000)}[quarter_turns]


def times(version, created, timescale, duration):
    if version == 1:
        return struct.pack(">QQIQ", created, created + 1, timescale, duration)
    return struct.pack(">IIII", created, created + 1, timescale, duration)


def mvhd(version=0, created=3786825600, duration=1000):
    return full(b"mvhd", version, 0, times(version, created, 1000, duration),
                struct.pack(">IH10x", 0x10000, 0x100), struct.pack(">9I", *IDENTITY),
                bytes(24), struct.pack(">I", 3))


def tkhd(track, version=0, created=3786825600, duration=1000, matrix=IDENTITY, size=(16, 8)):
    if version == 1:
        head = struct.pack(">QQI4xQ", created, created + 1, track, duration)
    else:
        head = struct.pack(">III4xI", created, created + 1, track, duration)
    return full(b"tkhd", version, 3, head, bytes(16), struct.pack(">9I", *matrix),
                struct.pack(">II", size[0] << 16, size[1] << 16))


def trak(track, handler, version=0, matrix=IDENTITY, duration=1000, co64=False, edit=False,
         extra=b"", reverse=False):
    """A track of one sample: header, optional edit list, media header,
    handler and the sample tables (32- or 64-bit chunk offsets); with
    reverse, the track's and the media's boxes in the reverse order (each
    header last)."""
    offsets = (full(b"co64", 0, 0, struct.pack(">IQ", 1, 48)) if co64 else
               full(b"stco", 0, 0, struct.pack(">II", 1, 48)))
    entry = {b"vide": box(b"avc1", bytes(6), struct.pack(">H", 1), bytes(16),
                          struct.pack(">HH", 16, 8), bytes(50)),
             b"soun": box(b"mp4a", bytes(6), struct.pack(">H", 1), bytes(20)),
             b"text": box(b"text", bytes(6), struct.pack(">H", 1), bytes(8))}[handler]
    stbl = box(b"stbl", full(b"stsd", 0, 0, struct.pack(">I", 1), entry),
               full(b"stts", 0, 0, struct.pack(">III", 1, 1, duration)),
               full(b"stsc", 0, 0, struct.pack(">IIII", 1, 1, 1, 1)),
               full(b"stsz", 0, 0, struct.pack(">III", 0, 1, 8)), offsets)
    header = {b"vide": full(b"vmhd", 0, 1, bytes(8)), b"soun": full(b"smhd", 0, 0, bytes(4)),
              b"text": full(b"nmhd", 0, 0)}[handler]
    minf = box(b"minf", header,
               box(b"dinf", full(b"dref", 0, 0, struct.pack(">I", 1), full(b"url ", 0, 1))), stbl)
    mdhd = full(b"mdhd", version, 0, times(version, 3786825600, 1000, duration),
                struct.pack(">HH", 0x55c4, 0))
    hdlr = full(b"hdlr", 0, 0, bytes(4), handler, bytes(12), b"lumahist\0")
    edts = box(b"edts", full(b"elst", 0, 0, struct.pack(">IIiI", 1, duration - 100, 100,
                                                         0x10000))) if edit else b""
    order = (lambda boxes: boxes[::-1]) if reverse else (lambda boxes: boxes)
    mdia = box(b"mdia", *order([mdhd, hdlr, minf]))
    return box(b"trak", *order([tkhd(track, version, matrix=matrix, duration=duration), edts,
                                extra, mdia]))


def chpl(version=1, chapters=((0, b"Intro"), (5000000, b"Middle"), (9000000, b"End"))):
    """A Nero chapter list (times in 100 ns), as FFmpeg writes it into udta."""
    body = struct.pack(">I", 0) if version == 1 else b""
    body += bytes([len(chapters)])
    for start, title in chapters:
        body += struct.pack(">QB", start, len(title)) + title
    return full(b"chpl", version, 0, body)


def mp4_seeds(tmp):
    """Inputs of fuzz-mp4.c: small MP4, QuickTime and 3GP files built box by
    box (media data before and after moov, 32- and 64-bit sizes, a last box
    of size 0, co64, rotated tracks, header versions 0 and 1, edit lists,
    chapter lists and a QuickTime chapter track, fragments) and a few that
    GStreamer's muxers and FFmpeg wrote."""
    isom = box(b"ftyp", b"isom", struct.pack(">I", 0x200), b"isomiso2avc1mp41")
    qt = box(b"ftyp", b"qt  ", struct.pack(">I", 0x200), b"qt  ")
    gpp = box(b"ftyp", b"3gp4", struct.pack(">I", 0), b"3gp4isom")
    mdat = box(b"mdat", bytes(range(8)))
    video = trak(1, b"vide", edit=True)
    sound = trak(2, b"soun")
    mvex = box(b"mvex", full(b"trex", 0, 0, struct.pack(">5I", 1, 1, 0, 0, 0)))

    def fragment(n):
        traf = box(b"traf", full(b"tfhd", 0, 0x20000, struct.pack(">I", 1)),
                   full(b"tfdt", 1, 0, struct.pack(">Q", n * 40)),
                   full(b"trun", 0, 0x201, struct.pack(">IiI", 1, 0, 8)))
        moof = box(b"moof", full(b"mfhd", 0, 0, struct.pack(">I", n)), traf)
        return moof + box(b"mdat", bytes(8))

    seeds = {
        "moov-last.mp4": isom + mdat + box(b"moov", mvhd(), video, sound),
        "moov-first.mp4": isom + box(b"moov", mvhd(), sound, video) + mdat,
        "size64.mp4": isom + box64(b"mdat", bytes(8)) + box64(b"moov", mvhd(), video),
        "size0-mdat.mp4": isom + box(b"moov", mvhd(), video) + struct.pack(">I", 0) + b"mdat" +
                          bytes(8),
        "size0-moov.mp4": isom + mdat + struct.pack(">I", 0) + b"moov" + mvhd() + video,
        "v1-co64.mp4": isom + mdat + box(b"moov", mvhd(1, 1 << 32), trak(1, b"vide", 1, co64=True)),
        "v1-mvhd-v0-tracks.mp4": isom + mdat + box(b"moov", mvhd(1), video),
        "audio-only.mp4": isom + mdat + box(b"moov", mvhd(), sound),
        "chpl.mp4": isom + mdat + box(b"moov", mvhd(), video, box(b"udta", chpl())),
        "chpl-v0-udta.mp4": isom + mdat + box(b"moov", mvhd(), video,
                                              box(b"udta", box(b"\xa9nam", b"clip"), chpl(0))),
        "udta-no-chpl.mp4": isom + mdat + box(b"moov", mvhd(), video,
                                              box(b"udta", box(b"\xa9nam", b"clip"))),
        "chapter-track.mov": qt + mdat + box(
            b"moov", mvhd(),
            trak(1, b"vide", extra=box(b"tref", box(b"chap", struct.pack(">I", 2)))),
            trak(2, b"text"), box(b"udta", chpl())) + box(b"free", bytes(8)),
        "moov-then-uuid.mov": qt + mdat + box(b"moov", mvhd(), video) +
                              box(b"uuid", bytes(16), b"<x:xmpmeta/>"),
        "plain.3gp": gpp + mdat + box(b"moov", mvhd(), video),
        "fragmented.mp4": isom + box(b"moov", mvhd(duration=0), trak(1, b"vide", duration=0), mvex)
                          + fragment(1) + fragment(2),
    }
    for turns in (1, 2, 3):
        seeds[f"rotated-{turns * 90}.mp4"] = isom + mdat + box(
            b"moov", mvhd(), trak(1, b"vide", matrix=rotation(turns, 16, 8)))
    seeds["headers-last.mp4"] = isom + mdat + box(b"moov", mvhd(), trak(1, b"vide", reverse=True))
    seeds["rotated-90-v1.mov"] = qt + mdat + box(
        b"moov", mvhd(1), trak(1, b"vide", 1, matrix=rotation(1, 16, 8)))
    for name, data in seeds.items():
        write("mp4", name, data)
    # What the muxers write back (qtmux, mp4mux, 3gppmux, a fragmented
    # mp4mux file), and what FFmpeg writes with chapters.
    source = ["videotestsrc", "num-buffers=3", "!", "video/x-raw,width=16,height=16,framerate=25/1",
              "!", "x264enc", "key-int-max=1", "!"]
    muxers = {"qtmux.mov": ["qtmux"], "mp4mux.mp4": ["mp4mux"], "3gppmux.3gp": ["3gppmux"],
              "mp4mux-faststart.mp4": ["mp4mux", "faststart=true"],
              "mp4mux-fragmented.mp4": ["mp4mux", "fragment-duration=40"]}
    for name, muxer in muxers.items():
        path = os.path.join(tmp, name)
        subprocess.run(["gst-launch-1.0", "-q", *source, *muxer, "!", "filesink",
                        "location=" + path], check=True)
        write("mp4", "gst-" + name, open(path, "rb").read())
    chapters = os.path.join(tmp, "chapters.txt")
    with open(chapters, "w") as f:
        f.write(";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=40\ntitle=One\n"
                "[CHAPTER]\nTIMEBASE=1/1000\nSTART=40\nEND=120\ntitle=Two\n")
    for name in ("chapters.mp4", "chapters.mov"):
        path = os.path.join(tmp, name)
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                        "testsrc2=size=16x16:duration=0.12:rate=25", "-i", chapters,
                        "-map_metadata", "1", "-map_chapters", "1", "-c:v", "libx264", path],
                       check=True)
        write("mp4", "ffmpeg-" + name, open(path, "rb").read())


def ebml(element_id, payload, size_width=0):
    """An EBML element: its ID (bytes as written), its size as a variable-
    length integer (the narrowest, or size_width bytes; None: unknown) and
    its payload."""
    if size_width is None:
        return element_id + b"\x01" + b"\xff" * 7 + payload
    n = len(payload)
    width = size_width or next(w for w in range(1, 9) if n < (1 << 7 * w) - 1)
    return element_id + (1 << 7 * width | n).to_bytes(width, "big") + payload


def ebml_uint(element_id, value, width=None):
    width = width or max(1, (value.bit_length() + 7) // 8)
    return ebml(element_id, value.to_bytes(width, "big"))


def ebml_head(doctype=b"matroska", size_width=0):
    return ebml(b"\x1a\x45\xdf\xa3",
                ebml_uint(b"\x42\x86", 1) + ebml_uint(b"\x42\xf7", 1) +
                ebml_uint(b"\x42\xf2", 4) + ebml_uint(b"\x42\xf3", 8) +
                ebml(b"\x42\x82", doctype) + ebml_uint(b"\x42\x87", 4) +
                ebml_uint(b"\x42\x85", 2), size_width)


def block(track, offset, frame, simple=True):
    body = bytes([0x80 | track]) + offset.to_bytes(2, "big", signed=True) + b"\x80" + frame
    return ebml(b"\xa3" if simple else b"\xa1", body)


def matroska_by_hand():
    """Matroska files built here: a segment with its Info (timecode scale),
    two tracks (video, audio), tags (FFmpeg's per-track DURATION), clusters
    of SimpleBlocks and BlockGroups, cues; whole, cut, and unknown-size
    segment and clusters."""
    info = ebml(b"\x15\x49\xa9\x66", ebml_uint(b"\x2a\xd7\xb1", 1000000) +
                ebml(b"\x44\x89", struct.pack(">f", 1000.0)))
    tracks = ebml(b"\x16\x54\xae\x6b",
                  ebml(b"\xae", ebml_uint(b"\xd7", 1) + ebml_uint(b"\x73\xc5", 0x1234) +
                       ebml_uint(b"\x83", 1) + ebml(b"\x86", b"V_UNCOMPRESSED") +
                       ebml(b"\xe0", ebml_uint(b"\xb0", 4) + ebml_uint(b"\xba", 4) +
                            ebml(b"\x2e\xb5\x24", b"I420"))) +
                  ebml(b"\xae", ebml_uint(b"\xd7", 2) + ebml_uint(b"\x73\xc5", 0x5678) +
                       ebml_uint(b"\x83", 2) + ebml(b"\x86", b"A_PCM/INT/LIT") +
                       ebml(b"\xe1", ebml(b"\xb5", struct.pack(">f", 8000.0)) +
                            ebml_uint(b"\x9f", 1) + ebml_uint(b"\x62\x64", 16))))

    def tag(uid, duration):
        return ebml(b"\x73\x73", ebml(b"\x63\xc0", ebml_uint(b"\x63\xc5", uid)) +
                    ebml(b"\x67\xc8", ebml(b"\x45\xa3", b"DURATION") +
                         ebml(b"\x44\x87", duration)))
    tags = ebml(b"\x12\x54\xc3\x67", tag(0x1234, b"00:00:00.400000000\0") +
                tag(0x5678, b"00:00:01.000000000"))
    frame = bytes(range(24))

    def cluster(time, size_width=0):
        blocks = ebml_uint(b"\xe7", time)
        for i in range(4):
            blocks += block(1, i * 40, frame)
            blocks += ebml(b"\xa0", ebml_uint(b"\x9b", 40) + block(2, i * 40 + 20, frame[:8],
                                                                    simple=False))
        return ebml(b"\x1f\x43\xb6\x75", blocks, size_width)
    cues = ebml(b"\x1c\x53\xbb\x6b",
                ebml(b"\xbb", ebml_uint(b"\xb3", 0) +
                     ebml(b"\xb7", ebml_uint(b"\xf7", 1) + ebml_uint(b"\xf1", 0))))
    clusters = cluster(0) + cluster(160) + cluster(320)
    body = info + tracks + tags + clusters + cues
    write("mkv", "hand-tagged.mkv", ebml_head() + ebml(b"\x18\x53\x80\x67", body))
    untagged = info + tracks + clusters + cues
    whole = ebml_head() + ebml(b"\x18\x53\x80\x67", untagged, 8)
    write("mkv", "hand-untagged.mkv", whole)
    write("mkv", "hand-untagged-cut-in-cluster.mkv", whole[:-len(cues) - 30])
    write("mkv", "hand-untagged-cut-in-group.mkv", whole[:-len(cues) - 5])
    streamed = (ebml_head(b"webm", 8) + b"\x18\x53\x80\x67\x01" + b"\xff" * 7 + info + tracks +
                cluster(0, None) + cluster(160, None))
    write("mkv", "hand-streamed.webm", streamed)
    # Tags first, timecode scale of 1 us, a 4-byte ID and 8-byte sizes.
    odd = (ebml_head(size_width=8) +
           ebml(b"\x18\x53\x80\x67", tags + ebml(b"\x15\x49\xa9\x66",
                                                 ebml_uint(b"\x2a\xd7\xb1", 1000)) +
                tracks + cluster(7) + ebml(b"\xec", bytes(16)), 8))
    write("mkv", "hand-tags-first.mkv", odd)


def mkv_seeds(tmp):
    """Inputs of fuzz-mkv.c: Matroska and WebM files by GStreamer's
    matroskamux and webmmux (clusters sized, and streamable: unknown sizes)
    and FFmpeg (tracks' DURATION tags, cues, an audio track), whole and cut,
    and files built here."""
    video = ["videotestsrc", "num-buffers=4", "!",
             "video/x-raw,width=16,height=16,framerate=25/1"]
    audio = ["audiotestsrc", "num-buffers=8", "samplesperbuffer=400", "!", "audioconvert", "!",
             "vorbisenc", "!"]
    pipelines = {
        "matroskamux.mkv": video + ["!", "x264enc", "!", "matroskamux", "!"],
        "matroskamux-streamable.mkv": video + ["!", "x264enc", "!", "matroskamux",
                                               "streamable=true", "!"],
        "webmmux.webm": video + ["!", "vp8enc", "!", "webmmux", "name=mux", "!"],
        "webmmux-audio.webm": video + ["!", "vp8enc", "!", "webmmux", "name=mux", "!"],
    }
    for name, elements in pipelines.items():
        path = os.path.join(tmp, name)
        argv = ["gst-launch-1.0", "-q"] + elements + ["filesink", f"location={path}"]
        if name == "webmmux-audio.webm":
            argv += audio + ["mux."]
        subprocess.run(argv, check=True)
        with open(path, "rb") as f:
            whole = f.read()
        write("mkv", name, whole)
        write("mkv", "cut-" + name, whole[:len(whole) * 2 // 3])
    clips = {
        "ffmpeg.mkv": ["-c:v", "libx264"],
        "ffmpeg-audio.mkv": ["-f", "lavfi", "-i", "sine=duration=0.4:sample_rate=8000",
                             "-c:v", "libx264", "-c:a", "pcm_s16le"],
        "ffmpeg.webm": ["-c:v", "libvpx"],
    }
    for name, args in clips.items():
        path = os.path.join(tmp, name)
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                        "testsrc2=size=16x16:duration=0.12:rate=25", *args, path], check=True)
        with open(path, "rb") as f:
            whole = f.read()
        write("mkv", name, whole)
        write("mkv", "cut-" + name, whole[:-37])
    matroska_by_hand()


def y4m_file(header, frames, width, height, plane_bytes, frame_params=b""):
    out = b"YUV4MPEG2 " + header + b"\n"
    for i in range(frames):
        out += b"FRAME" + frame_params + b"\n" + bytes((i * 7 + k) % 256
                                                       for k in range(plane_bytes))
    return out


def y4m_seeds(tmp):
    """Inputs of fuzz-y4m.c: YUV4MPEG2 files of each chroma tag, interlace
    flag, with frame parameters and comments, whole, cut inside a frame's
    planes and its header, header only, and junk after the last frame; one
    by GStreamer's y4menc."""
    w, h = 6, 4
    shapes = {
        "": w * h * 3 // 2, "C420jpeg": w * h * 3 // 2, "C420paldv": w * h * 3 // 2,
        "C420mpeg2": w * h * 3 // 2, "C420": w * h * 3 // 2, "C422": w * h * 2,
        "C444": w * h * 3, "C444alpha": w * h * 4, "C411": w * h * 3 // 2, "Cmono": w * h,
        "Cmono16": w * h * 2, "C420p10": w * h * 3, "C444p12": w * h * 6,
    }
    for tag, planes in shapes.items():
        name = (tag or "none").lower()
        header = f"W{w} H{h} F25:1 Ip A1:1 {tag}".strip().encode()
        whole = y4m_file(header, 3, w, h, planes)
        write("y4m", f"{name}.y4m", whole)
        write("y4m", f"{name}-cut-in-planes.y4m", whole[:-planes // 2])
    header = b"W5 H3 F30000:1001 It A10:11 C420jpeg XYSCSS=420JPEG XCOLORRANGE=FULL"
    whole = y4m_file(header, 4, 5, 3, 5 * 3 + 2 * 3 * 2, b" Ib XFRAME=1")
    write("y4m", "odd-params.y4m", whole)
    write("y4m", "odd-params-cut-in-frame-header.y4m", whole[:-(5 * 3 + 2 * 3 * 2) - 4])
    write("y4m", "odd-params-junk-after.y4m", whole + b"\n\n# not a frame\n")
    write("y4m", "mixed-interlace.y4m", y4m_file(b"W4 H2 Im C444", 2, 4, 2, 24, b" It"))
    write("y4m", "header-only.y4m", b"YUV4MPEG2 W16 H16 F25:1 C420jpeg\n")
    # Headers longer than y4m-end.c reads of a frame's (1024 bytes) and of
    # the file's (4096).
    long_param = b" X" + b"7" * 1100
    write("y4m", "long-frame-header.y4m", y4m_file(b"W2 H2 C444", 2, 2, 2, 12, long_param))
    write("y4m", "long-header.y4m", y4m_file(b"W2 H2 C444 X" + b"8" * 4100, 1, 2, 2, 12))
    write("y4m", "cut-in-first-frame.y4m", y4m_file(b"W16 H16 C420jpeg", 1, 16, 16, 384)[:200])
    path = os.path.join(tmp, "y4menc.y4m")
    subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=2", "!",
                    "video/x-raw,format=Y42B,width=8,height=4,framerate=25/1", "!", "y4menc",
                    "!", "filesink", f"location={path}"], check=True)
    with open(path, "rb") as f:
        write("y4m", "y4menc-422.y4m", f.read())


def video_kind_seeds(tmp):
    """Inputs of fuzz-video-kind.c: the first LHIO_VIDEO_SNIFF_BYTES (512) of
    a file of each container and stream lhio_video_extension() knows, the
    still-image brands of ISO BMFF, a PNG's and a JPEG's, and Motion JPEG
    files whole, cut and zero-padded, which lhio_motion_jpeg_cut reads to
    their end."""
    clips = {
        "mp4": ["-c:v", "libx264", "-f", "mp4"],
        "mov": ["-c:v", "libx264", "-f", "mov"],
        "3gp": ["-c:v", "libx264", "-f", "3gp"],
        "mkv": ["-c:v", "libx264", "-f", "matroska"],
        "webm": ["-c:v", "libvpx", "-f", "webm"],
        "ts": ["-c:v", "libx264", "-f", "mpegts"],
        "m2ts": ["-c:v", "libx264", "-f", "mpegts", "-mpegts_m2ts_mode", "1"],
        "avi": ["-c:v", "mjpeg", "-f", "avi"],
        "y4m": ["-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe"],
        "mpg": ["-c:v", "mpeg2video", "-f", "vob"],
        "flv": ["-c:v", "libx264", "-f", "flv"],
        "ivf": ["-c:v", "libvpx", "-f", "ivf"],
        "ogv": ["-c:v", "libtheora", "-f", "ogg"],
        "asf": ["-c:v", "wmv2", "-f", "asf"],
        "nut": ["-c:v", "ffv1", "-f", "nut"],
        "h264": ["-c:v", "libx264", "-f", "h264"],
        "hevc": ["-c:v", "libx265", "-x265-params", "log-level=none", "-f", "hevc"],
        "m2v": ["-c:v", "mpeg2video", "-f", "mpeg2video"],
        "mjpeg": ["-c:v", "mjpeg", "-f", "mjpeg"],
        "mxf": ["-s", "720x576", "-r", "25", "-c:v", "mpeg2video", "-f", "mxf"],
        "dv": ["-s", "720x576", "-r", "25", "-pix_fmt", "yuv420p", "-c:v", "dvvideo",
               "-f", "dv"],
    }
    for name, args in clips.items():
        path = os.path.join(tmp, "kind." + name)
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                        "testsrc2=size=16x16:duration=0.12:rate=25", *args, path], check=True)
        with open(path, "rb") as f:
            data = f.read()
        if name == "mjpeg":
            write("video-kind", "whole.mjpeg", data)
            write("video-kind", "cut.mjpeg", data[:-100])
            write("video-kind", "padded.mjpeg", data + bytes(300))
            write("video-kind", "cut-padded.mjpeg", data[:-100] + bytes(300))
        else:
            write("video-kind", "head." + name, data[:512])
    for brand in (b"heic", b"avif", b"isom", b"qt  ", b"3gp5"):
        write("video-kind", f"ftyp-{brand.decode().strip()}.bin",
              struct.pack(">I", 24) + b"ftyp" + brand + b"\0\0\0\0" + brand + b"mif1")
    write("video-kind", "moov-first.mov", struct.pack(">I", 16) + b"moov" + bytes(8))
    write("video-kind", "h264-aud.h264", b"\0\0\0\x01\x09\xf0\0\0\0\x01\x67\x42\xc0\x0a")
    write("video-kind", "hevc-aud.hevc", b"\0\0\0\x01\x46\x01\x50\0\0\0\x01\x40\x01\x0c")
    write("video-kind", "image.png", open(os.path.join(HERE, "corpus", "png", "gray8.png"),
                                          "rb").read())
    jpeg = open(os.path.join(HERE, "corpus", "jpeg", "gray.jpg"), "rb").read()
    write("video-kind", "image.jpg", jpeg)
    # Two JPEGs one after the other: Motion JPEG, unless the first one's
    # APP2 MPF index lists the second (a phone's depth or gain map).
    write("video-kind", "two-images.jpg", jpeg + jpeg)
    write("video-kind", "mpf-two-images.jpg",
          jpeg[:2] + b"\xff\xe2\x00\x0aMPF\x00II*\x00" + jpeg[2:] + jpeg)


def main(kinds):
    """Writes the kinds named (folders of corpus/), or all of them (the
    random PNGs and JPEGs are those of a run of all only when both are
    written, in that order)."""
    names = ["png", "jpeg", "file-end", "mp4", "analyze", "ts-end", "mkv", "y4m",
             "video-kind"]
    unknown = [k for k in kinds if k not in names]
    if unknown:
        sys.exit(f"make-corpus.py: unknown kind {', '.join(unknown)} ({', '.join(names)})")
    rng = np.random.default_rng(2024)
    with tempfile.TemporaryDirectory() as tmp:
        writers = {
            "png": lambda: pngs(rng), "jpeg": lambda: jpegs(rng, tmp),
            "file-end": lambda: file_end_seeds(tmp), "mp4": lambda: mp4_seeds(tmp),
            "analyze": analyze_seeds,
            "ts-end": ts_end_seeds, "mkv": lambda: mkv_seeds(tmp), "y4m": lambda: y4m_seeds(tmp),
            "video-kind": lambda: video_kind_seeds(tmp),
        }
        for kind in names:
            if not kinds or kind in kinds:
                writers[kind]()
    for kind in sorted(os.listdir(OUT)):
        files = os.listdir(os.path.join(OUT, kind))
        size = sum(os.path.getsize(os.path.join(OUT, kind, f)) for f in files)
        print(f"{kind}: {len(files)} files, {size} bytes")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
