/*
 * image.h - ImageDecoder's decoders (passes/image.c): an encoded image
 * (BMP, PNM, PNG, JPEG, TIFF, WebP, JPEG 2000) to 8-bit pixels, as the
 * ONNX reference decodes them (Pillow's open, then convert).
 *
 * BMP and PNM are read here; the others through Debian's libraries
 * (libjpeg-turbo, libpng, libtiff, libwebp, OpenJPEG), opened at run time
 * with dlopen, so burncc builds and runs without them and a missing one is
 * an error naming the format and the library.  A corrupt stream is an
 * error naming the format and the reason; nothing is read past the data.
 */
#ifndef BURN_IMAGE_H
#define BURN_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include "../ir/base.h"

enum ImagePixels { IMG_RGB, IMG_BGR, IMG_GRAY };

/* Decodes data[0 .. n) to *out (malloc'd, the caller frees): dim[0] rows
 * x dim[1] columns x dim[2] channels (3, or 1 for IMG_GRAY), row-major.
 * Grayscale is Pillow's L = (19595 R + 38470 G + 7471 B + 2^15) >> 16. */
int image_decode(Ctx *c, const uint8_t *data, size_t n, int pixels, uint8_t **out,
                 int64_t dim[3]);

#endif
