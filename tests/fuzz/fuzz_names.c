/*
 * fuzz_names.c - structure-aware libFuzzer target: the bytes are not a
 * model but a list of edits applied to a real seed model, aimed at what a
 * byte mutator rarely reaches: names and attributes.  Each edit renames a
 * node, a value (everywhere it occurs, or in one place only), an attribute
 * or the graph; sets an op type or domain; changes an attribute's type,
 * value or list length; or duplicates an attribute.  New names are drawn
 * from the input and from a dictionary of hostile fragments (comment and
 * string terminators, newlines, trigraphs, `#error`, C keywords, UTF-8).
 *
 * The edited model goes through the loader, the passes and the C emitter.
 * A status is fine; what is a finding:
 *   - a crash, a sanitizer report, a leak or a hang (as for fuzz_onnx);
 *   - generated text that lets the model out of its comments, strings and
 *     identifiers: a trigraph (`??=` ...), a control character other than
 *     newline and tab, or the tokens `int BURN_INJECT` outside comments
 *     and literals (the dictionary puts that declaration between comment
 *     and string terminators; as an identifier it would be one token, so
 *     the two tokens appear only if a comment or string was broken out of);
 *   - with $BURN_FUZZ_CC set (a compiler command, e.g. "gcc"), generated C
 *     that does not compile with -std=c99 -Wall -Wextra -Werror.
 *
 * Seeds: the models named in $BURN_FUZZ_NAMES_SEEDS (a folder of .onnx
 * files; tests/fuzz/run.sh points it at the bundled models and a sample of
 * the node suite); the first input byte picks one.  Built like the other
 * targets by `make fuzz`; linked with replay.c it replays
 * tests/fuzz/regressions/names under ctest (seeds then default to
 * ../shared/models beside the source tree).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "frontend/onnx.h"
#include "onnx.pb-c.h"
#include "tools/compile.h"
#include "codegen/c/emit_c.h"

#ifndef BURN_SOURCE_DIR
#define BURN_SOURCE_DIR "."
#endif

/* ---- seeds --------------------------------------------------------------- */

typedef struct Seed {
	uint8_t *data;
	size_t len;
} Seed;

static Seed *seeds;
static int nseed;

static void add_seed(const char *path)
{
	FILE *f = fopen(path, "rb");
	Seed s = {0};
	long n;
	Seed *ns;

	if (!f)
		return;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && n < (8 << 20) &&
	    fseek(f, 0, SEEK_SET) == 0 && (s.data = malloc((size_t)n)) &&
	    fread(s.data, 1, (size_t)n, f) == (size_t)n &&
	    (ns = realloc(seeds, (nseed + 1) * sizeof *seeds))) {
		s.len = (size_t)n;
		seeds = ns;
		seeds[nseed++] = s;
	} else {
		free(s.data);
	}
	fclose(f);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .onnx file in dir (sorted, so a seed index means the same model on
 * every run), and dir/<sub>/model.onnx for each subfolder. */
static void add_seed_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, **nn;
	int n = 0;
	char path[4096];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !(nn = realloc(names, (n + 1) * sizeof *names)))
			continue;
		names = nn;
		if ((names[n] = strdup(e->d_name)))
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	for (int i = 0; i < n; i++) {
		size_t l = strlen(names[i]);
		if (l > 5 && strcmp(names[i] + l - 5, ".onnx") == 0)
			snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		else
			snprintf(path, sizeof path, "%s/%s/model.onnx", dir, names[i]);
		add_seed(path);
		free(names[i]);
	}
	free(names);
}

static void load_seeds(void)
{
	const char *dir = getenv("BURN_FUZZ_NAMES_SEEDS");

	add_seed_dir(dir && *dir ? dir : BURN_SOURCE_DIR "/../shared/models");
	if (!nseed) {
		fprintf(stderr, "fuzz_names: no seed models (set BURN_FUZZ_NAMES_SEEDS)\n");
		abort();
	}
}

/* ---- reading the edit list ----------------------------------------------- */

typedef struct In {
	const uint8_t *p, *end;
} In;

