#!/usr/bin/python3
"""ctest image_decoder: ImageDecoder (passes/image.c) against Pillow, the
ONNX reference's decoder, on images Pillow writes in every format and mode
burncc reads (BMP 1/4/8/24/32-bit, PBM/PGM/PPM, PNG gray/palette/RGBA/
16-bit/interlaced, JPEG gray/4:2:0/progressive, TIFF raw/LZW/deflate/
PackBits, WebP lossy/lossless/alpha, JPEG 2000 jp2/j2k), each decoded as
RGB, BGR and Grayscale: the cases go through `burncc check` (the stream a
graph input that check freezes into a constant).  Then hostile streams:
every image truncated and with bytes flipped, as a constant of a model
compiled with `burncc -o`: each compiles or fails with an ImageDecoder
message and exit status 1, never a crash; nothing is written on failure.

    pil_cases.py BURNCC WORKDIR
Exit 77 when python3-pil, onnx or numpy are absent."""
import io, os, random, shutil, subprocess, sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper
    from PIL import Image
except ImportError as e:
    print("SKIP: needs python3-pil, python3-onnx and python3-numpy:", e)
    sys.exit(77)

burncc, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
rng = np.random.default_rng(7)


def picture(w, hgt):
    """A smooth gradient with noise: every codec has some work to do."""
    y, x = np.mgrid[0:hgt, 0:w]
    a = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(hgt - 1, 1),
                  (x + y) * 127 // max(w + hgt - 2, 1)], -1)
    a = a + rng.integers(-20, 21, a.shape)
    return np.clip(a, 0, 255).astype(np.uint8)


def encode(img, fmt, **kw):
    b = io.BytesIO()
    img.save(b, fmt, **kw)
    return b.getvalue()


rgb = Image.fromarray(picture(37, 23), "RGB")
streams = {
    "bmp24": encode(rgb, "BMP"),
    "bmp8": encode(rgb.convert("P"), "BMP"),
    "bmp1": encode(rgb.convert("1"), "BMP"),
    "bmp_gray": encode(rgb.convert("L"), "BMP"),
    "bmp32": encode(rgb.convert("RGBA"), "BMP"),
    "ppm": encode(rgb, "PPM"),
    "pgm": encode(rgb.convert("L"), "PPM"),
    "pbm": encode(rgb.convert("1"), "PPM"),
    "png": encode(rgb, "PNG"),
    "png_gray": encode(rgb.convert("L"), "PNG"),
    "png_palette": encode(rgb.convert("P"), "PNG"),
    "png_rgba": encode(rgb.convert("RGBA"), "PNG"),
    "png_interlaced": encode(rgb, "PNG", interlace=1),
    "png_1bit": encode(rgb.convert("1"), "PNG"),
    "jpeg": encode(rgb, "JPEG", quality=90),
    "jpeg_420": encode(rgb, "JPEG", quality=75, subsampling=2),
    "jpeg_gray": encode(rgb.convert("L"), "JPEG"),
    "jpeg_progressive": encode(rgb, "JPEG", progressive=True),
    "tiff": encode(rgb, "TIFF"),
    "tiff_lzw": encode(rgb, "TIFF", compression="tiff_lzw"),
    "tiff_deflate": encode(rgb, "TIFF", compression="tiff_adobe_deflate"),
    "tiff_packbits": encode(rgb, "TIFF", compression="packbits"),
    "tiff_gray": encode(rgb.convert("L"), "TIFF"),
    "webp": encode(rgb, "WEBP", quality=80),
    "webp_lossless": encode(rgb, "WEBP", lossless=True),
    "webp_alpha": encode(rgb.convert("RGBA"), "WEBP", lossless=True),
    "jp2": encode(rgb, "JPEG2000"),
    "j2k": encode(rgb, "JPEG2000", no_jp2=True),
}
# 16-bit PNG: Pillow reads it as I;16 for gray; RGB 16-bit via raw bytes
a16 = (picture(19, 11).astype(np.uint16) * 257)
import zlib, struct
raw = b"".join(b"\0" + row.astype(">u2").tobytes() for row in a16)
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
streams["png16"] = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 19, 11, 16, 2, 0, 0, 0))
                    + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def reference(data, fmt):
    im = Image.open(io.BytesIO(data))
    x = np.array(im.convert("L" if fmt == "Grayscale" else "RGB"))
    if fmt == "Grayscale":
        x = x[:, :, None]
    if fmt == "BGR":
        x = x[:, :, ::-1]
    return np.ascontiguousarray(x)


def model(const=None, fmt="RGB"):
    n = h.make_node("ImageDecoder", ["data"], ["image"], pixel_format=fmt)
    inits, ins = [], []
    if const is None:
        ins = [h.make_tensor_value_info("data", T.UINT8, ["n"])]
    else:
        inits = [numpy_helper.from_array(np.frombuffer(const, np.uint8), "data")]
    g = h.make_graph([n], "img", ins, [h.make_tensor_value_info("image", T.UINT8, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 20)])


cases = []
for name, data in sorted(streams.items()):
    for fmt in ("RGB", "BGR", "Grayscale"):
        d = os.path.join(work, "cases", "test_%s_%s" % (name, fmt.lower()))
        os.makedirs(os.path.join(d, "test_data_set_0"))
        onnx.save(model(None, fmt), os.path.join(d, "model.onnx"))
        with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.frombuffer(data, np.uint8), "data").SerializeToString())
        with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(reference(data, fmt), "image").SerializeToString())
        cases.append(d)
r = subprocess.run([burncc, "check", "--target", "c"] + cases, capture_output=True, text=True)
fails = [l for l in r.stdout.splitlines() if not l.startswith("PASS")]
print("\n".join(fails[-20:]))
bad = r.returncode != 0

# hostile streams: truncated, and bytes flipped
random.seed(11)
n_ok = n_refused = 0
for name, data in sorted(streams.items()):
    variants = [data[:len(data) // 2], data[:len(data) - 3], data[:20]]
    for _ in range(6):
        b = bytearray(data)
        for _ in range(random.randint(1, 8)):
            b[random.randrange(len(b))] = random.randrange(256)
        variants.append(bytes(b))
    for i, v in enumerate(variants):
        m = os.path.join(work, "hostile.onnx")
        out = os.path.join(work, "hostile_%s_%d.c" % (name, i))
        onnx.save(model(v), m)
        p = subprocess.run([burncc, m, "-o", out], capture_output=True, text=True)
        if p.returncode == 0 and os.path.exists(out):
            n_ok += 1
        elif p.returncode == 1 and "ImageDecoder" in p.stderr and not os.path.exists(out):
            n_refused += 1
        else:
            print("FAIL hostile %s #%d: exit %d, output %s: %s" % (
                name, i, p.returncode, "written" if os.path.exists(out) else "absent",
                p.stderr.strip()[-300:]))
            bad = True
print("%d cases through check (%s); hostile streams: %d decoded, %d refused" % (
    len(cases), r.stdout.splitlines()[-1] if r.stdout else "no output", n_ok, n_refused))
sys.exit(1 if bad else 0)
