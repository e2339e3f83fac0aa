/*
 * image.c - ImageDecoder's decoders (image.h).
 *
 * Every format decodes to 8-bit RGB first (gray and palette images
 * expanded, alpha dropped: Pillow's convert("RGB")), then to the pixel
 * format asked for.  BMP and PNM are read here, bounded by the data; PNG,
 * JPEG, TIFF, WebP and JPEG 2000 go through Debian's libraries, opened
 * with dlopen the first time a format needs one (their headers are only
 * needed to build: BURN_HAVE_<FORMAT> from CMakeLists.txt).  The libraries
 * report errors through callbacks: those longjmp back here (libjpeg,
 * libpng) or record the message (libtiff, OpenJPEG).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "image.h"

/* at most this many pixels: a small stream can claim a huge image */
#define IMG_MAX_PIXELS ((int64_t)1 << 28)

typedef struct Img {
	Ctx *c;
	const uint8_t *p;   /* the stream */
	size_t n, pos;
	const char *fmt;    /* "PNG", for messages */
	char msg[200];      /* a library's error message */
	uint8_t *rgb;       /* the result, w x h x 3 */
	int64_t w, h;
	jmp_buf jb;
} Img;

static int
bad(Img *im, const char *why)
{
	return burn_fail(im->c, BURN_ERR_INVALID, "ImageDecoder: %s stream: %s", im->fmt, why);
}

/* im->rgb for a w x h image, checked against the limit */
static int
alloc_rgb(Img *im, int64_t w, int64_t h)
{
	if (w <= 0 || h <= 0 || w > IMG_MAX_PIXELS / h)
		return bad(im, "image size out of range");
	im->w = w;
	im->h = h;
	if (!(im->rgb = malloc((size_t)(w * h * 3))))
		return burn_fail(im->c, BURN_ERR_NOMEM, "ImageDecoder: out of memory");
	return BURN_OK;
}

/* ---- libraries opened at run time ---------------------------------------- */

/* Symbol `name` of library `so` (opened once, never closed), or NULL with
 * an error naming the format and the library. */
static void *
lib_sym(Img *im, const char *so, const char *pkg, const char *name)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	void *h, *s = NULL;

	pthread_mutex_lock(&mu);
	h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (h)
		s = dlsym(h, name);
	pthread_mutex_unlock(&mu);
	if (!h)
		burn_fail(im->c, BURN_ERR_UNSUPPORTED, "ImageDecoder: decoding %s needs %s "
		          "(Debian: %s): %s", im->fmt, so, pkg, dlerror());
	else if (!s)
		burn_fail(im->c, BURN_ERR_UNSUPPORTED, "ImageDecoder: %s has no %s", so, name);
	return s;
}

/* Loads the table of function pointers f[0 .. n) named by names[]. */
static int
lib_load(Img *im, const char *so, const char *pkg, const char *const *names, void **f, int n)
{
	for (int i = 0; i < n; i++)
		if (!(f[i] = lib_sym(im, so, pkg, names[i])))
			return BURN_ERR_UNSUPPORTED;
	return BURN_OK;
}

