#!/usr/bin/env python3
"""make-corpus.py: writes the fuzzers' seed corpus (tests/fuzz/corpus/), small
valid files of every kind the readers take, so that fuzzing starts from deep
inside the decoders (and transport streams' ends for fuzz-ts-end, tiny
clips for fuzz-file-end, MP4 boxes for fuzz-mp4).  Run once with
/usr/bin/python3 (numpy, Pillow), libjpeg-turbo-progs' cjpeg/jpegtran,
ffmpeg and GStreamer's gst-launch-1.0 (x264enc, the isomp4 muxers); the
files are committed.  Arguments name the kinds to write (mp4, png, ...):
the others are left as they are (the tools' output changes with their
versions); png and jpeg, drawn from one random sequence, go together."""
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


def main():
    """Writes every kind of seed, or only those named (png, jpeg, file-end,
    mp4, analyze, ts-end)."""
    kinds = set(sys.argv[1:]) or {"png", "jpeg", "file-end", "mp4", "analyze", "ts-end"}
    rng = np.random.default_rng(2024)
    with tempfile.TemporaryDirectory() as tmp:
        if kinds & {"png", "jpeg"}:  # one random sequence: written together
            pngs(rng)
            jpegs(rng, tmp)
        if "file-end" in kinds:
            file_end_seeds(tmp)
        if "mp4" in kinds:
            mp4_seeds(tmp)
    if "analyze" in kinds:
        analyze_seeds()
    if "ts-end" in kinds:
        ts_end_seeds()
    for kind in sorted(os.listdir(OUT)):
        files = os.listdir(os.path.join(OUT, kind))
        size = sum(os.path.getsize(os.path.join(OUT, kind, f)) for f in files)
        print(f"{kind}: {len(files)} files, {size} bytes")


if __name__ == "__main__":
    sys.exit(main())
