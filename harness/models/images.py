"""Images for model requests: arrays or encoded bytes -> a neutral base64 image part."""

from __future__ import annotations

import base64
import struct
import zlib

import numpy as np

_MAGIC = {b"\x89PNG": "image/png", b"\xff\xd8\xff": "image/jpeg", b"GIF8": "image/gif", b"RIFF": "image/webp"}


def png_bytes(array) -> bytes:
    """Encode an HxW (grey) or HxWx3/4 uint8 array as PNG (stdlib zlib, no imaging library)."""
    pixels = np.asarray(array)
    if pixels.dtype != np.uint8:
        pixels = np.clip(pixels, 0, 255).astype(np.uint8)
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    if pixels.ndim != 3 or pixels.shape[2] not in (1, 3, 4):
        raise ValueError(f"an image must be HxW, HxWx3 or HxWx4, got shape {pixels.shape}")
    height, width, channels = pixels.shape
    colour_type = {1: 0, 3: 2, 4: 6}[channels]
    rows = np.concatenate([np.zeros((height, 1), np.uint8), pixels.reshape(height, width * channels)], axis=1)

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))


def image_part(image) -> dict:
    """A `{"type": "image", "media_type", "data"}` part from an array, encoded bytes or such a part."""
    if isinstance(image, dict) and image.get("type") == "image":
        return image
    if isinstance(image, (bytes, bytearray)):
        media = next((m for magic, m in _MAGIC.items() if bytes(image).startswith(magic)), None)
        if media is None:
            raise ValueError("image bytes are not PNG, JPEG, GIF or WebP")
        return {"type": "image", "media_type": media, "data": base64.b64encode(bytes(image)).decode("ascii")}
    if hasattr(image, "__array__"):
        return {"type": "image", "media_type": "image/png",
                "data": base64.b64encode(png_bytes(image)).decode("ascii")}
    raise ValueError(f"cannot turn a {type(image).__name__} into an image (give an array or PNG/JPEG bytes)")