static unsigned take(In *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

/* Hostile fragments; a name is a few of these and raw input bytes. */
static const char *const frag[] = {
	"*/", "/*", "//", "\n", "\r", "\\\n", "\\", "\"", "'", "?\?=", "?\?/", "?\?'",
	"?\?(", "?\?)", "?\?!", "?\?<", "?\?>", "?\?-", "#error x\n", "#define x\n",
	" */ int BURN_INJECT = 1; /* ", "*/ int BURN_INJECT; /*",
	"\" int BURN_INJECT; \"", "\n int BURN_INJECT;\n",
	"\n#line 1 \"x\"\n", "int", "static", "return", "main", "fuzz_run",
	"fuzz_inputs", "FUZZ_H", "_", "0", "1", "a.b", "a_b", "a-b", "\t", "\x01",
	"\x1b[31m", "\x7f", "\xc3\xa9", "\xe2\x80\xae", "\xf0\x9f\x94\xa5",
	"\xff\xfe", "\xc3", "%s%n", "$", "@", " ", "..", "/", "x",
};

#define MAX_NAME 600

/* A new name from the input: up to 8 parts, each a fragment or a run of
 * raw bytes; sometimes a long repeated prefix, so names share 200 bytes. */
static char *make_name(In *in)
{
	char *s = malloc(MAX_NAME + 1);
	size_t n = 0;
	unsigned parts = take(in) % 9;

	if (!s)
		return NULL;
	if (take(in) % 8 == 0) {
		memset(s, 'p', 200);
		n = 200;
	}
	for (unsigned i = 0; i < parts; i++) {
		unsigned k = take(in);
		const char *f;
		size_t l;
		if (k < 200) {
			f = frag[k % (sizeof frag / sizeof frag[0])];
			l = strlen(f);
		} else {
			f = (const char *)in->p;
			l = k - 200;
			if (l > (size_t)(in->end - in->p))
				l = (size_t)(in->end - in->p);
			in->p += l;
		}
		if (n + l > MAX_NAME)
			break;
		memcpy(s + n, f, l);
		n += l;
	}
	s[n] = 0;   /* raw bytes may hold a NUL: the name ends there */
	return s;
}

/* ---- edits, with an undo log ---------------------------------------------
 * The unpacked message belongs to protobuf-c; an edit swaps a field for
 * memory of ours and logs the old contents, which are put back before the
 * message is freed. */

typedef struct Undo {
	void *slot;
	size_t size;
	uint8_t old[64];
} Undo;

typedef struct Edits {
	Undo undo[256];
	int nundo;
	void *owned[256];
	int nowned;
} Edits;

/* Log a field's bytes before it changes; 0 when the log is full. */
static int save(Edits *e, void *slot, size_t size)
{
	if (e->nundo == 256 || size > 64)
		return 0;
	e->undo[e->nundo].slot = slot;
	e->undo[e->nundo].size = size;
	memcpy(e->undo[e->nundo].old, slot, size);
	e->nundo++;
	return 1;
}

static void *own(Edits *e, void *p)
{
	if (!p || e->nowned == 256) {
		free(p);
		return NULL;
	}
	return e->owned[e->nowned++] = p;
}

static void undo_all(Edits *e)
{
	while (e->nundo > 0) {
		Undo *u = &e->undo[--e->nundo];
		memcpy(u->slot, u->old, u->size);
	}
	while (e->nowned > 0)
		free(e->owned[--e->nowned]);
}

static void set_str(Edits *e, char **slot, char *s)
{
	if (s && save(e, slot, sizeof *slot))
		*slot = s;
}

/* Replace every occurrence of value name old in g by s. */
static void rename_value(Edits *e, Onnx__GraphProto *g, const char *old, char *s)
{
	size_t i, k;

	for (i = 0; i < g->n_input; i++)
		if (g->input[i]->name && strcmp(g->input[i]->name, old) == 0)
			set_str(e, &g->input[i]->name, s);
	for (i = 0; i < g->n_output; i++)
		if (g->output[i]->name && strcmp(g->output[i]->name, old) == 0)
			set_str(e, &g->output[i]->name, s);
	for (i = 0; i < g->n_value_info; i++)
		if (g->value_info[i]->name && strcmp(g->value_info[i]->name, old) == 0)
			set_str(e, &g->value_info[i]->name, s);
	for (i = 0; i < g->n_initializer; i++)
		if (g->initializer[i]->name && strcmp(g->initializer[i]->name, old) == 0)
			set_str(e, &g->initializer[i]->name, s);
	for (i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *n = g->node[i];
		for (k = 0; k < n->n_input; k++)
			if (strcmp(n->input[k], old) == 0)
				set_str(e, &n->input[k], s);
		for (k = 0; k < n->n_output; k++)
			if (strcmp(n->output[k], old) == 0)
				set_str(e, &n->output[k], s);
	}
}

/* The name of some value of g picked by k (node outputs, then inputs). */
static const char *pick_value(Onnx__GraphProto *g, unsigned k)
{
	size_t total = g->n_input, i;

	for (i = 0; i < g->n_node; i++)
		total += g->node[i]->n_output;
	if (!total)
		return NULL;
	k %= total;
	if (k < g->n_input)
		return g->input[k]->name;
	k -= (unsigned)g->n_input;
	for (i = 0; i < g->n_node; i++) {
		if (k < g->node[i]->n_output)
			return g->node[i]->output[k];
		k -= (unsigned)g->node[i]->n_output;
	}
	return NULL;
}

static const int64_t extreme_i[] = {
	0, 1, -1, 2, 3, 7, 8, 31, 33, 64, 127, 128, 255, 256, 1 << 20,
	INT32_MAX, INT32_MIN, (int64_t)1 << 31, (int64_t)1 << 32, (int64_t)1 << 62,
	INT64_MAX, INT64_MIN, -2, -1000,
};
static const float extreme_f[] = {
	0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-45f, 1e-30f, 1e30f, 3.4e38f, -3.4e38f,
	1.0f / 0.0f, -1.0f / 0.0f, 0.0f / 0.0f, 96.5f, 100.0f, -100.0f,
};
#define NEL(a) (sizeof (a) / sizeof (a)[0])

static void edit_attr(Edits *e, Onnx__AttributeProto *a, In *in)
{
	unsigned k = take(in);

	switch (take(in) % 7) {
	case 0:  /* another type tag, fields left as they are */
		save(e, &a->type, sizeof a->type);
		save(e, &a->has_type, sizeof a->has_type);
		a->has_type = 1;
		a->type = (Onnx__AttributeProto__AttributeType)(k % 16);
		break;
	case 1:  /* an extreme int */
		save(e, &a->i, sizeof a->i);
		save(e, &a->has_i, sizeof a->has_i);
		a->has_i = 1;
		a->i = extreme_i[k % NEL(extreme_i)];
		break;
	case 2:  /* an extreme float */
		save(e, &a->f, sizeof a->f);
		save(e, &a->has_f, sizeof a->has_f);
		a->has_f = 1;
		a->f = extreme_f[k % NEL(extreme_f)];
		break;
	case 3: { /* a new ints list of extremes */
		size_t n = k % 10;
		int64_t *v = own(e, calloc(n ? n : 1, sizeof *v));
		if (!v || !save(e, &a->ints, sizeof a->ints) ||
		    !save(e, &a->n_ints, sizeof a->n_ints))
			break;
		for (size_t i = 0; i < n; i++)
			v[i] = extreme_i[take(in) % NEL(extreme_i)];
		a->ints = v;
		a->n_ints = n;
		break;
	}
	case 4: { /* a new floats list */
		size_t n = k % 6;
		float *v = own(e, calloc(n ? n : 1, sizeof *v));
		if (!v || !save(e, &a->floats, sizeof a->floats) ||
		    !save(e, &a->n_floats, sizeof a->n_floats))
			break;
		for (size_t i = 0; i < n; i++)
			v[i] = extreme_f[take(in) % NEL(extreme_f)];
		a->floats = v;
		a->n_floats = n;
		break;
	}
	case 5:  /* a new string value */
		if (save(e, &a->s, sizeof a->s) && save(e, &a->has_s, sizeof a->has_s)) {
			char *s = own(e, make_name(in));
			if (s) {
				a->s.data = (uint8_t *)s;
				a->s.len = strlen(s);
				a->has_s = 1;
			}
		}
		break;
	default: /* a new name */
		set_str(e, &a->name, own(e, make_name(in)));
		break;
	}
}

static void apply(Edits *e, Onnx__ModelProto *m, In *in)
{
	Onnx__GraphProto *g = m->graph;
	int budget = 24;

	while (in->p < in->end && budget-- > 0) {
		unsigned what = take(in) % 9, k = take(in);
		Onnx__NodeProto *n = g->n_node ? g->node[k % g->n_node] : NULL;
		const char *v;
		char *s;

		switch (what) {
		case 0:  /* rename a value everywhere */
			if ((v = pick_value(g, k)) && (s = own(e, make_name(in)))) {
				char *old = own(e, strdup(v));
				if (old)
					rename_value(e, g, old, s);
			}
			break;
		case 1:  /* rename one use of a value: a dangling or shared name */
			if (n && n->n_input)
				set_str(e, &n->input[take(in) % n->n_input], own(e, make_name(in)));
			break;
		case 2:
			if (n)
				set_str(e, &n->name, own(e, make_name(in)));
			break;
		case 3:  /* an op type, usually a real one */
			if (n)
				set_str(e, &n->op_type, own(e, take(in) % 2 ?
				        strdup(op_table[1 + take(in) % (OP_COUNT_ - 1)].name) :
				        make_name(in)));
			break;
		case 4:
			if (n)
				set_str(e, &n->domain, own(e, make_name(in)));
			break;
		case 5:
			if (n && n->n_attribute)
				edit_attr(e, n->attribute[take(in) % n->n_attribute], in);
			break;
		case 6:  /* an attribute listed twice */
			if (n && n->n_attribute && n->n_attribute < 16) {
				Onnx__AttributeProto **na = own(e, malloc((n->n_attribute + 1) * sizeof *na));
				if (na && save(e, &n->attribute, sizeof n->attribute) &&
				    save(e, &n->n_attribute, sizeof n->n_attribute)) {
					memcpy(na, n->attribute, n->n_attribute * sizeof *na);
					na[n->n_attribute] = n->attribute[take(in) % n->n_attribute];
					n->attribute = na;
					n->n_attribute++;
				}
			}
			break;
		case 7:  /* an output listed twice */
			if (g->n_output && g->n_output < 16) {
				Onnx__ValueInfoProto **no = own(e, malloc((g->n_output + 1) * sizeof *no));
				if (no && save(e, &g->output, sizeof g->output) &&
				    save(e, &g->n_output, sizeof g->n_output)) {
					memcpy(no, g->output, g->n_output * sizeof *no);
					no[g->n_output] = g->output[k % g->n_output];
					g->output = no;
					g->n_output++;
				}
			}
			break;
		default:
			set_str(e, &g->name, own(e, make_name(in)));
			set_str(e, &m->doc_string, own(e, make_name(in)));
			break;
		}
	}
}

/* ---- oracles -------------------------------------------------------------- */

/* A C token scan of the generated text that skips comments, string and
 * character literals and preprocessor lines: 0 if it is clean, else abort
 * with what was found (a finding). */
static void check_text(const char *t, size_t n)
{
	size_t i = 0, prev = 0, prevlen = 0;

	for (size_t k = 0; k + 2 < n; k++)
		if (t[k] == '?' && t[k + 1] == '?' && strchr("=/'()!<>-", t[k + 2]) && t[k + 2]) {
			fprintf(stderr, "fuzz_names: trigraph at byte %zu\n", k);
			abort();
		}
	for (size_t k = 0; k < n; k++) {
		unsigned char ch = (unsigned char)t[k];
		if ((ch < 32 && ch != '\n' && ch != '\t') || ch == 127) {
			fprintf(stderr, "fuzz_names: control character 0x%02x at byte %zu\n", ch, k);
			abort();
		}
	}
	while (i < n) {
		if (t[i] == '/' && i + 1 < n && t[i + 1] == '*') {
			const char *end = strstr(t + i + 2, "*/");
			i = end ? (size_t)(end - t) + 2 : n;
		} else if (t[i] == '/' && i + 1 < n && t[i + 1] == '/') {
			while (i < n && t[i] != '\n')
				i++;
		} else if (t[i] == '"' || t[i] == '\'') {
			char q = t[i++];
			while (i < n && t[i] != q && t[i] != '\n')
				i += t[i] == '\\' ? 2 : 1;
			i++;
		} else if (t[i] == '_' || (t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z')) {
			size_t s = i;
			while (i < n && (t[i] == '_' || (t[i] >= 'A' && t[i] <= 'Z') ||
			       (t[i] >= 'a' && t[i] <= 'z') || (t[i] >= '0' && t[i] <= '9')))
				i++;
			if (i - s == 11 && memcmp(t + s, "BURN_INJECT", 11) == 0 &&
			    prevlen == 3 && memcmp(t + prev, "int", 3) == 0) {
				fprintf(stderr, "fuzz_names: `int BURN_INJECT` in code at byte %zu\n", s);
				abort();
			}
			prev = s;
			prevlen = i - s;
			continue;
		} else {
			if (t[i] != ' ' && t[i] != '\t' && t[i] != '\n')
				prevlen = 0;   /* a punctuator between: no longer adjacent */
			i++;
			continue;
		}
		prevlen = 0;
	}
}

/* With $BURN_FUZZ_CC, the generated module must compile warning-free. */
static void check_compile(const char *ctext, size_t cn, const char *htext, size_t hn)
{
	const char *cc = getenv("BURN_FUZZ_CC");
	char dir[] = "/tmp/fuzz_names.XXXXXX", cmd[4096], path[4200];
	FILE *f;
	int rc;

	if (!cc || !*cc || !mkdtemp(dir))
		return;
	snprintf(path, sizeof path, "%s/fuzz.c", dir);
	if ((f = fopen(path, "w"))) {
		fwrite(ctext, 1, cn, f);
		fclose(f);
	}
	snprintf(path, sizeof path, "%s/fuzz.h", dir);
	if ((f = fopen(path, "w"))) {
		fwrite(htext, 1, hn, f);
		fclose(f);
	}
	snprintf(cmd, sizeof cmd, "%s -std=c99 -Wall -Wextra -Werror -Wno-unused-function "
	         "-c -o %s/fuzz.o %s/fuzz.c 2>%s/err.txt", cc, dir, dir, dir);
	rc = system(cmd);
	if (rc != 0) {
		snprintf(cmd, sizeof cmd, "head -c 2000 %s/err.txt >&2", dir);
		if (system(cmd)) {}
		fprintf(stderr, "fuzz_names: generated C does not compile (kept in %s)\n", dir);
		abort();
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd)) {}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	In in = { data, data + size };
	Onnx__ModelProto *m;
	Edits *e;
	Seed *sd;
	uint8_t *bytes;
	size_t len;
	CompileOpts o = { .verify = 1 };
	Compiled *cm;
	Graph *g;
	Ctx c;
	EmitC opt = { "fuzz", "fuzz.h", "fuzz.onnx" };
	char *ctext = NULL, *htext = NULL;
	size_t cn = 0, hn = 0;
	FILE *fc, *fh;

	if (!seeds)
		load_seeds();
	sd = &seeds[take(&in) % nseed];
	if (!(m = onnx__model_proto__unpack(NULL, sd->len, sd->data)))
		return 0;
	if (!m->graph || !(e = calloc(1, sizeof *e))) {
		onnx__model_proto__free_unpacked(m, NULL);
		return 0;
	}
	apply(e, m, &in);
	len = onnx__model_proto__get_packed_size(m);
	bytes = malloc(len ? len : 1);
	if (bytes)
		onnx__model_proto__pack(m, bytes);
	undo_all(e);
	free(e);
	onnx__model_proto__free_unpacked(m, NULL);
	if (!bytes)
		return 0;

	burn_ctx_init(&c, "fuzz.onnx");
	c.limits.max_tensor_bytes = (int64_t)64 << 20;
	if (onnx_load_bytes(&c, bytes, len, NULL, &g) ||
	    burn_compile_graph(&c, g, &o, &cm)) {
		free(bytes);
		return 0;
	}
	free(bytes);
	fc = open_memstream(&ctext, &cn);
	fh = open_memstream(&htext, &hn);
	if (fc && fh && emit_c_module(&c, cm->g, &cm->prog, &cm->plan, &opt, fc, fh) == BURN_OK) {
		fflush(fc);
		fflush(fh);
		check_text(ctext, cn);
		check_text(htext, hn);
		check_compile(ctext, cn, htext, hn);
	}
	if (fc)
		fclose(fc);
	if (fh)
		fclose(fh);
	free(ctext);
	free(htext);
	burn_compiled_destroy(cm);
	return 0;
}
