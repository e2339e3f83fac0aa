/*
 * replay.c - a plain main for a fuzz target: runs LLVMFuzzerTestOneInput
 * once on every file named on the command line (a folder means every file
 * in it).  Built without libFuzzer, it replays the regression inputs of
 * tests/fuzz/regressions under ctest; a crash or a sanitizer report is the
 * failure.  Prints how many inputs it ran.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Run the target on one file; 1 if it could not be read. */
static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return 1;
	}
	do {
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? 2 * cap : 65536);
			if (!nb) {
				free(buf);
				fclose(f);
				return 1;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	/* an exact-size copy, so ASan sees any read past the input */
	{
		uint8_t *exact = malloc(n ? n : 1);
		if (!exact) {
			free(buf);
			return 1;
		}
		memcpy(exact, buf, n);
		free(buf);
		LLVMFuzzerTestOneInput(exact, n);
		free(exact);
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	int bad = 0, ran = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *e;
			char **names = NULL;
			int n = 0;
			if (!d) {
				fprintf(stderr, "replay: cannot open %s\n", argv[i]);
				bad++;
				continue;
			}
			while ((e = readdir(d))) {
				char **nn;
				if (e->d_name[0] == '.')
					continue;
				if (!(nn = realloc(names, (n + 1) * sizeof *names)))
					break;
				names = nn;
				names[n] = malloc(strlen(argv[i]) + strlen(e->d_name) + 2);
				if (!names[n])
					break;
				sprintf(names[n++], "%s/%s", argv[i], e->d_name);
			}
			closedir(d);
			if (n)
				qsort(names, n, sizeof *names, cmp);
			for (int k = 0; k < n; k++) {
				bad += run_file(names[k]);
				ran++;
				free(names[k]);
			}
			free(names);
		} else {
			bad += run_file(argv[i]);
			ran++;
		}
	}
	printf("replay: %d inputs, %d unreadable\n", ran, bad);
	return bad != 0;
}