#define LOAD(im, so, pkg, tab) \
	lib_load(im, so, pkg, tab##_names, (void **)&tab, (int)(sizeof tab##_names / sizeof *tab##_names))

/* ---- BMP ------------------------------------------------------------------ */

static uint32_t
le(const uint8_t *p, int bytes)
{
	uint32_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* the shift and width of a BITFIELDS mask */
static void
mask_shift(uint32_t m, int *sh, int *bits)
{
	*sh = *bits = 0;
	while (m && !(m & 1)) {
		m >>= 1;
		++*sh;
	}
	while (m & 1) {
		m >>= 1;
		++*bits;
	}
}

/* a masked field scaled to 8 bits */
static uint8_t
field8(uint32_t v, int sh, int bits)
{
	uint32_t x = bits ? (v >> sh) & ((1u << bits) - 1) : 0;

	if (!bits)
		return 0;
	return bits >= 8 ? (uint8_t)(x >> (bits - 8)) : (uint8_t)(x * 255 / ((1u << bits) - 1));
}

static int
dec_bmp(Img *im)
{
	const uint8_t *p = im->p;
	uint32_t off, hs, comp, ncol;
	int32_t w, h;
	int bpp, down, sh[3], nb[3];
	uint32_t mask[3] = { 0xff0000, 0xff00, 0xff };
	int64_t stride;

	if (im->n < 54 || (hs = le(p + 14, 4)) < 40 || hs > im->n - 14)
		return bad(im, "truncated header");
	off = le(p + 10, 4);
	w = (int32_t)le(p + 18, 4);
	h = (int32_t)le(p + 22, 4);
	bpp = (int)le(p + 28, 2);
	comp = le(p + 30, 4);
	ncol = le(p + 46, 4);
	down = h < 0;   /* rows top to bottom */
	if (h == INT32_MIN)
		return bad(im, "image size out of range");
	h = h < 0 ? -h : h;
	if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32)
		return bad(im, "bits per pixel not 1, 4, 8, 16, 24 or 32");
	if (comp == 3 && (bpp == 16 || bpp == 32)) {
		/* after a 40-byte header, or inside a longer one: at 54 */
		if (im->n < 66)
			return bad(im, "truncated masks");
		for (int i = 0; i < 3; i++)
			mask[i] = le(p + 54 + 4 * i, 4);
	} else if (comp != 0) {
		return bad(im, "compressed (RLE) bitmaps are not supported");
	} else if (bpp == 16) {
		mask[0] = 0x7c00, mask[1] = 0x3e0, mask[2] = 0x1f;
	}
	for (int i = 0; i < 3; i++)
		mask_shift(mask[i], &sh[i], &nb[i]);
	TRY(alloc_rgb(im, w, h));
	stride = ((int64_t)w * bpp + 31) / 32 * 4;
	if (off > im->n || (int64_t)(im->n - off) < stride * h)
		return bad(im, "truncated pixel data");
	if (bpp <= 8) {
		uint32_t pal = 14 + hs, np = ncol ? ncol : 1u << bpp;
		if (np > 256 || pal + 4 * (uint64_t)np > off)
			return bad(im, "bad palette");
		for (int64_t y = 0; y < h; y++) {
			const uint8_t *row = p + off + (down ? y : h - 1 - y) * stride;
			for (int64_t x = 0; x < w; x++) {
				int64_t bit = x * bpp;
				uint32_t i = (row[bit / 8] >> (8 - bpp - bit % 8)) & ((1u << bpp) - 1);
				const uint8_t *q = p + pal + 4 * (i < np ? i : 0);
				uint8_t *o = im->rgb + (y * w + x) * 3;
				o[0] = q[2], o[1] = q[1], o[2] = q[0];
			}
		}
		return BURN_OK;
	}
	for (int64_t y = 0; y < h; y++) {
		const uint8_t *row = p + off + (down ? y : h - 1 - y) * stride;
		for (int64_t x = 0; x < w; x++) {
			uint8_t *o = im->rgb + (y * w + x) * 3;
			if (bpp == 24 || (bpp == 32 && comp == 0)) {
				const uint8_t *q = row + x * (bpp / 8);
				o[0] = q[2], o[1] = q[1], o[2] = q[0];
			} else {
				uint32_t v = le(row + x * (bpp / 8), bpp / 8);
				for (int i = 0; i < 3; i++)
					o[i] = field8(v, sh[i], nb[i]);
			}
		}
	}
	return BURN_OK;
}

/* ---- PNM (P1 .. P6) ---------------------------------------------------------- */

/* the next header number, skipping whitespace and comments; -1 if none */
static int64_t
pnm_num(Img *im)
{
	int64_t v = -1;

	for (;;) {
		while (im->pos < im->n && strchr(" \t\r\n\v\f", im->p[im->pos]))
			im->pos++;
		if (im->pos < im->n && im->p[im->pos] == '#') {
			while (im->pos < im->n && im->p[im->pos] != '\n')
				im->pos++;
			continue;
		}
		break;
	}
	while (im->pos < im->n && im->p[im->pos] >= '0' && im->p[im->pos] <= '9' &&
	       v < ((int64_t)1 << 40))
		v = (v < 0 ? 0 : v * 10) + (im->p[im->pos++] - '0');
	return v;
}

static int
dec_pnm(Img *im)
{
	int kind = im->p[1] - '0', ch = kind == 3 || kind == 6 ? 3 : 1;
	int64_t w, h, maxv = 1;

	im->pos = 2;
	w = pnm_num(im);
	h = pnm_num(im);
	if (kind != 1 && kind != 4)
		maxv = pnm_num(im);
	if (w <= 0 || h <= 0 || maxv <= 0 || maxv > 65535)
		return bad(im, "bad header");
	TRY(alloc_rgb(im, w, h));
	if (kind >= 4) {
		if (im->pos >= im->n)
			return bad(im, "truncated pixel data");
		im->pos++;   /* the one whitespace byte before the data */
	}
	for (int64_t y = 0; y < h; y++) {
		for (int64_t x = 0; x < w; x++) {
			uint8_t *o = im->rgb + (y * w + x) * 3;
			int64_t v[3];
			for (int i = 0; i < ch; i++) {
				if (kind <= 3) {
					v[i] = pnm_num(im);
				} else if (kind == 4) {
					size_t at = im->pos + (size_t)(y * ((w + 7) / 8) + x / 8);
					v[i] = at < im->n ? (im->p[at] >> (7 - x % 8)) & 1 : -1;
				} else {
					int b = maxv > 255 ? 2 : 1;
					size_t at = im->pos + (size_t)(((y * w + x) * ch + i) * b);
					v[i] = at + b <= im->n ? (b == 2 ? im->p[at] << 8 | im->p[at + 1]
					                                 : im->p[at]) : -1;
				}
				if (v[i] < 0 || v[i] > maxv)
					return bad(im, "truncated or out-of-range pixel data");
				if (kind == 1 || kind == 4)
					v[i] = v[i] ? 0 : 255;   /* 1 is black */
				else if (maxv != 255)
					v[i] = (v[i] * 255 + maxv / 2) / maxv;
			}
			for (int i = 0; i < 3; i++)
				o[i] = (uint8_t)v[ch == 3 ? i : 0];
		}
	}
	return BURN_OK;
}

/* ---- JPEG (libjpeg-turbo) ---------------------------------------------------- */

#ifdef BURN_HAVE_JPEG
#include <jpeglib.h>

static const char *const jp_names[] = {
	"jpeg_std_error", "jpeg_CreateDecompress", "jpeg_mem_src", "jpeg_read_header",
	"jpeg_start_decompress", "jpeg_read_scanlines", "jpeg_destroy_decompress",
};
static struct {
	struct jpeg_error_mgr *(*std_error)(struct jpeg_error_mgr *);
	void (*create)(j_decompress_ptr, int, size_t);
	void (*mem_src)(j_decompress_ptr, const unsigned char *, unsigned long);
	int (*read_header)(j_decompress_ptr, boolean);
	boolean (*start)(j_decompress_ptr);
	JDIMENSION (*read_scanlines)(j_decompress_ptr, JSAMPARRAY, JDIMENSION);
	void (*destroy)(j_decompress_ptr);
} jp;

typedef struct JpErr {
	struct jpeg_error_mgr pub;
	Img *im;
} JpErr;

static void
jp_error_exit(j_common_ptr ci)
{
	JpErr *e = (JpErr *)ci->err;

	e->pub.format_message(ci, e->im->msg);
	longjmp(e->im->jb, 1);
}

static void
jp_output_message(j_common_ptr ci)
{
	(void)ci;   /* warnings: the image decodes as the library decides */
}

static int
dec_jpeg(Img *im)
{
	struct jpeg_decompress_struct ci;
	JpErr err;
	int rc = BURN_OK;

	TRY(LOAD(im, "libjpeg.so.62", "libjpeg62-turbo", jp));
	ci.err = jp.std_error(&err.pub);
	err.pub.error_exit = jp_error_exit;
	err.pub.output_message = jp_output_message;
	err.im = im;
	if (setjmp(im->jb)) {
		jp.destroy(&ci);
		return bad(im, im->msg);
	}
	jp.create(&ci, JPEG_LIB_VERSION, sizeof ci);
	jp.mem_src(&ci, im->p, (unsigned long)im->n);
	jp.read_header(&ci, TRUE);
	if (ci.jpeg_color_space == JCS_CMYK || ci.jpeg_color_space == JCS_YCCK) {
		jp.destroy(&ci);
		return bad(im, "CMYK JPEG is not supported");
	}
	ci.out_color_space = JCS_RGB;
	if ((rc = alloc_rgb(im, ci.image_width, ci.image_height))) {
		jp.destroy(&ci);
		return rc;
	}
	jp.start(&ci);
	while (ci.output_scanline < ci.output_height) {
		JSAMPROW row = im->rgb + (size_t)ci.output_scanline * (size_t)im->w * 3;
		if (jp.read_scanlines(&ci, &row, 1) != 1)
			break;
	}
	/* no jpeg_finish_decompress: the pixels are all read, and a stream
	 * missing its end marker decodes as Pillow decodes it */
	jp.destroy(&ci);
	return BURN_OK;
}
#endif

/* ---- PNG (libpng) ------------------------------------------------------------ */

#ifdef BURN_HAVE_PNG
#include <png.h>

static const char *const pg_names[] = {
	"png_create_read_struct", "png_create_info_struct", "png_destroy_read_struct",
	"png_set_read_fn", "png_get_io_ptr", "png_get_error_ptr", "png_read_info",
	"png_get_IHDR", "png_set_palette_to_rgb", "png_set_expand_gray_1_2_4_to_8",
	"png_set_strip_16", "png_set_strip_alpha", "png_set_gray_to_rgb",
	"png_set_interlace_handling", "png_read_update_info", "png_read_image",
	"png_get_rowbytes",
};
static struct {
	png_structp (*create_read)(png_const_charp, png_voidp, png_error_ptr, png_error_ptr);
	png_infop (*create_info)(png_const_structrp);
	void (*destroy_read)(png_structpp, png_infopp, png_infopp);
	void (*set_read_fn)(png_structrp, png_voidp, png_rw_ptr);
	png_voidp (*get_io_ptr)(png_const_structrp);
	png_voidp (*get_error_ptr)(png_const_structrp);
	void (*read_info)(png_structrp, png_inforp);
	png_uint_32 (*get_IHDR)(png_const_structrp, png_const_inforp, png_uint_32 *,
	                        png_uint_32 *, int *, int *, int *, int *, int *);
	void (*palette_to_rgb)(png_structrp);
	void (*gray_to_8)(png_structrp);
	void (*strip_16)(png_structrp);
	void (*strip_alpha)(png_structrp);
	void (*gray_to_rgb)(png_structrp);
	int (*interlace)(png_structrp);
	void (*update_info)(png_structrp, png_inforp);
	void (*read_image)(png_structrp, png_bytepp);
	size_t (*get_rowbytes)(png_const_structrp, png_const_inforp);
} pg;

static void
pg_error(png_structp ps, png_const_charp msg)
{
	Img *im = pg.get_error_ptr(ps);

	snprintf(im->msg, sizeof im->msg, "%s", msg);
	longjmp(im->jb, 1);
}

static void
pg_warn(png_structp ps, png_const_charp msg)
{
	(void)ps;
	(void)msg;
}

static void
pg_read(png_structp ps, png_bytep out, size_t n)
{
	Img *im = pg.get_io_ptr(ps);

	if (n > im->n - im->pos)
		pg_error(ps, "truncated stream");
	memcpy(out, im->p + im->pos, n);
	im->pos += n;
}

static int
dec_png(Img *im)
{
	png_structp ps;
	png_infop info = NULL;
	png_bytep *volatile rows = NULL;
	png_uint_32 w, h;
	int depth, ct, il, rc;

	TRY(LOAD(im, "libpng16.so.16", "libpng16-16", pg));
	if (!(ps = pg.create_read(PNG_LIBPNG_VER_STRING, im, pg_error, pg_warn)) ||
	    !(info = pg.create_info(ps))) {
		pg.destroy_read(&ps, NULL, NULL);
		return burn_fail(im->c, BURN_ERR_NOMEM, "ImageDecoder: out of memory");
	}
	if (setjmp(im->jb)) {
		pg.destroy_read(&ps, &info, NULL);
		free(rows);
		return bad(im, im->msg);
	}
	pg.set_read_fn(ps, im, pg_read);
	pg.read_info(ps, info);
	pg.get_IHDR(ps, info, &w, &h, &depth, &ct, &il, NULL, NULL);
	if (ct == PNG_COLOR_TYPE_PALETTE)
		pg.palette_to_rgb(ps);
	if (ct == PNG_COLOR_TYPE_GRAY && depth < 8)
		pg.gray_to_8(ps);
	if (depth == 16)
		pg.strip_16(ps);   /* the high byte, as Pillow reads 16-bit PNG as RGB */
	if (ct & PNG_COLOR_MASK_ALPHA)
		pg.strip_alpha(ps);
	if (!(ct & PNG_COLOR_MASK_COLOR))
		pg.gray_to_rgb(ps);
	pg.interlace(ps);
	pg.update_info(ps, info);
	if ((rc = alloc_rgb(im, w, h)) || pg.get_rowbytes(ps, info) != (size_t)w * 3 ||
	    !(rows = malloc(sizeof *rows * h))) {
		pg.destroy_read(&ps, &info, NULL);
		return rc ? rc : bad(im, "unexpected row layout");
	}
	for (png_uint_32 y = 0; y < h; y++)
		rows[y] = im->rgb + (size_t)y * w * 3;
	pg.read_image(ps, rows);
	pg.destroy_read(&ps, &info, NULL);
	free(rows);
	return BURN_OK;
}
#endif

/* ---- TIFF (libtiff) ---------------------------------------------------------- */

#ifdef BURN_HAVE_TIFF
#include <tiffio.h>

static const char *const tf_names[] = {
	"TIFFClientOpen", "TIFFClose", "TIFFGetField", "TIFFReadRGBAImageOriented",
	"TIFFSetErrorHandler", "TIFFSetWarningHandler",
};
static struct {
	TIFF *(*open)(const char *, const char *, thandle_t, TIFFReadWriteProc,
	              TIFFReadWriteProc, TIFFSeekProc, TIFFCloseProc, TIFFSizeProc,
	              TIFFMapFileProc, TIFFUnmapFileProc);
	void (*close)(TIFF *);
	int (*get_field)(TIFF *, uint32_t, ...);
	int (*read_rgba)(TIFF *, uint32_t, uint32_t, uint32_t *, int, int);
	TIFFErrorHandler (*set_error)(TIFFErrorHandler);
	TIFFErrorHandler (*set_warning)(TIFFErrorHandler);
} tf;

static void
tf_quiet(const char *mod, const char *fmt, va_list ap)
{
	(void)mod;
	(void)fmt;
	(void)ap;
}

static tmsize_t
tf_read(thandle_t h, void *buf, tmsize_t n)
{
	Img *im = h;
	size_t k = n < 0 ? 0 : (size_t)n;

	if (k > im->n - im->pos)
		k = im->n - im->pos;
	memcpy(buf, im->p + im->pos, k);
	im->pos += k;
	return (tmsize_t)k;
}

static tmsize_t
tf_write(thandle_t h, void *buf, tmsize_t n)
{
	(void)h;
	(void)buf;
	(void)n;
	return -1;
}

static toff_t
tf_seek(thandle_t h, toff_t off, int whence)
{
	Img *im = h;
	uint64_t base = whence == SEEK_CUR ? im->pos : whence == SEEK_END ? im->n : 0;

	if (off > (uint64_t)-1 - base || base + off > im->n)
		return (toff_t)-1;
	im->pos = (size_t)(base + off);
	return im->pos;
}

static int
tf_close(thandle_t h)
{
	(void)h;
	return 0;
}

static toff_t
tf_size(thandle_t h)
{
	return ((Img *)h)->n;
}

static int
tf_map(thandle_t h, void **base, toff_t *size)
{
	(void)h;
	(void)base;
	(void)size;
	return 0;
}

static void
tf_unmap(thandle_t h, void *base, toff_t size)
{
	(void)h;
	(void)base;
	(void)size;
}

static int
dec_tiff(Img *im)
{
	TIFF *t;
	uint32_t w = 0, h = 0, *px;
	int rc;

	TRY(LOAD(im, "libtiff.so.6", "libtiff6", tf));
	tf.set_error(tf_quiet);
	tf.set_warning(tf_quiet);
	if (!(t = tf.open("ImageDecoder", "rm", im, tf_read, tf_write, tf_seek, tf_close,
	                  tf_size, tf_map, tf_unmap)))
		return bad(im, "not a readable TIFF");
	if (!tf.get_field(t, TIFFTAG_IMAGEWIDTH, &w) || !tf.get_field(t, TIFFTAG_IMAGELENGTH, &h)) {
		tf.close(t);
		return bad(im, "no image size");
	}
	if ((rc = alloc_rgb(im, w, h)) || !(px = malloc(sizeof *px * (size_t)w * h))) {
		tf.close(t);
		return rc ? rc : burn_fail(im->c, BURN_ERR_NOMEM, "ImageDecoder: out of memory");
	}
	if (!tf.read_rgba(t, w, h, px, ORIENTATION_TOPLEFT, 0)) {
		free(px);
		tf.close(t);
		return bad(im, "the pixel data does not decode");
	}
	for (size_t i = 0; i < (size_t)w * h; i++) {
		im->rgb[3 * i] = (uint8_t)TIFFGetR(px[i]);
		im->rgb[3 * i + 1] = (uint8_t)TIFFGetG(px[i]);
		im->rgb[3 * i + 2] = (uint8_t)TIFFGetB(px[i]);
	}
	free(px);
	tf.close(t);
	return BURN_OK;
}
#endif

/* ---- WebP (libwebp) ---------------------------------------------------------- */

#ifdef BURN_HAVE_WEBP
#include <webp/decode.h>

static const char *const wp_names[] = { "WebPGetInfo", "WebPDecodeRGB", "WebPFree" };
static struct {
	int (*get_info)(const uint8_t *, size_t, int *, int *);
	uint8_t *(*decode_rgb)(const uint8_t *, size_t, int *, int *);
	void (*free)(void *);
} wp;

static int
dec_webp(Img *im)
{
	int w, h;
	uint8_t *px;

	TRY(LOAD(im, "libwebp.so.7", "libwebp7", wp));
	if (!wp.get_info(im->p, im->n, &w, &h))
		return bad(im, "not a WebP image");
	TRY(alloc_rgb(im, w, h));
	if (!(px = wp.decode_rgb(im->p, im->n, &w, &h)) || w != im->w || h != im->h) {
		wp.free(px);
		return bad(im, "the pixel data does not decode");
	}
	memcpy(im->rgb, px, (size_t)w * h * 3);
	wp.free(px);
	return BURN_OK;
}
#endif

/* ---- JPEG 2000 (OpenJPEG) ---------------------------------------------------- */

#ifdef BURN_HAVE_OPENJP2
#include <openjpeg.h>

static const char *const oj_names[] = {
	"opj_create_decompress", "opj_destroy_codec", "opj_set_default_decoder_parameters",
	"opj_setup_decoder", "opj_set_error_handler", "opj_stream_create",
	"opj_stream_destroy", "opj_stream_set_read_function", "opj_stream_set_skip_function",
	"opj_stream_set_seek_function", "opj_stream_set_user_data",
	"opj_stream_set_user_data_length", "opj_read_header", "opj_decode",
	"opj_end_decompress", "opj_image_destroy",
};
static struct {
	opj_codec_t *(*create)(OPJ_CODEC_FORMAT);
	void (*destroy_codec)(opj_codec_t *);
	void (*default_params)(opj_dparameters_t *);
	OPJ_BOOL (*setup)(opj_codec_t *, opj_dparameters_t *);
	OPJ_BOOL (*set_error)(opj_codec_t *, opj_msg_callback, void *);
	opj_stream_t *(*stream_create)(OPJ_SIZE_T, OPJ_BOOL);
	void (*stream_destroy)(opj_stream_t *);
	void (*set_read)(opj_stream_t *, opj_stream_read_fn);
	void (*set_skip)(opj_stream_t *, opj_stream_skip_fn);
	void (*set_seek)(opj_stream_t *, opj_stream_seek_fn);
	void (*set_user_data)(opj_stream_t *, void *, opj_stream_free_user_data_fn);
	void (*set_length)(opj_stream_t *, OPJ_UINT64);
	OPJ_BOOL (*read_header)(opj_stream_t *, opj_codec_t *, opj_image_t **);
	OPJ_BOOL (*decode)(opj_codec_t *, opj_stream_t *, opj_image_t *);
	OPJ_BOOL (*end)(opj_codec_t *, opj_stream_t *);
	void (*image_destroy)(opj_image_t *);
} oj;

static void
oj_error(const char *msg, void *data)
{
	Img *im = data;
	size_t k;

	if (!im->msg[0]) {
		snprintf(im->msg, sizeof im->msg, "%s", msg);
		k = strlen(im->msg);
		if (k && im->msg[k - 1] == '\n')
			im->msg[k - 1] = 0;
	}
}

static OPJ_SIZE_T
oj_read(void *buf, OPJ_SIZE_T n, void *data)
{
	Img *im = data;
	size_t k = n < im->n - im->pos ? n : im->n - im->pos;

	if (!k)
		return (OPJ_SIZE_T)-1;
	memcpy(buf, im->p + im->pos, k);
	im->pos += k;
	return k;
}

static OPJ_OFF_T
oj_skip(OPJ_OFF_T n, void *data)
{
	Img *im = data;

	if (n < 0 || (uint64_t)n > im->n - im->pos)
		return -1;
	im->pos += (size_t)n;
	return n;
}

static OPJ_BOOL
oj_seek(OPJ_OFF_T off, void *data)
{
	Img *im = data;

	if (off < 0 || (uint64_t)off > im->n)
		return OPJ_FALSE;
	im->pos = (size_t)off;
	return OPJ_TRUE;
}

static int
dec_jp2(Img *im, int raw)
{
	opj_codec_t *cd;
	opj_stream_t *st;
	opj_image_t *img = NULL;
	opj_dparameters_t prm;
	int rc = BURN_OK;

	TRY(LOAD(im, "libopenjp2.so.7", "libopenjp2-7", oj));
	if (!(cd = oj.create(raw ? OPJ_CODEC_J2K : OPJ_CODEC_JP2)))
		return burn_fail(im->c, BURN_ERR_NOMEM, "ImageDecoder: out of memory");
	if (!(st = oj.stream_create(1 << 16, OPJ_TRUE))) {
		oj.destroy_codec(cd);
		return burn_fail(im->c, BURN_ERR_NOMEM, "ImageDecoder: out of memory");
	}
	oj.set_error(cd, oj_error, im);
	oj.default_params(&prm);
	oj.set_read(st, oj_read);
	oj.set_skip(st, oj_skip);
	oj.set_seek(st, oj_seek);
	oj.set_user_data(st, im, NULL);
	oj.set_length(st, im->n);
	if (!oj.setup(cd, &prm) || !oj.read_header(st, cd, &img) || !img)
		rc = bad(im, im->msg[0] ? im->msg : "bad header");
	else if (img->numcomps < 1 || img->comps[0].w == 0 || img->comps[0].h == 0)
		rc = bad(im, "no components");
	else if ((rc = alloc_rgb(im, img->comps[0].w, img->comps[0].h)))
		;
	else if (!oj.decode(cd, st, img) || !oj.end(cd, st))
		rc = bad(im, im->msg[0] ? im->msg : "the pixel data does not decode");
	for (int i = 0; !rc && i < (img->numcomps >= 3 ? 3 : 1); i++) {
		const opj_image_comp_t *q = &img->comps[i];
		if (q->w != (OPJ_UINT32)im->w || q->h != (OPJ_UINT32)im->h || !q->data ||
		    q->prec < 1 || q->prec > 31) {
			rc = bad(im, "subsampled or malformed components are not supported");
			break;
		}
		for (int64_t j = 0; j < im->w * im->h; j++) {
			int64_t v = q->data[j] + (q->sgnd ? (int64_t)1 << (q->prec - 1) : 0);
			v = q->prec > 8 ? v >> (q->prec - 8) : v << (8 - q->prec);
			v = v < 0 ? 0 : v > 255 ? 255 : v;
			for (int k = 0; k < (img->numcomps >= 3 ? 1 : 3); k++)
				im->rgb[3 * j + i + k] = (uint8_t)v;
		}
	}
	if (img)
		oj.image_destroy(img);
	oj.stream_destroy(st);
	oj.destroy_codec(cd);
	return rc;
}
#endif

/* ---- the format by its signature --------------------------------------------- */

static int
starts(const Img *im, const char *sig, size_t n)
{
	return im->n >= n && !memcmp(im->p, sig, n);
}

static int
dec_any(Img *im)
{
	int lib = 0;

#define NEED(fmt_) (im->fmt = fmt_, lib = 1)
	if (starts(im, "BM", 2)) {
		im->fmt = "BMP";
		return dec_bmp(im);
	}
	if (im->n >= 3 && im->p[0] == 'P' && im->p[1] >= '1' && im->p[1] <= '6' &&
	    strchr(" \t\r\n", im->p[2])) {
		im->fmt = "PNM";
		return dec_pnm(im);
	}
	if (starts(im, "\x89PNG\r\n\x1a\n", 8)) {
		NEED("PNG");
#ifdef BURN_HAVE_PNG
		return dec_png(im);
#endif
	} else if (starts(im, "\xff\xd8\xff", 3)) {
		NEED("JPEG");
#ifdef BURN_HAVE_JPEG
		return dec_jpeg(im);
#endif
	} else if (starts(im, "II*\0", 4) || starts(im, "MM\0*", 4)) {
		NEED("TIFF");
#ifdef BURN_HAVE_TIFF
		return dec_tiff(im);
#endif
	} else if (im->n >= 12 && !memcmp(im->p, "RIFF", 4) && !memcmp(im->p + 8, "WEBP", 4)) {
		NEED("WebP");
#ifdef BURN_HAVE_WEBP
		return dec_webp(im);
#endif
	} else if (starts(im, "\0\0\0\x0cjP  \r\n\x87\n", 12) || starts(im, "\xff\x4f\xff\x51", 4)) {
		NEED("JPEG 2000");
#ifdef BURN_HAVE_OPENJP2
		return dec_jp2(im, im->p[0] == 0xff);
#endif
	}
#undef NEED
	if (lib)
		return burn_fail(im->c, BURN_ERR_UNSUPPORTED, "ImageDecoder: burncc was built "
		                 "without the %s decoder's headers (sh tools/setup.sh)", im->fmt);
	return burn_fail(im->c, BURN_ERR_INVALID, "ImageDecoder: the stream is no BMP, PNM, "
	                 "PNG, JPEG, TIFF, WebP or JPEG 2000 image");
}

int
image_decode(Ctx *c, const uint8_t *data, size_t n, int pixels, uint8_t **out,
             int64_t dim[3])
{
	Img *im = calloc(1, sizeof *im);
	int rc, ch = pixels == IMG_GRAY ? 1 : 3;

	*out = NULL;
	if (!im)
		return burn_fail(c, BURN_ERR_NOMEM, "ImageDecoder: out of memory");
	im->c = c;
	im->p = data;
	im->n = n;
	im->fmt = "image";
	if ((rc = dec_any(im))) {
		free(im->rgb);
		free(im);
		return rc;
	}
	dim[0] = im->h;
	dim[1] = im->w;
	dim[2] = ch;
	for (int64_t i = 0; i < im->w * im->h; i++) {
		uint8_t *p = im->rgb + 3 * i, r = p[0], g = p[1], b = p[2];
		if (pixels == IMG_GRAY)
			im->rgb[i] = (uint8_t)((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
		else if (pixels == IMG_BGR)
			p[0] = b, p[2] = r;
	}
	*out = im->rgb;
	free(im);
	return BURN_OK;
}
