#!/usr/bin/env python3
"""Draws Magnetar's icon: a neutron star (white-violet core, soft glow) with its two radiation
beams on a dark rounded tile. The same formula as SetWindowIcon() in app/gui/ui_theme.cpp.

    python3 assets/make_icon.py            # writes assets/magnetar-256.png
    convert assets/magnetar-256.png -define icon:auto-resize=256,64,48,32,16 assets/magnetar.ico

Pure Python (zlib + struct): no image library needed."""
import math
import os
import struct
import zlib


def pixel(x, y, size):
    fx = (x + 0.5) / size * 2 - 1
    fy = (y + 0.5) / size * 2 - 1
    ax, ay, corner = abs(fx), abs(fy), 0.3
    mask = 1.0
    if ax > 1 - corner and ay > 1 - corner:
        d = math.hypot(ax - (1 - corner), ay - (1 - corner))
        mask = min(max((corner - d) * size * 0.5, 0.0), 1.0)
    r = math.hypot(fx, fy)
    along = (fx - fy) * 0.7071
    across = (fx + fy) * 0.7071
    beam = math.exp(-across * across * 160.0) * min(max(1.2 - abs(along), 0.0), 1.0)
    glow = math.exp(-r * r * 9.0)
    core = min(max((0.2 - r) * 40.0 * size / 64, 0.0), 1.0)
    red = 22 + 110 * glow + 150 * beam + 255 * core
    green = 24 + 90 * glow + 140 * beam + 255 * core
    blue = 34 + 255 * glow + 255 * beam + 255 * core
    return (int(min(red, 255)), int(min(green, 255)), int(min(blue, 255)), int(255 * mask))


def write_png(path, size):
    rows = bytearray()
    for y in range(size):
        rows.append(0)  # filter: none
        for x in range(size):
            rows.extend(pixel(x, y, size))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(bytes(rows), 9))
    png += chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    write_png(os.path.join(here, "magnetar-256.png"), 256)
