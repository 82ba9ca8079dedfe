/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * micro.c - dcbench micro: the micro-benchmark suite (docs/micro.md).
 *
 * Six implementations answer the same path lookups, in the same process,
 * interleaved run by run (A B C ... A B C ...), so every comparison is a
 * ratio of figures measured side by side:
 *
 *   rcu, rwlock, global   libdcache's three modes, dc_resolve on a warm
 *                         cache over memfs (every lookup a hit)
 *   kernel                fstatat(AT_FDCWD, path) of the same tree
 *                         materialized on a tmpfs we mount (cwd = its root)
 *   lfht                  liburcu's cds_lfht keyed by (parent, name), walked
 *                         one component at a time under one rcu_read_lock
 *   mutex                 one pthread mutex around a chained hash table of
 *                         (parent, name), taken once per component
 *
 * Scenarios (hot, small, negative, deep, longnames, cold, mixed-1,
 * mixed-10, samefile) are built once each; in each of --runs rounds every
 * implementation runs for --ms milliseconds at every thread count, in
 * turn, and the median is reported; scaling pairs each run with the
 * 1-thread run beside it (wall-clock throughput).  Each thread walks its own shuffled array of path
 * pointers, generated before timing.  Every implementation's answers are
 * checked against the tree before it is timed (that pass also warms it).
 *
 * Also measured: bytes per cached entry (dc_get_stats after warming a cache
 * of exactly the tree), and the cost of a rename and of a create+unlink
 * pair (memfs + cache, and cache alone), single-threaded.
 */
#define _LGPL_SOURCE	/* inline liburcu's read side, as libdcache does */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <lzma.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* first (it maps liburcu's names): libdcache's component hash, the same
 * code (static inline) for every table */
#include "../../src/internal.h"
#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include "dcache.h"
#include "json.h"
#include "micro.h"

extern char **environ;

#define MAX_TLIST	16		/* thread counts per invocation */
#define MAX_THREADS	256
#define MAX_RUNS	101
#define LMAX		(1u << 20)	/* a thread's path array, at most */
#define SAMEFILE_LEN	4096
#define NSDIR		16		/* directories a mixed worker updates */
#define NSLOT		256		/* a mixed worker's name slots */
#define BATCH		16		/* lookups between looks at the stop flag */
#define PBUF		4096
#define FNV_OFFSET	0xcbf29ce484222325ull
#define FNV_PRIME	0x100000001b3ull
#define GOLDEN		0x9e3779b97f4a7c15ull
/* micro's JSON: 2 since "scaling" is of wall-clock throughput and the
 * lookups counted wrong replaced the failed ones */
#define MICRO_SCHEMA_VERSION	2

enum { SC_HOT, SC_SMALL, SC_NEGATIVE, SC_DEEP, SC_LONGNAMES, SC_COLD,
       SC_MIXED1, SC_MIXED10, SC_SAMEFILE, SC_NR };
static const char *const sc_names[SC_NR] = {
	"hot", "small", "negative", "deep", "longnames", "cold",
	"mixed-1", "mixed-10", "samefile",
};

enum { IM_RCU, IM_RWLOCK, IM_GLOBAL, IM_KERNEL, IM_LFHT, IM_MUTEX, IM_NR };
static const char *const im_names[IM_NR] = {
	"rcu", "rwlock", "global", "kernel", "lfht", "mutex",
};
static bool im_is_dc(int k) { return k <= IM_GLOBAL; }

/* ---- small helpers ------------------------------------------------------- */

static const char *plural(unsigned n)
{
	return n == 1 ? "" : "s";
}

static FILE *rep;		/* the human report: stdout, or stderr with --json */
static bool show_progress;
static bool debug_runs;		/* DCBENCH_MICRO_DEBUG: every thread's every run */

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
	va_list ap;

	if (!show_progress)
		return;
	fputs("micro: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void oom(size_t n)
{
	fprintf(stderr, "dcbench micro: out of memory (%zu bytes)\n", n);
	exit(1);	/* the atexit handler unmounts */
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom(n * size);
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *s)	/* splitmix64 */
{
	uint64_t z = (*s += GOLDEN);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rng_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((rng_next(s) >> 32) * n) >> 32);
}

static uint64_t pow2_at_least(uint64_t n)
{
	uint64_t p = 16;

	while (p < n)
		p <<= 1;
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, unsigned n)
{
	double t[MAX_RUNS];

	if (n == 0)
		return NAN;
	memcpy(t, v, n * sizeof(*t));
	qsort(t, n, sizeof(*t), cmp_double);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static double mean(const double *v, unsigned n)
{
	double s = 0;

	for (unsigned i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : NAN;
}

static double stddev(const double *v, unsigned n)
{
	double m = mean(v, n), s = 0;

	if (n < 2)
		return NAN;
	for (unsigned i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	return sqrt(s / (n - 1));
}

/* A bump allocator: the references' nodes packed like libdcache's slab. */
struct arena {
	void *chunks;		/* linked through their first word */
	char *p, *end;
	size_t used, held;
};

static void *arena_alloc(struct arena *a, size_t n)
{
	void *r;

	n = (n + 7) & ~(size_t)7;
	if ((size_t)(a->end - a->p) < n) {
		size_t sz = n + 16 > (1u << 20) ? n + 16 : (1u << 20);
		char *c = xmalloc(sz);

		*(void **)c = a->chunks;
		a->chunks = c;
		a->p = c + 16;
		a->end = c + sz;
		a->held += sz;
	}
	r = a->p;
	a->p += n;
	a->used += n;
	return r;
}

static void arena_free(struct arena *a)
{
	while (a->chunks) {
		void *next = *(void **)a->chunks;

		free(a->chunks);
		a->chunks = next;
	}
	memset(a, 0, sizeof(*a));
}

/* ---- the tree -------------------------------------------------------------- */

struct tnode {
	uint32_t parent;	/* the root (0) is its own parent */
	uint32_t name;		/* offset in the pool: the name and a NUL */
	uint32_t target;	/* symlinks: offset of the target text */
	uint16_t len;
	char type;		/* 'd', 'f' or 'l' */
	uint8_t depth;		/* components from the root */
};

struct tree {
	char label[16];		/* its directory on the kernel's tmpfs */
	struct tnode *n;
	uint32_t nn, cap;
	char *pool;
	size_t plen, pcap;
	uint32_t nfiles, ndirs, nlinks;
	uint32_t *dirs;		/* directories but the root (mixed updates) */
	bool kmade, kfailed;	/* materialized on the kernel's file system */
};

static uint32_t pool_add(struct tree *t, const char *s, size_t len)
{
	size_t off = t->plen;

	if (t->plen + len + 1 > t->pcap) {
		t->pcap = (t->plen + len + 1) * 2;
		t->pool = xrealloc(t->pool, t->pcap);
	}
	memcpy(t->pool + t->plen, s, len);
	t->pool[t->plen + len] = '\0';
	t->plen += len + 1;
	if (off > UINT32_MAX) {
		fprintf(stderr, "dcbench micro: name pool over 4 GiB\n");
		exit(1);
	}
	return (uint32_t)off;
}

static uint32_t tree_add(struct tree *t, uint32_t parent, char type,
			 const char *name, size_t len, const char *target,
			 size_t tlen)
{
	struct tnode *x;

	if (t->nn == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->n = xrealloc(t->n, t->cap * sizeof(*t->n));
	}
	x = &t->n[t->nn];
	x->parent = parent;
	x->name = pool_add(t, name, len);
	x->target = type == 'l' ? pool_add(t, target, tlen) : 0;
	x->len = (uint16_t)len;
	x->type = type;
	x->depth = t->nn ? (uint8_t)(t->n[parent].depth + 1) : 0;
	if (type == 'f')
		t->nfiles++;
	else if (type == 'd')
		t->ndirs++;
	else
		t->nlinks++;
	return t->nn++;
}

static struct tree *tree_new(const char *label)
{
	struct tree *t = xcalloc(1, sizeof(*t));

	snprintf(t->label, sizeof(t->label), "%s", label);
	tree_add(t, 0, 'd', "", 0, NULL, 0);
	t->ndirs = 0;	/* the root is not counted */
	return t;
}

static void tree_free(struct tree *t)
{
	if (!t)
		return;
	free(t->n);
	free(t->pool);
	free(t->dirs);
	free(t);
}

static const char *tname(const struct tree *t, uint32_t i)
{
	return t->pool + t->n[i].name;
}

/* Node i's path relative to the root into buf; its length, or -1 if it
 * does not fit. */
static long tree_path(const struct tree *t, uint32_t i, char *buf, size_t size)
{
	uint32_t chain[256];
	int d = 0;
	size_t len = 0;

	for (uint32_t k = i; k != 0 && d < 256; k = t->n[k].parent)
		chain[d++] = k;
	for (int j = d - 1; j >= 0; j--) {
		const struct tnode *x = &t->n[chain[j]];

		if (len + x->len + 2 > size)
			return -1;
		if (len)
			buf[len++] = '/';
		memcpy(buf + len, t->pool + x->name, x->len);
		len += x->len;
	}
	buf[len] = '\0';
	return (long)len;
}

static void tree_index_dirs(struct tree *t)
{
	uint32_t k = 0;

	free(t->dirs);
	t->dirs = xmalloc((t->ndirs + 1) * sizeof(*t->dirs));
	for (uint32_t i = 1; i < t->nn; i++)
		if (t->n[i].type == 'd')
			t->dirs[k++] = i;
}

/* Read a whole file, decompressing it if it is xz. */
static int slurp(const char *file, char **out, size_t *outlen)
{
	static const unsigned char xzmagic[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 };
	FILE *f = fopen(file, "rb");
	char *raw = NULL, *dec = NULL;
	size_t len = 0, cap = 0, dlen = 0, dcap;
	lzma_stream lz = LZMA_STREAM_INIT;
	lzma_ret ret;

	if (!f) {
		fprintf(stderr, "dcbench micro: %s: %s\n", file, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			cap = cap ? cap * 2 : (1u << 20);
			raw = xrealloc(raw, cap);
		}
		n = fread(raw + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "dcbench micro: %s: read error\n", file);
		fclose(f);
		free(raw);
		return -1;
	}
	fclose(f);
	if (len < 6 || memcmp(raw, xzmagic, 6)) {
		*out = raw;
		*outlen = len;
		return 0;
	}
	if (lzma_stream_decoder(&lz, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
		fprintf(stderr, "dcbench micro: %s: cannot start the xz decoder\n", file);
		free(raw);
		return -1;
	}
	dcap = len * 8;
	dec = xmalloc(dcap);
	lz.next_in = (const uint8_t *)raw;
	lz.avail_in = len;
	do {
		if (dlen == dcap) {
			dcap *= 2;
			dec = xrealloc(dec, dcap);
		}
		lz.next_out = (uint8_t *)dec + dlen;
		lz.avail_out = dcap - dlen;
		ret = lzma_code(&lz, LZMA_FINISH);
		dlen = dcap - lz.avail_out;
	} while (ret == LZMA_OK);
	lzma_end(&lz);
	free(raw);
	if (ret != LZMA_STREAM_END) {
		fprintf(stderr, "dcbench micro: %s: corrupt xz data (%d)\n", file, (int)ret);
		free(dec);
		return -1;
	}
	*out = dec;
	*outlen = dlen;
	return 0;
}

static uint64_t fnv64(const char *s, size_t len)
{
	uint64_t h = FNV_OFFSET;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
	return h;
}

/* Parse the listing: d<TAB>PATH, f<TAB>PATH<TAB>SIZE, l<TAB>PATH<TAB>TARGET. */
static struct tree *tree_parse(const char *file)
{
	char *text, *p, *end;
	size_t len;
	struct tree *t;
	uint32_t *slot, mask, lines = 0;
	const char **kp = NULL;		/* directories' paths, by node */
	uint32_t *kl = NULL;
	unsigned long lineno = 0;

	if (slurp(file, &text, &len))
		return NULL;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	mask = (uint32_t)pow2_at_least((uint64_t)lines * 2 + 2) - 1;
	slot = xcalloc((size_t)mask + 1, sizeof(*slot));
	t = tree_new("hot");
	kp = xcalloc(lines + 2, sizeof(*kp));
	kl = xcalloc(lines + 2, sizeof(*kl));
	for (p = text, end = text + len; p < end; p = p + strcspn(p, "\n") + 1) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *path, *tab, *tgt = NULL;
		char *slash, *name;
		size_t plen, tlen = 0;
		uint32_t parent = 0, idx;
		char type;

		if (!nl)
			nl = end;
		*nl = '\0';
		lineno++;
		if (nl == p)
			continue;
		type = p[0];
		if ((type != 'd' && type != 'f' && type != 'l') || p[1] != '\t' || !p[2])
			goto bad;
		path = p + 2;
		tab = strchr(path, '\t');
		plen = tab ? (size_t)(tab - path) : strlen(path);
		if (type == 'l') {
			if (!tab)
				goto bad;
			tgt = tab + 1;
			tlen = strlen(tgt);
		}
		slash = memrchr(path, '/', plen);
		name = slash ? slash + 1 : path;
		if (slash) {
			uint32_t plen2 = (uint32_t)(slash - path);
			uint64_t h = fnv64(path, plen2);

			for (uint32_t s = (uint32_t)h & mask;; s = (s + 1) & mask) {
				uint32_t v = slot[s];

				if (!v)
					goto bad;
				if (kl[v - 1] == plen2 && !memcmp(kp[v - 1], path, plen2)) {
					parent = v - 1;
					break;
				}
			}
		}
		if ((size_t)(path + plen - name) == 0 || path + plen - name > 255 ||
		    t->n[parent].type != 'd' || t->n[parent].depth >= 250)
			goto bad;
		idx = tree_add(t, parent, type, name, (size_t)(path + plen - name), tgt, tlen);
		if (type == 'd') {
			uint64_t h = fnv64(path, plen);
			uint32_t s = (uint32_t)h & mask;

			while (slot[s])
				s = (s + 1) & mask;
			slot[s] = idx + 1;
			kp[idx] = path;
			kl[idx] = (uint32_t)plen;
		}
		if (nl == end)
			break;
		continue;
bad:
		fprintf(stderr, "dcbench micro: %s:%lu: not a listing line (or its "
			"directory is not listed before it)\n", file, lineno);
		free(slot);
		free(kp);
		free(kl);
		free(text);
		tree_free(t);
		return NULL;
	}
	free(slot);
	free(kp);
	free(kl);
	free(text);
	tree_index_dirs(t);
	return t;
}

/* A subset of about `want` entries: random files and their ancestors. */
static struct tree *tree_subset(const struct tree *src, uint32_t want,
				const char *label, uint64_t seed)
{
	uint32_t *files = xmalloc(src->nfiles * sizeof(*files)), nf = 0, have = 0;
	uint32_t *map = xcalloc(src->nn, sizeof(*map));	/* new index + 1 */
	bool *in = xcalloc(src->nn, sizeof(*in));
	struct tree *t = tree_new(label);

	for (uint32_t i = 1; i < src->nn; i++)
		if (src->n[i].type == 'f')
			files[nf++] = i;
	for (uint32_t i = nf; i > 1; i--) {
		uint32_t j = rng_below(&seed, i), x = files[i - 1];

		files[i - 1] = files[j];
		files[j] = x;
	}
	in[0] = true;
	for (uint32_t k = 0; k < nf && have < want; k++) {
		uint32_t need = 0;

		for (uint32_t a = files[k]; !in[a]; a = src->n[a].parent)
			need++;
		if (have + need > want)
			continue;
		for (uint32_t a = files[k]; !in[a]; a = src->n[a].parent)
			in[a] = true;
		have += need;
	}
	map[0] = 1;
	for (uint32_t i = 1; i < src->nn; i++) {
		const struct tnode *x = &src->n[i];

		if (!in[i])
			continue;
		map[i] = 1 + tree_add(t, map[x->parent] - 1, x->type, tname(src, i),
				      x->len, NULL, 0);
	}
	free(files);
	free(map);
	free(in);
	tree_index_dirs(t);
	return t;
}

/* The tree without symlinks and without any name over max bytes; at most
 * limit entries (the root included), taken in order. */
static struct tree *tree_filter(const struct tree *src, size_t max, uint32_t limit,
				const char *label)
{
	uint32_t *map = xcalloc(src->nn, sizeof(*map));
	struct tree *t = tree_new(label);

	map[0] = 1;
	for (uint32_t i = 1; i < src->nn && t->nn < limit; i++) {
		const struct tnode *x = &src->n[i];

		if (x->type == 'l' || x->len > max || !map[x->parent])
			continue;
		map[i] = 1 + tree_add(t, map[x->parent] - 1, x->type, tname(src, i),
				      x->len, NULL, 0);
	}
	free(map);
	tree_index_dirs(t);
	return t;
}

/* deep: 1,024 chains of 29 directories (binary branching over the first
 * ten levels), four files at the end of each: every path 30 components. */
static struct tree *tree_deep(void)
{
	struct tree *t = tree_new("deep");
	uint32_t *lev = xmalloc(30 * 1024 * sizeof(*lev));
	char name[32];

	for (uint32_t k = 0; k < 1024; k++) {
		uint32_t parent = 0;

		for (unsigned j = 0; j < 29; j++) {
			uint32_t bits = j < 10 ? k >> (9 - j) : k;
			uint32_t *s = &lev[j * 1024 + bits];
			bool exists = j < 10 ? (k & ((1u << (9 - j)) - 1)) != 0 : false;

			if (!exists) {
				int n = snprintf(name, sizeof(name), "d%02u_%x", j, bits);

				*s = tree_add(t, parent, 'd', name, (size_t)n, NULL, 0);
			}
			parent = *s;
		}
		for (unsigned f = 0; f < 4; f++) {
			int n = snprintf(name, sizeof(name), "file%u.c", f);

			tree_add(t, parent, 'f', name, (size_t)n, NULL, 0);
		}
	}
	free(lev);
	tree_index_dirs(t);
	return t;
}

static size_t random_name(uint64_t *rs, char *buf, size_t minlen, size_t maxlen,
			  unsigned long uniq)
{
	static const char cs[] = "abcdefghijklmnopqrstuvwxyz0123456789_-.";
	size_t n = minlen + rng_below(rs, (uint32_t)(maxlen - minlen + 1));
	size_t k = (size_t)snprintf(buf, 24, "%lx-", uniq);

	while (k < n)
		buf[k++] = cs[rng_below(rs, sizeof(cs) - 1)];
	buf[n] = '\0';
	return n;
}

/* longnames: 16 x 16 directories, 32 files in each; every name 40-200 bytes. */
static struct tree *tree_longnames(uint64_t seed)
{
	struct tree *t = tree_new("longnames");
	char name[256];
	unsigned long u = 0;

	for (unsigned a = 0; a < 16; a++) {
		size_t n = random_name(&seed, name, 40, 200, u++);
		uint32_t da = tree_add(t, 0, 'd', name, n, NULL, 0);

		for (unsigned b = 0; b < 16; b++) {
			uint32_t db;

			n = random_name(&seed, name, 40, 200, u++);
			db = tree_add(t, da, 'd', name, n, NULL, 0);
			for (unsigned c = 0; c < 32; c++) {
				n = random_name(&seed, name, 40, 200, u++);
				tree_add(t, db, 'f', name, n, NULL, 0);
			}
		}
	}
	tree_index_dirs(t);
	return t;
}

/* cold: 100 directories of 100 directories, the rest files spread over
 * them, `entries` in all; file names 6-24 bytes. */
static struct tree *tree_cold(uint64_t entries, uint64_t seed)
{
	static const char *const ext[] = { ".c", ".h", ".o", ".S", "", ".txt" };
	struct tree *t = tree_new("cold");
	uint32_t mids[10000];
	uint64_t nfiles;
	char name[64];

	if (entries < 20000)
		entries = 20000;
	nfiles = entries - 10100;
	t->cap = (uint32_t)entries + 2;
	t->n = xrealloc(t->n, t->cap * sizeof(*t->n));
	for (unsigned a = 0; a < 100; a++) {
		int n = snprintf(name, sizeof(name), "dir%02u", a);
		uint32_t da = tree_add(t, 0, 'd', name, (size_t)n, NULL, 0);

		for (unsigned b = 0; b < 100; b++) {
			n = snprintf(name, sizeof(name), "sub%02u", b);
			mids[a * 100 + b] = tree_add(t, da, 'd', name, (size_t)n, NULL, 0);
		}
	}
	for (uint64_t f = 0; f < nfiles; f++) {
		int n = snprintf(name, sizeof(name), "%" PRIx64 "_", f);
		unsigned extra = 2 + rng_below(&seed, 12);
		const char *e = ext[rng_below(&seed, 6)];

		while (extra--)
			name[n++] = (char)('a' + rng_below(&seed, 26));
		n += snprintf(name + n, sizeof(name) - (size_t)n, "%s", e);
		tree_add(t, mids[f % 10000], 'f', name, (size_t)n, NULL, 0);
	}
	tree_index_dirs(t);
	return t;
}

/* ---- what a scenario looks up --------------------------------------------- */

struct targets {
	char *pool;
	size_t plen, pcap;
	size_t *off;
	const char **path;
	int32_t *expect;	/* tree node, or -1: the name must not exist */
	uint8_t *ncomp;
	uint32_t n, cap;
};

static void tg_add(struct targets *g, const char *p, size_t len, int32_t expect,
		   unsigned ncomp)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1024;
		g->off = xrealloc(g->off, g->cap * sizeof(*g->off));
		g->expect = xrealloc(g->expect, g->cap * sizeof(*g->expect));
		g->ncomp = xrealloc(g->ncomp, g->cap);
	}
	if (g->plen + len + 1 > g->pcap) {
		g->pcap = (g->plen + len + 1) * 2;
		g->pool = xrealloc(g->pool, g->pcap);
	}
	memcpy(g->pool + g->plen, p, len + 1);
	g->off[g->n] = g->plen;
	g->plen += len + 1;
	g->expect[g->n] = expect;
	g->ncomp[g->n] = (uint8_t)ncomp;
	g->n++;
}

static void tg_finish(struct targets *g)
{
	g->path = xmalloc((g->n + 1) * sizeof(*g->path));
	for (uint32_t i = 0; i < g->n; i++)
		g->path[i] = g->pool + g->off[i];
	free(g->off);
	g->off = NULL;
}

static void tg_free(struct targets *g)
{
	free(g->pool);
	free(g->off);
	free(g->path);
	free(g->expect);
	free(g->ncomp);
	memset(g, 0, sizeof(*g));
}

struct scen {
	int id;
	struct tree *t;
	struct targets tg;
	unsigned mixed_pct;	/* updates per hundred operations */
	bool samefile;
	uint32_t negatives;
	uint64_t max_entries, max_negative;	/* the dc caches' caps */
	uint64_t nbuckets;	/* the references' bucket count: load <= 1 */
	unsigned ref_node_bytes; /* the references' nodes padded to this */
	uint32_t ttl_ms;	/* the dc caches' TTLs (0: none) */
};

/* ---- the implementations ------------------------------------------------- */

struct fsinst {			/* a memfs holding a tree */
	struct dc_memfs *fs;
	uint32_t *mino;		/* tree node -> memfs inode number */
};

struct lnode {			/* cds_lfht's node */
	struct cds_lfht_node hn;
	struct lnode *parent;
	uint32_t id, mode, len;
	char name[];
};

struct mnode {			/* the mutex table's node */
	struct mnode *next, *parent;
	uint32_t id, mode, hash, len;
	char name[];
};

struct mtab {
	pthread_mutex_t lock;
	struct mnode **b;
	unsigned shift;
};

struct impl {
	int kind;
	bool ok;
	bool skipped;		/* not offered in this scenario (kernel, cold) */
	char why[400];		/* why not measured */
	/* dc */
	struct fsinst *fs;
	bool fs_owner;
	struct dc_cache *c;
	/* kernel */
	char kdir[512];
	/* lfht */
	struct cds_lfht *ht;
	struct lnode *lroot;
	/* mutex */
	struct mtab mt;
	struct mnode *mroot;
	struct arena ar;
	size_t bytes;		/* references: bytes their table holds */
};

struct res {
	uint32_t id, mode;
};

static int fs_build(const struct tree *t, struct fsinst *out)
{
	int err = dc_memfs_new(&out->fs);

	if (err)
		return err;
	out->mino = xmalloc(t->nn * sizeof(*out->mino));
	out->mino[0] = DC_MEMFS_ROOT;
	for (uint32_t i = 1; i < t->nn; i++) {
		const struct tnode *x = &t->n[i];
		struct dc_inode in;
		uint32_t mode = x->type == 'd' ? S_IFDIR | 0755 :
				x->type == 'l' ? S_IFLNK | 0777 : S_IFREG | 0644;

		err = dc_memfs_add(out->fs, out->mino[x->parent], tname(t, i), mode,
				   x->type == 'l' ? t->pool + x->target : NULL, &in);
		if (err || in.ino > UINT32_MAX) {
			fprintf(stderr, "dcbench micro: memfs: adding %s: %s\n",
				tname(t, i), strerror(err ? -err : EOVERFLOW));
			dc_memfs_free(out->fs);
			free(out->mino);
			out->fs = NULL;
			return err ? err : -EOVERFLOW;
		}
		out->mino[i] = (uint32_t)in.ino;
	}
	return 0;
}

static void fs_free(struct fsinst *f)
{
	if (!f)
		return;
	if (f->fs)
		dc_memfs_free(f->fs);
	free(f->mino);
	free(f);
}

/* -- the references' hash: libdcache's -- */

static struct dc_hkey g_hkey;	/* the references' key, from --seed */

/*
 * The length of the component at s (up to a '/' or end) and its hash
 * salted with dir: libdcache's dc__hash_component and dc__hash_salt, so
 * that every implementation hashes a name with the same code, a word at
 * a time.
 */
static inline uint32_t comp_hash(const char *s, const char *end, const void *dir,
				 uint32_t *len)
{
	uint64_t key;

	*len = (uint32_t)dc__hash_component(s, end, &g_hkey, &key);
	return dc__hash_salt(key, dir);
}

static inline uint32_t name_hash(const char *name, size_t len, const void *dir)
{
	uint32_t l;

	return comp_hash(name, name + len, dir, &l);
}

/* -- lfht -- */

struct lkey {
	const struct lnode *parent;
	const char *s;
	uint32_t len;
};

static int lmatch(struct cds_lfht_node *node, const void *key)
{
	const struct lnode *n = caa_container_of(node, struct lnode, hn);
	const struct lkey *k = key;

	return n->parent == k->parent && n->len == k->len &&
	       memcmp(n->name, k->s, k->len) == 0;
}

/* Walk path one component at a time under one read lock. */
static int lfht_resolve(struct impl *im, const char *p, struct res *r)
{
	const struct lnode *cur = im->lroot;
	const char *end = p + strlen(p);
	struct cds_lfht_iter it;
	int err = 0;

	urcu_memb_read_lock();
	for (;;) {
		struct lkey k;
		struct cds_lfht_node *nd;
		uint32_t h;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		if (!S_ISDIR(cur->mode)) {
			err = -ENOTDIR;
			break;
		}
		k.s = p;
		h = comp_hash(p, end, cur, &k.len);
		p += k.len;
		k.parent = cur;
		cds_lfht_lookup(im->ht, h, lmatch, &k, &it);
		nd = cds_lfht_iter_get_node(&it);
		if (!nd) {
			err = -ENOENT;
			break;
		}
		cur = caa_container_of(nd, struct lnode, hn);
	}
	if (!err) {
		r->id = cur->id;
		r->mode = cur->mode;
	}
	urcu_memb_read_unlock();
	return err;
}

/* The node for path (a directory the caller will hold on to). */
static struct lnode *lfht_node(struct impl *im, const char *p)
{
	const struct lnode *cur = im->lroot;
	struct cds_lfht_iter it;

	urcu_memb_read_lock();
	while (cur && *p) {
		struct lkey k = { cur, p, 0 };
		struct cds_lfht_node *nd;

		while (p[k.len] && p[k.len] != '/')
			k.len++;
		cds_lfht_lookup(im->ht, name_hash(p, k.len, cur), lmatch, &k, &it);
		nd = cds_lfht_iter_get_node(&it);
		cur = nd ? caa_container_of(nd, struct lnode, hn) : NULL;
		p += k.len;
		while (*p == '/')
			p++;
	}
	urcu_memb_read_unlock();
	return (struct lnode *)cur;
}

static int lfht_build(struct impl *im, const struct tree *t, uint64_t nbuckets,
		      size_t node_bytes)
{
	struct lnode **tmp = xmalloc(t->nn * sizeof(*tmp));
	struct mallinfo2 m0 = mallinfo2(), m1;

	im->ht = cds_lfht_new_flavor(nbuckets, nbuckets, nbuckets, 0,
				     &urcu_memb_flavor, NULL);
	if (!im->ht) {
		free(tmp);
		snprintf(im->why, sizeof(im->why), "cds_lfht_new_flavor failed");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->nn; i++) {
		const struct tnode *x = &t->n[i];
		size_t sz = sizeof(struct lnode) + x->len + 1;
		struct lnode *n = arena_alloc(&im->ar, sz > node_bytes ? sz : node_bytes);

		cds_lfht_node_init(&n->hn);
		n->parent = i ? tmp[x->parent] : NULL;
		n->id = i;
		n->mode = x->type == 'd' ? S_IFDIR | 0755 :
			  x->type == 'l' ? S_IFLNK | 0777 : S_IFREG | 0644;
		n->len = x->len;
		memcpy(n->name, tname(t, i), x->len + 1);
		tmp[i] = n;
		if (i) {
			urcu_memb_read_lock();
			cds_lfht_add(im->ht, name_hash(n->name, n->len, n->parent), &n->hn);
			urcu_memb_read_unlock();
		}
	}
	im->lroot = tmp[0];
	free(tmp);
	m1 = mallinfo2();
	/* the table's own allocations, plus what the nodes use of the arena */
	im->bytes = (m1.uordblks + m1.hblkhd) - (m0.uordblks + m0.hblkhd) -
		    im->ar.held + im->ar.used;
	return 0;
}

static void lfree_cb(struct rcu_head *h)
{
	free(h);	/* the block starts with its rcu_head */
}

static struct lnode *lnode_scratch(struct lnode *dir, const char *name, size_t len)
{
	char *blk = xmalloc(sizeof(struct rcu_head) + sizeof(struct lnode) + len + 1);
	struct lnode *n = (struct lnode *)(blk + sizeof(struct rcu_head));

	cds_lfht_node_init(&n->hn);
	n->parent = dir;
	n->id = UINT32_MAX;
	n->mode = S_IFREG | 0644;
	n->len = (uint32_t)len;
	memcpy(n->name, name, len + 1);
	return n;
}

static struct rcu_head *lnode_rcu(struct lnode *n)
{
	return (struct rcu_head *)((char *)n - sizeof(struct rcu_head));
}

/* Read lock held. */
static struct lnode *lfht_find(struct impl *im, struct lnode *dir,
			       const char *name, size_t len)
{
	struct lkey k = { dir, name, (uint32_t)len };
	struct cds_lfht_iter it;
	struct cds_lfht_node *nd;

	cds_lfht_lookup(im->ht, name_hash(name, len, dir), lmatch, &k, &it);
	nd = cds_lfht_iter_get_node(&it);
	return nd ? caa_container_of(nd, struct lnode, hn) : NULL;
}

static int lfht_create(struct impl *im, struct lnode *dir, const char *name)
{
	size_t len = strlen(name);
	struct lnode *n = lnode_scratch(dir, name, len);
	struct cds_lfht_node *got;

	urcu_memb_read_lock();
	got = cds_lfht_add_unique(im->ht, name_hash(name, len, dir), lmatch,
				  &(struct lkey){ dir, name, (uint32_t)len }, &n->hn);
	urcu_memb_read_unlock();
	if (got != &n->hn) {
		free(lnode_rcu(n));
		return -EEXIST;
	}
	return 0;
}

static int lfht_unlink(struct impl *im, struct lnode *dir, const char *name)
{
	struct lnode *o;
	int err = -ENOENT;

	urcu_memb_read_lock();
	o = lfht_find(im, dir, name, strlen(name));
	if (o && cds_lfht_del(im->ht, &o->hn) == 0)
		err = 0;
	urcu_memb_read_unlock();
	if (!err)
		urcu_memb_call_rcu(lnode_rcu(o), lfree_cb);
	return err;
}

/* The obvious rename: add the new name, then delete the old one. */
static int lfht_rename(struct impl *im, struct lnode *odir, const char *oname,
		       struct lnode *ndir, const char *nname)
{
	size_t nlen = strlen(nname);
	struct lnode *o, *n;
	int err = -ENOENT;

	urcu_memb_read_lock();
	o = lfht_find(im, odir, oname, strlen(oname));
	if (o) {
		n = lnode_scratch(ndir, nname, nlen);
		n->id = o->id;
		n->mode = o->mode;
		cds_lfht_add(im->ht, name_hash(nname, nlen, ndir), &n->hn);
		if (cds_lfht_del(im->ht, &o->hn) == 0)
			err = 0;
	}
	urcu_memb_read_unlock();
	if (!err)
		urcu_memb_call_rcu(lnode_rcu(o), lfree_cb);
	return err;
}

static void lfht_destroy(struct impl *im)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *nd;

	if (!im->ht)
		return;
	urcu_memb_read_lock();
	cds_lfht_for_each(im->ht, &it, nd)
		cds_lfht_del(im->ht, nd);
	urcu_memb_read_unlock();
	urcu_memb_synchronize_rcu();
	urcu_memb_barrier();	/* scratch nodes' callbacks */
	cds_lfht_destroy(im->ht, NULL);
	im->ht = NULL;
}

/* -- one mutex around a chained hash table -- */

/* h is salted with the directory: libdcache's bucket of it */
static inline struct mnode **mt_bucket(struct mtab *m, uint32_t h)
{
	return &m->b[dc__bucket_index(h, m->shift)];
}

static struct mnode *mt_find(struct mtab *m, const struct mnode *dir,
			     const char *s, uint32_t len, uint32_t h)
{
	struct mnode *n;

	for (n = *mt_bucket(m, h); n; n = n->next)
		if (n->hash == h && n->parent == dir && n->len == len &&
		    !memcmp(n->name, s, len))
			return n;
	return NULL;
}

/* The mutex is taken once per component, as a FUSE server's lookup does. */
static int mtab_resolve(struct impl *im, const char *p, struct res *r)
{
	struct mtab *m = &im->mt;
	const struct mnode *cur = im->mroot;
	const char *end = p + strlen(p);
	uint32_t mode = cur->mode, id = cur->id;

	for (;;) {
		const char *s;
		struct mnode *n;
		uint32_t h, len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		if (!S_ISDIR(mode))
			return -ENOTDIR;
		s = p;
		h = comp_hash(p, end, cur, &len);
		p += len;
		pthread_mutex_lock(&m->lock);
		n = mt_find(m, cur, s, len, h);
		if (n) {
			mode = n->mode;
			id = n->id;
		}
		pthread_mutex_unlock(&m->lock);
		if (!n)
			return -ENOENT;
		cur = n;
	}
	r->id = id;
	r->mode = mode;
	return 0;
}

static struct mnode *mtab_node(struct impl *im, const char *p)
{
	struct mnode *cur = im->mroot;

	pthread_mutex_lock(&im->mt.lock);
	while (cur && *p) {
		uint32_t len = 0;

		while (p[len] && p[len] != '/')
			len++;
		cur = mt_find(&im->mt, cur, p, len, name_hash(p, len, cur));
		p += len;
		while (*p == '/')
			p++;
	}
	pthread_mutex_unlock(&im->mt.lock);
	return cur;
}

static int mtab_build(struct impl *im, const struct tree *t, uint64_t nbuckets,
		      size_t node_bytes)
{
	struct mnode **tmp = xmalloc(t->nn * sizeof(*tmp));
	struct mtab *m = &im->mt;
	unsigned bits = 0;

	while ((1ull << bits) < nbuckets)
		bits++;
	pthread_mutex_init(&m->lock, NULL);
	m->b = xcalloc(nbuckets, sizeof(*m->b));
	m->shift = 64 - bits;
	for (uint32_t i = 0; i < t->nn; i++) {
		const struct tnode *x = &t->n[i];
		size_t sz = sizeof(struct mnode) + x->len + 1;
		struct mnode *n = arena_alloc(&im->ar, sz > node_bytes ? sz : node_bytes);

		n->parent = i ? tmp[x->parent] : NULL;
		n->id = i;
		n->mode = x->type == 'd' ? S_IFDIR | 0755 :
			  x->type == 'l' ? S_IFLNK | 0777 : S_IFREG | 0644;
		n->len = x->len;
		memcpy(n->name, tname(t, i), x->len + 1);
		tmp[i] = n;
		if (i) {
			struct mnode **b;

			n->hash = name_hash(n->name, n->len, n->parent);
			b = mt_bucket(m, n->hash);

			n->next = *b;
			*b = n;
		}
	}
	im->mroot = tmp[0];
	free(tmp);
	im->bytes = im->ar.used + nbuckets * sizeof(*m->b);
	return 0;
}

static int mtab_create(struct impl *im, struct mnode *dir, const char *name)
{
	size_t len = strlen(name);
	struct mnode *n = xmalloc(sizeof(*n) + len + 1), **b;
	int err = 0;

	n->parent = dir;
	n->id = UINT32_MAX;
	n->mode = S_IFREG | 0644;
	n->len = (uint32_t)len;
	n->hash = name_hash(name, len, dir);
	memcpy(n->name, name, len + 1);
	pthread_mutex_lock(&im->mt.lock);
	if (mt_find(&im->mt, dir, name, n->len, n->hash)) {
		err = -EEXIST;
	} else {
		b = mt_bucket(&im->mt, n->hash);
		n->next = *b;
		*b = n;
	}
	pthread_mutex_unlock(&im->mt.lock);
	if (err)
		free(n);
	return err;
}

/* Unlink (dir, name) from its chain; the node, or NULL.  Lock held. */
static struct mnode *mt_remove(struct mtab *m, struct mnode *dir, const char *name)
{
	size_t len = strlen(name);
	uint32_t h = name_hash(name, len, dir);
	struct mnode **pp;

	for (pp = mt_bucket(m, h); *pp; pp = &(*pp)->next) {
		struct mnode *n = *pp;

		if (n->hash == h && n->parent == dir && n->len == len &&
		    !memcmp(n->name, name, len)) {
			*pp = n->next;
			return n;
		}
	}
	return NULL;
}

static int mtab_unlink(struct impl *im, struct mnode *dir, const char *name)
{
	struct mnode *n;

	pthread_mutex_lock(&im->mt.lock);
	n = mt_remove(&im->mt, dir, name);
	pthread_mutex_unlock(&im->mt.lock);
	free(n);	/* only scratch nodes are ever removed */
	return n ? 0 : -ENOENT;
}

static int mtab_rename(struct impl *im, struct mnode *odir, const char *oname,
		       struct mnode *ndir, const char *nname)
{
	size_t len = strlen(nname);
	struct mnode *n = xmalloc(sizeof(*n) + len + 1), *o, **b;

	n->parent = ndir;
	n->len = (uint32_t)len;
	n->hash = name_hash(nname, len, ndir);
	memcpy(n->name, nname, len + 1);
	pthread_mutex_lock(&im->mt.lock);
	o = mt_remove(&im->mt, odir, oname);
	if (o) {
		n->id = o->id;
		n->mode = o->mode;
		b = mt_bucket(&im->mt, n->hash);
		n->next = *b;
		*b = n;
	}
	pthread_mutex_unlock(&im->mt.lock);
	free(o);
	if (!o) {
		free(n);
		return -ENOENT;
	}
	return 0;
}

static void mtab_destroy(struct impl *im)
{
	if (!im->mt.b)
		return;
	pthread_mutex_destroy(&im->mt.lock);
	free(im->mt.b);
	im->mt.b = NULL;
}

/* -- the kernel's dcache: a tree on a tmpfs we mounted -- */

static char g_mnt[256];			/* our private temporary directory */
static volatile sig_atomic_t g_mounted, g_made;
static bool g_fallback;			/* /dev/shm, not a mount of our own */
static char g_kfs_note[320];
static int g_cwdfd = -1;

static void rm_tree_now(const char *dir);

static void kernel_cleanup(void)
{
	if (g_mounted) {
		if (g_cwdfd >= 0 && fchdir(g_cwdfd)) {
			/* nothing better to do */
		}
		if (umount2(g_mnt, MNT_DETACH) == 0)
			g_mounted = 0;
	}
	if (g_made) {
		if (g_fallback)
			rm_tree_now(g_mnt);
		else
			rmdir(g_mnt);
		g_made = 0;
	}
}

/* Signal: undo the mount (async-signal-safe calls only), then die of it. */
static void on_signal(int sig)
{
	if (g_mounted)
		umount2(g_mnt, MNT_DETACH);
	if (g_made) {
		if (g_fallback) {
			pid_t pid = fork();

			if (pid == 0) {
				char *av[] = { "rm", "-rf", g_mnt, NULL };

				execve("/bin/rm", av, environ);
				_exit(127);
			}
			if (pid > 0)
				waitpid(pid, NULL, 0);
		} else {
			rmdir(g_mnt);
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void rm_tree_now(const char *dir)
{
	nftw(dir, rm_cb, 64, FTW_DEPTH | FTW_PHYS);
}

/*
 * A tmpfs of our own in a private temporary directory; in a mount
 * namespace of our own when we can make one, so that the mount goes away
 * with us even if we are killed.  If mounting is impossible: a directory
 * under /dev/shm (a tmpfs too, but shared), and the report says so.
 */
static int kernel_setup(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
	struct sigaction sa;
	bool ns = false;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	atexit(kernel_cleanup);
	snprintf(g_mnt, sizeof(g_mnt), "/tmp/dcbench-micro.XXXXXX");
	if (mkdtemp(g_mnt)) {
		g_made = 1;
		if (unshare(CLONE_NEWNS) == 0 &&
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
			ns = true;
		if (mount("none", g_mnt, "tmpfs", 0, "nr_inodes=0,size=4g,mode=0700") == 0) {
			g_mounted = 1;
			snprintf(g_kfs_note, sizeof(g_kfs_note), "tmpfs mounted at %s%s",
				 g_mnt, ns ? " (private mount namespace)" : "");
			return 0;
		}
		snprintf(g_kfs_note, sizeof(g_kfs_note), "mount -t tmpfs failed (%s); ",
			 strerror(errno));
		rmdir(g_mnt);
		g_made = 0;
	} else {
		snprintf(g_kfs_note, sizeof(g_kfs_note), "mkdtemp in /tmp failed (%s); ",
			 strerror(errno));
	}
	snprintf(g_mnt, sizeof(g_mnt), "/dev/shm/dcbench-micro.XXXXXX");
	if (!mkdtemp(g_mnt)) {
		size_t l = strlen(g_kfs_note);

		snprintf(g_kfs_note + l, sizeof(g_kfs_note) - l,
			 "/dev/shm failed too: kernel not measured");
		return -1;
	}
	g_made = 1;
	g_fallback = true;
	{
		size_t l = strlen(g_kfs_note);

		snprintf(g_kfs_note + l, sizeof(g_kfs_note) - l,
			 "fell back to %s (the shared /dev/shm tmpfs)", g_mnt);
	}
	return 0;
}

static int kernel_materialize(struct tree *t)
{
	char dir[600], path[PBUF];
	int dfd;

	if (t->kmade)
		return 0;
	if (t->kfailed || !g_made)
		return -1;
	snprintf(dir, sizeof(dir), "%s/%s", g_mnt, t->label);
	if (mkdir(dir, 0755) || (dfd = open(dir, O_PATH | O_DIRECTORY)) < 0) {
		fprintf(stderr, "dcbench micro: %s: %s\n", dir, strerror(errno));
		t->kfailed = true;
		return -1;
	}
	progress("materializing %s (%u entries) in %s", t->label, t->nn - 1, dir);
	for (uint32_t i = 1; i < t->nn; i++) {
		const struct tnode *x = &t->n[i];
		int r;

		if (tree_path(t, i, path, sizeof(path)) < 0)
			continue;
		if (x->type == 'd')
			r = mkdirat(dfd, path, 0755);
		else if (x->type == 'l')
			r = symlinkat(t->pool + x->target, dfd, path);
		else
			r = mknodat(dfd, path, S_IFREG | 0644, 0);
		if (r) {
			fprintf(stderr, "dcbench micro: creating %s/%s: %s\n", dir, path,
				strerror(errno));
			close(dfd);
			t->kfailed = true;
			return -1;
		}
	}
	close(dfd);
	t->kmade = true;
	return 0;
}

static int kernel_enter(const struct impl *im)
{
	return chdir(im->kdir) ? -errno : 0;
}

static void kernel_leave(void)
{
	if (fchdir(g_cwdfd)) {
		fprintf(stderr, "dcbench micro: cannot return to the working directory: %s\n",
			strerror(errno));
		exit(1);
	}
}

/* -- building, checking and freeing any of them -- */

static int im_build(struct impl *im, int kind, struct scen *s, struct fsinst *shared)
{
	memset(im, 0, sizeof(*im));
	im->kind = kind;
	switch (kind) {
	case IM_RCU:
	case IM_RWLOCK:
	case IM_GLOBAL: {
		struct dc_options o = {
			.mode = kind == IM_RCU ? DC_MODE_RCU :
				kind == IM_RWLOCK ? DC_MODE_RWLOCK : DC_MODE_GLOBAL,
			.max_entries = s->max_entries,
			.max_negative = s->max_negative,
			.ttl_ms = s->ttl_ms,
			.neg_ttl_ms = s->ttl_ms,
		};
		int err;

		if (shared) {
			im->fs = shared;
		} else {
			im->fs = xcalloc(1, sizeof(*im->fs));
			im->fs_owner = true;
			err = fs_build(s->t, im->fs);
			if (err) {
				snprintf(im->why, sizeof(im->why), "memfs: %s", strerror(-err));
				return err;
			}
		}
		o.backend = dc_memfs_backend(im->fs->fs);
		err = dc_cache_create(&o, &im->c);
		if (err) {
			snprintf(im->why, sizeof(im->why), "dc_cache_create: %s", strerror(-err));
			return err;
		}
		return 0;
	}
	case IM_KERNEL:
		if (s->id == SC_COLD) {
			im->skipped = true;
			snprintf(im->why, sizeof(im->why), "skipped for cold: a tree of %u "
				 "entries on tmpfs takes too long to create", s->t->nn - 1);
			return -1;
		}
		if (kernel_materialize(s->t)) {
			snprintf(im->why, sizeof(im->why), "no tree on a kernel file system: %s",
				 g_kfs_note);
			return -1;
		}
		snprintf(im->kdir, sizeof(im->kdir), "%s/%s", g_mnt, s->t->label);
		return 0;
	case IM_LFHT:
		return lfht_build(im, s->t, s->nbuckets, s->ref_node_bytes);
	case IM_MUTEX:
		return mtab_build(im, s->t, s->nbuckets, s->ref_node_bytes);
	}
	return -EINVAL;
}

static void im_destroy(struct impl *im)
{
	if (im->c)
		dc_cache_destroy(im->c);
	im->c = NULL;
	if (im->fs_owner)
		fs_free(im->fs);
	im->fs = NULL;
	lfht_destroy(im);
	mtab_destroy(im);
	arena_free(&im->ar);
}

/* One lookup, with its answer (checks and warming only). */
static int im_resolve(struct impl *im, const char *path, struct res *r)
{
	switch (im->kind) {
	case IM_KERNEL: {
		struct stat st;

		if (fstatat(AT_FDCWD, path, &st, 0))
			return -errno;
		r->id = UINT32_MAX;	/* compared by type only */
		r->mode = st.st_mode;
		return 0;
	}
	case IM_LFHT:
		return lfht_resolve(im, path, r);
	case IM_MUTEX:
		return mtab_resolve(im, path, r);
	default: {
		struct dc_inode st;
		int err = dc_resolve(im->c, NULL, path, 0, &st);

		if (!err) {
			r->id = (uint32_t)st.ino;	/* memfs inode number */
			r->mode = st.mode;
		}
		return err;
	}
	}
}

/*
 * Check every answer against the tree (this also warms the caches).
 * Returns the number of wrong answers; the first few are printed.
 */
static uint64_t im_check(struct impl *im, const struct scen *s)
{
	const struct targets *g = &s->tg;
	uint64_t bad = 0;

	if (im->kind == IM_KERNEL && kernel_enter(im))
		return 1;
	for (uint32_t i = 0; i < g->n; i++) {
		struct res r = { 0, 0 };
		int err = im_resolve(im, g->path[i], &r);
		int32_t e = g->expect[i];
		bool ok;

		if (e < 0) {
			ok = err == -ENOENT;
		} else if (err) {
			ok = false;
		} else {
			const struct tnode *x = &s->t->n[e];
			uint32_t want = im_is_dc(im->kind) ? im->fs->mino[e] :
					im->kind == IM_KERNEL ? UINT32_MAX : (uint32_t)e;

			ok = r.id == want &&
			     (x->type == 'd' ? S_ISDIR(r.mode) : S_ISREG(r.mode));
		}
		if (!ok && bad++ < 5)
			fprintf(stderr, "dcbench micro: %s %s: wrong answer for %s: %s "
				"(expected %s)\n", sc_names[s->id], im_names[im->kind],
				g->path[i], err ? strerror(-err) : "found",
				e < 0 ? "ENOENT" : "found");
	}
	if (im->kind == IM_KERNEL)
		kernel_leave();
	return bad;
}

/* ---- updates (mixed scenarios and the update costs) ---------------------- */

struct dirh {			/* directories to update in, in one implementation */
	struct dc_dentry *d[NSDIR];
	uint64_t ino[NSDIR];	/* memfs */
	int fd[NSDIR];		/* kernel: O_PATH descriptors */
	void *node[NSDIR];	/* lfht, mutex */
	unsigned n;
};

static int dirh_open(struct impl *im, struct dirh *h, const struct tree *t,
		     const uint32_t *dirs, unsigned n)
{
	char path[PBUF], full[PBUF + 600];

	memset(h, 0, sizeof(*h));
	for (unsigned k = 0; k < NSDIR; k++)
		h->fd[k] = -1;
	for (unsigned k = 0; k < n; k++) {
		if (tree_path(t, dirs[k], path, sizeof(path)) < 0)
			return -ENAMETOOLONG;
		h->n = k + 1;
		switch (im->kind) {
		case IM_KERNEL:
			snprintf(full, sizeof(full), "%s/%s", im->kdir, path);
			h->fd[k] = open(full, O_PATH | O_DIRECTORY);
			if (h->fd[k] < 0)
				return -errno;
			break;
		case IM_LFHT:
			if (!(h->node[k] = lfht_node(im, path)))
				return -ENOENT;
			break;
		case IM_MUTEX:
			if (!(h->node[k] = mtab_node(im, path)))
				return -ENOENT;
			break;
		default: {
			struct dc_inode st;
			int err = dc_walk(im->c, NULL, path, 0, &h->d[k]);

			if (err)
				return err;
			err = dc_dentry_stat(h->d[k], &st);
			if (err)
				return err;
			h->ino[k] = st.ino;
		}
		}
	}
	return 0;
}

static void dirh_close(struct impl *im, struct dirh *h)
{
	for (unsigned k = 0; k < h->n; k++) {
		if (h->d[k])
			dc_put(im->c, h->d[k]);
		if (h->fd[k] >= 0)
			close(h->fd[k]);
	}
	memset(h, 0, sizeof(*h));
}

static int im_create(struct impl *im, struct dirh *h, unsigned k, const char *name)
{
	switch (im->kind) {
	case IM_KERNEL:
		return mknodat(h->fd[k], name, S_IFREG | 0644, 0) ? -errno : 0;
	case IM_LFHT:
		return lfht_create(im, h->node[k], name);
	case IM_MUTEX:
		return mtab_create(im, h->node[k], name);
	default: {
		struct dc_inode in;
		int err = dc_memfs_add(im->fs->fs, h->ino[k], name, S_IFREG | 0644,
				       NULL, &in);

		return err ? err : dc_create(im->c, h->d[k], name, &in);
	}
	}
}

static int im_unlink(struct impl *im, struct dirh *h, unsigned k, const char *name)
{
	switch (im->kind) {
	case IM_KERNEL:
		return unlinkat(h->fd[k], name, 0) ? -errno : 0;
	case IM_LFHT:
		return lfht_unlink(im, h->node[k], name);
	case IM_MUTEX:
		return mtab_unlink(im, h->node[k], name);
	default: {
		int err = dc_memfs_remove(im->fs->fs, h->ino[k], name, 0);

		return err ? err : dc_unlink(im->c, h->d[k], name);
	}
	}
}

static int im_rename(struct impl *im, struct dirh *h, unsigned a, const char *oname,
		     unsigned b, const char *nname)
{
	switch (im->kind) {
	case IM_KERNEL:
		return renameat(h->fd[a], oname, h->fd[b], nname) ? -errno : 0;
	case IM_LFHT:
		return lfht_rename(im, h->node[a], oname, h->node[b], nname);
	case IM_MUTEX:
		return mtab_rename(im, h->node[a], oname, h->node[b], nname);
	default: {
		int err = dc_memfs_rename(im->fs->fs, h->ino[a], oname, h->ino[b],
					  nname, 0);

		return err ? err : dc_rename(im->c, h->d[a], oname, h->d[b], nname, 0);
	}
	}
}

/* ---- threads and timed runs ------------------------------------------------ */

struct slot {			/* one create / rename / unlink triple */
	char a[24], b[24];
	uint8_t da, db;
};

struct pool;

struct worker {
	_Alignas(64) struct pool *p;
	pthread_t th;
	unsigned idx;
	const char **paths;
	uint32_t *tix;		/* target index of each path */
	uint8_t *miss;		/* 1: the path must answer ENOENT */
	uint64_t *cpre;		/* components looked up in [0, i) */
	uint32_t *lpre;		/* lookups in [0, i) (mixed) */
	uint8_t *kind;		/* mixed: an update step at i */
	uint32_t n;
	struct slot *slots;
	uint32_t sdir[NSDIR];	/* tree nodes of the update directories */
	struct dirh dh[IM_NR];
	unsigned step, j;	/* where the worker is in its triples */
	int schedfd;		/* /proc/thread-self/schedstat, or -1 */
	/* the last run */
	uint64_t t0, t1, wait0, wait1, run0, run1, wraps, wrong, uerr;
	uint64_t ops, lookups, comps;
	uint32_t pos;
};

struct pool {
	unsigned n;
	struct worker *w;
	pthread_barrier_t go, done;
	int stop, quit;
	struct impl *im;
	bool floor;		/* the kernel's syscall floor, not the paths */
	bool pin;
};

/*
 * This thread's time on a CPU and time runnable but waiting for one (ns),
 * from /proc/thread-self/schedstat; zeros if unreadable.
 */
static uint64_t cpu_wait_ns2(int fd, uint64_t *run)
{
	char buf[128];
	unsigned long long r, wait;
	ssize_t n;

	*run = 0;
	if (fd < 0 || (n = pread(fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &r, &wait) != 2)
		return 0;
	*run = r;
	return wait;
}

static uint64_t cpu_wait_ns(int fd)
{
	uint64_t run;

	return cpu_wait_ns2(fd, &run);
}

static int upd_step(struct impl *im, struct worker *w)
{
	const struct slot *s = &w->slots[w->j];
	struct dirh *h = &w->dh[im->kind];
	int err;

	switch (w->step) {
	case 0:
		err = im_create(im, h, s->da, s->a);
		break;
	case 1:
		err = im_rename(im, h, s->da, s->a, s->db, s->b);
		break;
	default:
		err = im_unlink(im, h, s->db, s->b);
		break;
	}
	if (++w->step == 3) {
		w->step = 0;
		if (++w->j == NSLOT)
			w->j = 0;
	}
	return err;
}

/*
 * The timed loop, one copy per implementation so the call is direct.
 * Stops at the first batch boundary after the main thread sets stop.
 * Counts the lookups whose outcome (found, or not) is not the tree's:
 * a failing lookup is cheaper, so they must not pass unnoticed.
 */
#define TIMED_LOOP(w, im, CALL)						\
	do {								\
		const char *const *P_ = (const char *const *)(w)->paths;	\
		const uint8_t *K_ = (w)->kind, *M_ = (w)->miss;		\
		uint32_t N_ = (w)->n, I_ = 0;				\
		uint64_t wr_ = 0, f_ = 0, u_ = 0;			\
		int *stop_ = &(w)->p->stop;				\
									\
		if (!K_) {						\
			do {						\
				for (int k_ = 0; k_ < BATCH; k_++) {	\
					const char *path = P_[I_];	\
					f_ += ((CALL) != 0) != M_[I_];	\
					if (++I_ == N_) {		\
						I_ = 0;			\
						wr_++;			\
					}				\
				}					\
			} while (!__atomic_load_n(stop_, __ATOMIC_RELAXED)); \
		} else {						\
			do {						\
				for (int k_ = 0; k_ < BATCH; k_++) {	\
					if (K_[I_]) {			\
						u_ += upd_step((im), (w)) != 0; \
					} else {			\
						const char *path = P_[I_]; \
						f_ += ((CALL) != 0) != M_[I_]; \
					}				\
					if (++I_ == N_) {		\
						I_ = 0;			\
						wr_++;			\
					}				\
				}					\
			} while (!__atomic_load_n(stop_, __ATOMIC_RELAXED)); \
		}							\
		(w)->t1 = now_ns();					\
		(w)->wait1 = cpu_wait_ns2((w)->schedfd, &(w)->run1);	\
		(w)->pos = I_;						\
		(w)->wraps = wr_;					\
		(w)->wrong = f_;					\
		(w)->uerr = u_;						\
	} while (0)

/*
 * The kernel's floor: fstatat of "." in the tree's root, the working
 * directory.  The system call, its path walk set up and finished, the
 * inode copied out, but no component looked up ("." is not hashed).
 */
static void floor_loop(struct worker *w)
{
	int *stop = &w->p->stop;
	struct stat st;
	uint64_t n = 0, bad = 0;

	do {
		for (int k = 0; k < BATCH; k++)
			bad += fstatat(AT_FDCWD, ".", &st, 0) != 0;
		n += BATCH;
	} while (!__atomic_load_n(stop, __ATOMIC_RELAXED));
	w->t1 = now_ns();
	w->wait1 = cpu_wait_ns2(w->schedfd, &w->run1);
	w->ops = w->lookups = n;
	w->comps = 0;
	w->wrong = bad;
	w->uerr = 0;
}

static void run_job(struct worker *w)
{
	struct impl *im = w->p->im;

	w->wait0 = cpu_wait_ns2(w->schedfd, &w->run0);
	w->t0 = now_ns();
	if (w->p->floor) {
		floor_loop(w);
		return;
	}
	switch (im->kind) {
	case IM_KERNEL: {
		struct stat st;

		TIMED_LOOP(w, im, fstatat(AT_FDCWD, path, &st, 0));
		break;
	}
	case IM_LFHT: {
		struct res r;

		TIMED_LOOP(w, im, lfht_resolve(im, path, &r));
		break;
	}
	case IM_MUTEX: {
		struct res r;

		TIMED_LOOP(w, im, mtab_resolve(im, path, &r));
		break;
	}
	default: {
		struct dc_cache *c = im->c;
		struct dc_inode st;

		TIMED_LOOP(w, im, dc_resolve(c, NULL, path, 0, &st));
		break;
	}
	}
	w->ops = w->wraps * w->n + w->pos;
	w->comps = w->wraps * w->cpre[w->n] + w->cpre[w->pos];
	w->lookups = w->lpre ? w->wraps * w->lpre[w->n] + w->lpre[w->pos] : w->ops;
	/* untimed: finish the triple in progress, so the next run starts
	 * from the same namespace */
	while (w->step)
		w->uerr += upd_step(im, w) != 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->p;

	urcu_memb_register_thread();	/* for lfht; libdcache leaves it be */
	w->schedfd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (p->pin) {
		cpu_set_t all, one;
		unsigned k = 0, want;

		if (sched_getaffinity(0, sizeof(all), &all) == 0) {
			want = w->idx % (unsigned)CPU_COUNT(&all);
			for (unsigned c = 0; c < CPU_SETSIZE; c++) {
				if (!CPU_ISSET(c, &all))
					continue;
				if (k++ == want) {
					CPU_ZERO(&one);
					CPU_SET(c, &one);
					pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
					break;
				}
			}
		}
	}
	for (;;) {
		pthread_barrier_wait(&p->go);
		if (p->quit)
			break;
		run_job(w);
		pthread_barrier_wait(&p->done);
	}
	if (w->schedfd >= 0)
		close(w->schedfd);
	urcu_memb_unregister_thread();
	return NULL;
}

static void pool_start(struct pool *p, unsigned n, bool pin)
{
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->pin = pin;
	p->w = aligned_alloc(64, ((n * sizeof(*p->w)) + 63) & ~(size_t)63);
	if (!p->w)
		oom(n * sizeof(*p->w));
	memset(p->w, 0, n * sizeof(*p->w));
	pthread_barrier_init(&p->go, NULL, n + 1);
	pthread_barrier_init(&p->done, NULL, n + 1);
	for (unsigned i = 0; i < n; i++) {
		p->w[i].p = p;
		p->w[i].idx = i;
	}
}

static int pool_spawn(struct pool *p)
{
	for (unsigned i = 0; i < p->n; i++) {
		int err = pthread_create(&p->w[i].th, NULL, worker_main, &p->w[i]);

		if (err) {
			fprintf(stderr, "dcbench micro: pthread_create: %s\n", strerror(err));
			exit(1);
		}
	}
	return 0;
}

static void pool_join(struct pool *p)
{
	p->quit = 1;
	pthread_barrier_wait(&p->go);
	for (unsigned i = 0; i < p->n; i++)
		pthread_join(p->w[i].th, NULL);
	pthread_barrier_destroy(&p->go);
	pthread_barrier_destroy(&p->done);
}

static void pool_free(struct pool *p)
{
	for (unsigned i = 0; i < p->n; i++) {
		struct worker *w = &p->w[i];

		free(w->paths);
		free(w->tix);
		free(w->miss);
		free(w->cpre);
		free(w->lpre);
		free(w->kind);
		free(w->slots);
	}
	free(p->w);
}

/* Each worker's own shuffled array of paths (and updates, for mixed). */
static void make_arrays(struct pool *p, const struct scen *s, uint64_t seed)
{
	const struct targets *g = &s->tg;

	for (unsigned k = 0; k < p->n; k++) {
		struct worker *w = &p->w[k];
		uint64_t rs = seed ^ ((uint64_t)(k + 1) * GOLDEN) ^ ((uint64_t)s->id << 40);
		uint32_t n = s->samefile ? SAMEFILE_LEN : g->n < LMAX ? g->n : LMAX;

		w->n = n;
		w->tix = xmalloc(n * sizeof(*w->tix));
		w->paths = xmalloc(n * sizeof(*w->paths));
		w->cpre = xmalloc((n + 1) * sizeof(*w->cpre));
		if (s->samefile) {
			memset(w->tix, 0, n * sizeof(*w->tix));
		} else if (g->n <= LMAX) {
			for (uint32_t i = 0; i < n; i++)
				w->tix[i] = i;
			for (uint32_t i = n; i > 1; i--) {
				uint32_t j = rng_below(&rs, i), x = w->tix[i - 1];

				w->tix[i - 1] = w->tix[j];
				w->tix[j] = x;
			}
		} else {
			for (uint32_t i = 0; i < n; i++)
				w->tix[i] = rng_below(&rs, g->n);
		}
		w->miss = xmalloc(n);
		for (uint32_t i = 0; i < n; i++) {
			w->paths[i] = g->path[w->tix[i]];
			w->miss[i] = g->expect[w->tix[i]] < 0;
		}
		if (s->mixed_pct) {
			w->kind = xmalloc(n);
			w->lpre = xmalloc((n + 1) * sizeof(*w->lpre));
			for (uint32_t i = 0; i < n; i++)
				w->kind[i] = rng_below(&rs, 100) < s->mixed_pct;
			w->slots = xmalloc(NSLOT * sizeof(*w->slots));
			for (unsigned j = 0; j < NSLOT; j++) {
				snprintf(w->slots[j].a, sizeof(w->slots[j].a), "zz-w%u-%u.a", k, j);
				snprintf(w->slots[j].b, sizeof(w->slots[j].b), "zz-w%u-%u.b", k, j);
				w->slots[j].da = (uint8_t)rng_below(&rs, NSDIR);
				w->slots[j].db = (uint8_t)rng_below(&rs, NSDIR);
			}
			for (unsigned d = 0; d < NSDIR; d++)
				w->sdir[d] = s->t->dirs[rng_below(&rs, s->t->ndirs)];
			w->lpre[0] = 0;
		}
		w->cpre[0] = 0;
		for (uint32_t i = 0; i < n; i++) {
			bool upd = w->kind && w->kind[i];

			w->cpre[i + 1] = w->cpre[i] + (upd ? 0 : g->ncomp[w->tix[i]]);
			if (w->lpre)
				w->lpre[i + 1] = w->lpre[i] + !upd;
		}
	}
}

/* ---- results --------------------------------------------------------------- */

struct cell {			/* one (scenario, threads, implementation) */
	bool measured;
	bool skipped;		/* not offered (kernel, cold): no error */
	char why[400];
	unsigned nr;
	double ns[MAX_RUNS], nsc[MAX_RUNS], mops[MAX_RUNS];
	double mopsw[MAX_RUNS];	/* all threads' ops / wall time */
	double floor[MAX_RUNS];	/* kernel: ns per fstatat(".") */
	unsigned nfloor;
	double share[MAX_RUNS];	/* of the wall time, not waiting for a CPU */
	uint64_t ops, lookups, comps, wrong, upd, uerr;
	uint64_t dc_lookups, dc_misses, dc_restarts;
	double ns_med, ns_mean, ns_sd, nsc_med, mops_med, mops_mean, mops_sd;
	double mopsw_med, share_med;
	double scaling;		/* median of paired wall-clock ratios */
	double floor_med, beyond_med;	/* kernel: floor, ns/comp beyond it */
};

struct bench {
	/* options */
	bool json, pin, no_bytes, no_updates;
	unsigned ref_node_bytes;
	uint32_t ttl_ms;
	const char *plot, *treefile;
	bool scen[SC_NR], impl[IM_NR];
	unsigned tl[MAX_TLIST], ntl;
	unsigned runs, ms;
	uint64_t cold_entries, seed;
	/* state */
	unsigned cores;
	struct tree *hot;
	struct cell *cells;	/* [SC_NR][ntl][IM_NR] */
	bool ran[SC_NR];
	uint64_t mismatches, update_errors;
	uint64_t wrong_lookups;	/* in the timed runs */
	unsigned unmeasured;	/* asked for, not (fully) measured */
	char scen_note[SC_NR][200];
	/* bytes per entry */
	struct bytes_res {
		bool ok;
		uint64_t entries, bytes, max_entries;
		uint64_t empty_bytes;	/* the same cache holding its root only */
		double bpe;		/* bytes / entries */
		double marginal;	/* (bytes - empty_bytes) / (entries - 1) */
	} by_hot, by_short, by_full;
	double ref_bpe[IM_NR];
	/* update costs */
	double upd[IM_NR][4][MAX_RUNS];
	unsigned upd_n[IM_NR][4];
	double upd_med[IM_NR][4];
	bool upd_ran;
};

enum { U_RENAME, U_RENAME_CACHE, U_CU, U_CU_CACHE, U_NR };
static const char *const u_names[U_NR] = {
	"rename", "rename_cache_only", "create_unlink", "create_unlink_cache_only",
};

/* Every thread count's pool stays up for a whole scenario, each kernel
 * worker with its directory descriptors: the soft descriptor limit goes up
 * to the hard one.  Best effort: a cell that still runs out is reported
 * as not measured. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static struct cell *cell_at(struct bench *b, int sc, unsigned ti, int im)
{
	return &b->cells[((size_t)sc * b->ntl + ti) * IM_NR + im];
}

static int tl_index(const struct bench *b, unsigned threads)
{
	for (unsigned i = 0; i < b->ntl; i++)
		if (b->tl[i] == threads)
			return (int)i;
	return -1;
}

/* A measured cell, or NULL. */
static struct cell *cell_get(struct bench *b, int sc, unsigned threads, int im)
{
	int ti = tl_index(b, threads);
	struct cell *c;

	if (ti < 0 || !b->ran[sc])
		return NULL;
	c = cell_at(b, sc, (unsigned)ti, im);
	return c->measured && c->nr ? c : NULL;
}

/*
 * One timed run of im on every worker (floor: the kernel's syscall floor).
 * Two figures: each thread's rate over its own time on a CPU (ns/lookup,
 * Mops/s), and the operations of all threads over the wall time from the
 * start barrier to the last thread's end (mops_wall, which scaling uses).
 */
/* What a run is: a timed one, the kernel's syscall floor, or a warm-up. */
enum run_kind { RUN_TIMED, RUN_FLOOR, RUN_WARM };

static void timed_run(struct bench *b, struct pool *p, struct impl *im,
		      struct cell *cl, enum run_kind kind, unsigned ms)
{
	bool floor = kind == RUN_FLOOR;
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	uint64_t t0, t1 = 0, ops = 0, comps = 0, lookups = 0, wrong = 0;
	double wall, rate = 0, crate = 0, busy = 0, wallsum = 0;
	bool correct = p->n <= b->cores;	/* oversubscribed: we wait for ourselves */
	struct dc_stats st0;

	if (im->kind == IM_KERNEL && kernel_enter(im)) {
		snprintf(cl->why, sizeof(cl->why), "chdir %.300s: %s", im->kdir,
			 strerror(errno));
		return;
	}
	if (im->c)
		dc_get_stats(im->c, &st0);
	p->im = im;
	p->floor = floor;
	__atomic_store_n(&p->stop, 0, __ATOMIC_RELAXED);
	pthread_barrier_wait(&p->go);
	t0 = now_ns();
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
	pthread_barrier_wait(&p->done);
	if (im->kind == IM_KERNEL)
		kernel_leave();
	if (im->c) {
		struct dc_stats st;

		dc_get_stats(im->c, &st);
		cl->dc_lookups += st.lookups - st0.lookups;
		cl->dc_misses += st.misses - st0.misses;
		cl->dc_restarts += st.restarts - st0.restarts;
	}
	for (unsigned i = 0; i < p->n; i++) {
		struct worker *w = &p->w[i];

		if (w->t0 < t0)
			t0 = w->t0;
		if (w->t1 > t1)
			t1 = w->t1;
	}
	wall = (double)(t1 - t0);
	/*
	 * Each thread's rate over the time it was not waiting for a CPU (the
	 * machine is shared: other processes' time is not ours), summed.  When
	 * oversubscribed our own threads make the waits, so there it is plain
	 * operations over wall time.
	 */
	for (unsigned i = 0; i < p->n; i++) {
		struct worker *w = &p->w[i];
		double wi = (double)(w->t1 - w->t0);
		double wait = w->wait1 > w->wait0 ? (double)(w->wait1 - w->wait0) : 0;
		double eff;

		if (wait > wi)
			wait = wi;
		eff = correct ? wi - wait : wall;
		if (eff < wi / 100)
			eff = wi / 100;
		rate += (double)w->ops / eff;
		crate += (double)w->comps / eff;
		if (debug_runs)
			fprintf(stderr, "%s%s T%u w%u: wall %.1f ms wait %.1f cpu %.1f: ns/op wall-wait %.1f cpu %.1f\n",
				im_names[im->kind], floor ? "-floor" : kind == RUN_WARM ? "-warm" : "",
				p->n, i, wi / 1e6,
				wait / 1e6, (w->run1 - w->run0) / 1e6, eff / w->ops,
				(double)(w->run1 - w->run0) / w->ops);
		busy += wi - wait;
		wallsum += wi;
		ops += w->ops;
		comps += w->comps;
		lookups += w->lookups;
		wrong += w->wrong;
		cl->uerr += w->uerr;
	}
	cl->wrong += wrong;
	if (floor) {
		if (cl->nfloor < MAX_RUNS && ops)
			cl->floor[cl->nfloor++] = p->n / rate;
		return;
	}
	if (cl->nr < MAX_RUNS && ops) {
		cl->ns[cl->nr] = p->n / rate;
		cl->nsc[cl->nr] = comps ? p->n / crate : NAN;
		cl->mops[cl->nr] = rate * 1e3;
		cl->mopsw[cl->nr] = (double)ops * 1e3 / wall;
		cl->share[cl->nr] = wallsum > 0 ? busy / wallsum : NAN;
		cl->nr++;
	}
	cl->ops += ops;
	cl->lookups += lookups;
	cl->comps += comps;
	cl->upd += ops - lookups;
	cl->measured = true;
}

/*
 * An untimed run of implementation k at the first thread count it runs
 * at, half as long as a timed one, before its block of a round: the
 * previous implementation's runs left the CPU caches full of its data,
 * and without this the first timed run after them (always the 1-thread
 * one) pays for it alone, which slows it and inflates every scaling
 * paired with it.
 */
static void warm_run(struct bench *b, int id, struct pool *pools, struct impl *ims,
		     int k, bool live[][IM_NR])
{
	static struct cell scratch;	/* its timings are dropped */

	for (unsigned ti = 0; ti < b->ntl; ti++)
		if (live[ti][k]) {
			struct cell *cl = cell_at(b, id, ti, k);

			memset(&scratch, 0, sizeof(scratch));
			timed_run(b, &pools[ti], &ims[k], &scratch, RUN_WARM,
				  b->ms / 2 ? b->ms / 2 : 1);
			/* its wrong lookups and failed updates are not dropped */
			cl->wrong += scratch.wrong;
			cl->uerr += scratch.uerr;
			return;
		}
}

/* ---- scenarios --------------------------------------------------------------- */

static void add_file_targets(struct scen *s)
{
	char path[PBUF];

	for (uint32_t i = 1; i < s->t->nn; i++) {
		long len;

		if (s->t->n[i].type != 'f')
			continue;
		len = tree_path(s->t, i, path, sizeof(path));
		if (len > 0)
			tg_add(&s->tg, path, (size_t)len, (int32_t)i, s->t->n[i].depth);
	}
}

static int scen_build(struct bench *b, struct scen *s, int id)
{
	char path[PBUF];

	memset(s, 0, sizeof(*s));
	s->id = id;
	switch (id) {
	case SC_HOT:
	case SC_NEGATIVE:
	case SC_MIXED1:
	case SC_MIXED10:
	case SC_SAMEFILE:
		s->t = b->hot;
		break;
	case SC_SMALL:
		s->t = tree_subset(b->hot, 2000, "small", b->seed ^ 0x5a11);
		break;
	case SC_DEEP:
		s->t = tree_deep();
		break;
	case SC_LONGNAMES:
		s->t = tree_longnames(b->seed ^ 0x10c6);
		break;
	case SC_COLD:
		progress("generating the cold tree (%" PRIu64 " entries)", b->cold_entries);
		s->t = tree_cold(b->cold_entries, b->seed ^ 0xc01d);
		break;
	}
	s->mixed_pct = id == SC_MIXED1 ? 1 : id == SC_MIXED10 ? 10 : 0;
	if (id == SC_SAMEFILE) {
		static const char *const pref[] = { "include/linux/fs.h", "Makefile" };
		int32_t pick = -1;

		for (unsigned k = 0; k < 2 && pick < 0; k++)
			for (uint32_t i = 1; i < s->t->nn && pick < 0; i++)
				if (s->t->n[i].type == 'f' &&
				    tree_path(s->t, i, path, sizeof(path)) > 0 &&
				    !strcmp(path, pref[k]))
					pick = (int32_t)i;
		for (uint32_t i = 1; i < s->t->nn && pick < 0; i++)
			if (s->t->n[i].type == 'f' && s->t->n[i].depth >= 3)
				pick = (int32_t)i;
		if (pick < 0)
			return -1;
		tree_path(s->t, (uint32_t)pick, path, sizeof(path));
		tg_add(&s->tg, path, strlen(path), pick, s->t->n[pick].depth);
		s->samefile = true;
	} else {
		add_file_targets(s);
	}
	if (id == SC_NEGATIVE) {
		uint32_t n = s->tg.n;

		/* the same paths with the last component changed: misses */
		for (uint32_t i = 0; i < n; i++) {
			const char *p = s->tg.pool + s->tg.off[i];
			size_t len = strlen(p);

			if (len + 4 >= sizeof(path))
				continue;
			memcpy(path, p, len);
			memcpy(path + len, "#nx", 4);
			tg_add(&s->tg, path, len + 3, -1, s->tg.ncomp[i]);
			s->negatives++;
		}
	}
	tg_finish(&s->tg);
	if (s->tg.n == 0)
		return -1;
	{
		uint64_t need = (uint64_t)s->t->nn + s->negatives;

		s->max_entries = need + need / 2 + 65536;
		s->max_negative = (uint64_t)s->negatives * 2 + 65536;
		/* libdcache sizes its own buckets from max_entries; the
		 * references get the textbook pre-size for what they hold */
		s->nbuckets = pow2_at_least(s->t->nn);
	}
	s->ref_node_bytes = b->ref_node_bytes;
	s->ttl_ms = b->ttl_ms;
	return 0;
}

static void scen_free(struct bench *b, struct scen *s)
{
	tg_free(&s->tg);
	if (s->t != b->hot)
		tree_free(s->t);
	s->t = NULL;
}

static uint64_t tg_comps(const struct targets *g)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < g->n; i++)
		n += g->ncomp[i];
	return n;
}

/*
 * A pool of threads for each thread count, all kept until the scenario
 * ends so that the thread counts can take turns; live[ti][k]: im k can
 * run with pool ti (the mixed scenarios need its update directories).
 */
static void pools_start(struct bench *b, int id, struct scen *s, struct impl *ims,
			struct pool *pools, bool live[][IM_NR])
{
	for (unsigned ti = 0; ti < b->ntl; ti++) {
		unsigned T = b->tl[ti];
		struct pool *p = &pools[ti];

		for (int k = 0; k < IM_NR; k++) {
			struct cell *cl = cell_at(b, id, ti, k);

			memset(cl, 0, sizeof(*cl));
			cl->skipped = ims[k].skipped;
			live[ti][k] = ims[k].ok;
			if (!ims[k].ok)
				snprintf(cl->why, sizeof(cl->why), "%s", ims[k].why);
		}
		progress("scenario %s: %u thread%s", sc_names[id], T, plural(T));
		pool_start(p, T, b->pin);
		make_arrays(p, s, b->seed);
		for (int k = 0; k < IM_NR && s->mixed_pct; k++)
			for (unsigned w = 0; w < T && live[ti][k]; w++) {
				struct cell *cl = cell_at(b, id, ti, k);
				int err = dirh_open(&ims[k], &p->w[w].dh[k], s->t,
						    p->w[w].sdir, NSDIR);

				if (err) {
					fprintf(stderr, "dcbench micro: %s %s: update "
						"directories: %s\n", sc_names[id],
						im_names[k], strerror(-err));
					live[ti][k] = false;
					snprintf(cl->why, sizeof(cl->why),
						 "update directories: %s", strerror(-err));
				}
			}
		pool_spawn(p);
	}
}

static void pools_stop(struct bench *b, int id, struct impl *ims, struct pool *pools)
{
	for (unsigned ti = 0; ti < b->ntl; ti++) {
		struct pool *p = &pools[ti];

		pool_join(p);
		for (int k = 0; k < IM_NR; k++) {
			b->update_errors += cell_at(b, id, ti, k)->uerr;
			for (unsigned w = 0; w < p->n; w++)
				dirh_close(&ims[k], &p->w[w].dh[k]);
		}
		pool_free(p);
	}
}

static int run_scenario(struct bench *b, int id)
{
	struct scen s;
	struct impl ims[IM_NR];
	struct fsinst *shared = NULL;
	int order[IM_NR], nim = 0;
	struct pool pools[MAX_TLIST];
	bool live[MAX_TLIST][IM_NR];

	progress("scenario %s: building", sc_names[id]);
	if (scen_build(b, &s, id)) {
		fprintf(stderr, "dcbench micro: %s: nothing to look up\n", sc_names[id]);
		scen_free(b, &s);
		return -1;
	}
	/* the dc modes share one memfs unless the scenario changes it */
	if (!s.mixed_pct && (b->impl[IM_RCU] || b->impl[IM_RWLOCK] || b->impl[IM_GLOBAL])) {
		int err;

		shared = xcalloc(1, sizeof(*shared));
		err = fs_build(s.t, shared);
		if (err) {
			free(shared);
			shared = NULL;
		}
	}
	for (int k = 0; k < IM_NR; k++) {
		uint64_t bad;

		memset(&ims[k], 0, sizeof(ims[k]));
		ims[k].kind = k;
		if (!b->impl[k]) {
			snprintf(ims[k].why, sizeof(ims[k].why), "not asked for (--impls)");
			continue;
		}
		progress("scenario %s: building %s", sc_names[id], im_names[k]);
		if (im_build(&ims[k], k, &s, !s.mixed_pct ? shared : NULL)) {
			if (!ims[k].why[0])
				snprintf(ims[k].why, sizeof(ims[k].why), "could not be built");
			im_destroy(&ims[k]);
			continue;
		}
		progress("scenario %s: checking and warming %s (%u paths)", sc_names[id],
			 im_names[k], s.tg.n);
		bad = im_check(&ims[k], &s);
		if (bad) {
			b->mismatches += bad;
			snprintf(ims[k].why, sizeof(ims[k].why), "%" PRIu64 " wrong answers", bad);
			im_destroy(&ims[k]);
			continue;
		}
		ims[k].ok = true;
		order[nim++] = k;
	}
	pools_start(b, id, &s, ims, pools, live);
	/*
	 * Interleaved: every implementation, and within it every thread count,
	 * in turn, once a round, so that each run at N threads has a 1-thread
	 * run of the same implementation beside it (scaling pairs them).
	 */
	for (unsigned r = 0; r < b->runs; r++)
		for (int q = 0; q < nim; q++) {
			warm_run(b, id, pools, ims, order[q], live);
			for (unsigned ti = 0; ti < b->ntl; ti++) {
				int k = order[q];
				struct cell *cl = cell_at(b, id, ti, k);

				if (!live[ti][k])
					continue;
				timed_run(b, &pools[ti], &ims[k], cl, RUN_TIMED, b->ms);
				if (k == IM_KERNEL && !s.mixed_pct)
					timed_run(b, &pools[ti], &ims[k], cl, RUN_FLOOR, b->ms);
			}
		}
	pools_stop(b, id, ims, pools);
	for (int k = 0; k < IM_NR; k++)
		im_destroy(&ims[k]);
	fs_free(shared);
	if (s.negatives)
		snprintf(b->scen_note[id], sizeof(b->scen_note[id]),
			 "%u paths, half of them misses in the last component", s.tg.n);
	else if (s.samefile)
		snprintf(b->scen_note[id], sizeof(b->scen_note[id]), "every thread: %s",
			 s.tg.path[0]);
	else
		snprintf(b->scen_note[id], sizeof(b->scen_note[id]),
			 "%u entries, %u paths looked up, %.1f components each%s",
			 s.t->nn - 1, s.tg.n, (double)tg_comps(&s.tg) / s.tg.n,
			 s.mixed_pct ? (s.mixed_pct == 1 ? "; 1% of operations update" :
					"; 10% of operations update") : "");
	b->ran[id] = true;
	scen_free(b, &s);
	return 0;
}

/* ---- the cost of updates ------------------------------------------------------ */

static int upd_op(struct impl *im, struct dirh *h, int which, unsigned i)
{
	static const struct dc_inode fake = { 1ull << 40, 1ull << 40, S_IFREG | 0644, 0 };
	int err;

	switch (which) {
	case U_RENAME:
		return i & 1 ? im_rename(im, h, 1, "zzu-y", 0, "zzu-x") :
			       im_rename(im, h, 0, "zzu-x", 1, "zzu-y");
	case U_RENAME_CACHE:
		return i & 1 ? dc_rename(im->c, h->d[1], "zzu-y", h->d[0], "zzu-x", 0) :
			       dc_rename(im->c, h->d[0], "zzu-x", h->d[1], "zzu-y", 0);
	case U_CU:
		err = im_create(im, h, 0, "zzu-z");
		return err ? err : im_unlink(im, h, 0, "zzu-z");
	default:
		err = dc_create(im->c, h->d[0], "zzu-z", &fake);
		return err ? err : dc_unlink(im->c, h->d[0], "zzu-z");
	}
}

/* ns per operation (a rename, or a create+unlink pair) over ms. */
static double time_upd(struct impl *im, struct dirh *h, int which, unsigned ms,
		       int schedfd, uint64_t *errs)
{
	uint64_t w0 = cpu_wait_ns(schedfd), t0 = now_ns();
	uint64_t end = t0 + (uint64_t)ms * 1000000u, t, w1, n = 0;

	do {
		for (unsigned i = 0; i < 64; i++)	/* even: renames come back */
			*errs += upd_op(im, h, which, i) != 0;
		n += 64;
	} while ((t = now_ns()) < end);
	w1 = cpu_wait_ns(schedfd);
	/* less the time spent waiting for a CPU (other processes') */
	if (w1 > w0 && w1 - w0 < (t - t0) * 99 / 100)
		t -= w1 - w0;
	return (double)(t - t0) / (double)n;
}

/* The two directories of the tree with the most entries. */
static void biggest_dirs(const struct tree *t, uint32_t out[2])
{
	uint32_t *cnt = xcalloc(t->nn, sizeof(*cnt));

	out[0] = out[1] = t->dirs[0];
	for (uint32_t i = 1; i < t->nn; i++)
		cnt[t->n[i].parent]++;
	cnt[0] = 0;
	for (uint32_t k = 0; k < t->ndirs; k++) {
		uint32_t d = t->dirs[k];

		if (cnt[d] > cnt[out[0]]) {
			out[1] = out[0];
			out[0] = d;
		} else if (d != out[0] && cnt[d] > cnt[out[1]]) {
			out[1] = d;
		}
	}
	free(cnt);
}

static void run_updates(struct bench *b)
{
	struct scen s;
	struct impl ims[IM_NR];
	struct dirh h[IM_NR];
	uint32_t dirs[2];
	uint64_t errs = 0;
	unsigned ms = b->ms / 2 ? b->ms / 2 : 1;
	int schedfd;

	progress("update costs: building");
	if (scen_build(b, &s, SC_HOT)) {
		scen_free(b, &s);
		return;
	}
	biggest_dirs(s.t, dirs);
	schedfd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	for (int k = 0; k < IM_NR; k++) {
		memset(&h[k], 0, sizeof(h[k]));
		memset(&ims[k], 0, sizeof(ims[k]));
		if (!b->impl[k])
			continue;
		/* each dc mode its own memfs: their updates must not collide */
		if (im_build(&ims[k], k, &s, NULL) || im_check(&ims[k], &s) ||
		    dirh_open(&ims[k], &h[k], s.t, dirs, 2) ||
		    im_create(&ims[k], &h[k], 0, "zzu-x")) {
			fprintf(stderr, "dcbench micro: update costs: %s not measured%s%s\n",
				im_names[k], ims[k].why[0] ? ": " : "", ims[k].why);
			b->unmeasured++;
			dirh_close(&ims[k], &h[k]);
			im_destroy(&ims[k]);
			continue;
		}
		ims[k].ok = true;
	}
	for (unsigned r = 0; r < b->runs; r++)
		for (int k = 0; k < IM_NR; k++) {
			if (!ims[k].ok)
				continue;
			for (int u = 0; u < U_NR; u++) {
				if ((u == U_RENAME_CACHE || u == U_CU_CACHE) && !im_is_dc(k))
					continue;
				if (b->upd_n[k][u] < MAX_RUNS)
					b->upd[k][u][b->upd_n[k][u]++] =
						time_upd(&ims[k], &h[k], u, ms, schedfd,
							 &errs);
			}
		}
	for (int k = 0; k < IM_NR; k++) {
		if (ims[k].ok)
			errs += im_unlink(&ims[k], &h[k], 0, "zzu-x") != 0;
		dirh_close(&ims[k], &h[k]);
		im_destroy(&ims[k]);
		for (int u = 0; u < U_NR; u++)
			b->upd_med[k][u] = median(b->upd[k][u], b->upd_n[k][u]);
	}
	if (schedfd >= 0)
		close(schedfd);
	scen_free(b, &s);
	b->update_errors += errs;
	b->upd_ran = true;
}

/* ---- bytes per cached entry --------------------------------------------------- */

static void measure_bytes(const struct tree *t, uint64_t max_entries,
			  struct bytes_res *r)
{
	struct fsinst fs;
	struct dc_cache *c;
	struct dc_options o = { .mode = DC_MODE_RCU, .max_entries = max_entries };
	struct dc_stats st;
	struct dc_inode ds;
	char path[PBUF];

	memset(r, 0, sizeof(*r));
	if (fs_build(t, &fs))
		return;
	o.backend = dc_memfs_backend(fs.fs);
	if (dc_cache_create(&o, &c) == 0) {
		/* the fixed part: buckets, the cache, its root */
		dc_get_stats(c, &st);
		r->empty_bytes = st.bytes;
		for (uint32_t i = 1; i < t->nn; i++)
			if (tree_path(t, i, path, sizeof(path)) > 0)
				dc_resolve(c, NULL, path, DC_NOFOLLOW, &ds);
		dc_get_stats(c, &st);
		r->ok = st.entries > 1;
		r->entries = st.entries;
		r->bytes = st.bytes;
		r->max_entries = max_entries;
		r->bpe = (double)st.bytes / (double)st.entries;
		r->marginal = r->ok ? (double)(st.bytes - r->empty_bytes) /
				      (double)(st.entries - 1) : NAN;
		dc_cache_destroy(c);
	}
	dc_memfs_free(fs.fs);
	free(fs.mino);
}

static void run_bytes(struct bench *b)
{
	struct tree *t;

	progress("bytes per entry");
	measure_bytes(b->hot, b->hot->nn, &b->by_hot);
	t = tree_filter(b->hot, 32, UINT32_MAX, "short");
	measure_bytes(t, t->nn, &b->by_short);
	tree_free(t);
	t = tree_filter(b->hot, 32, 65536, "full");
	measure_bytes(t, t->nn, &b->by_full);
	tree_free(t);
	/* the references' tables of the hot tree, same bucket count */
	for (int k = IM_LFHT; k <= IM_MUTEX; k++) {
		struct impl im;
		uint64_t nb = pow2_at_least(b->hot->nn);

		memset(&im, 0, sizeof(im));
		im.kind = k;
		if ((k == IM_LFHT ? lfht_build(&im, b->hot, nb, 0) :
				    mtab_build(&im, b->hot, nb, 0)) == 0)
			b->ref_bpe[k] = (double)im.bytes / b->hot->nn;
		im_destroy(&im);
	}
}

/* ---- summaries, goals, report ---------------------------------------------- */

/*
 * Wall-clock scaling: each run's throughput (all threads' operations over
 * the wall time) over that of the 1-thread run beside it, in the same
 * round; the median of those ratios.
 */
static double paired_scaling(const struct cell *c, const struct cell *one)
{
	double r[MAX_RUNS];

	for (unsigned i = 0; i < c->nr; i++)
		r[i] = c->mopsw[i] / one->mopsw[i];
	return median(r, c->nr);
}

/* The kernel's floor, and what each component costs beyond it: each
 * run's ns/lookup less the floor run right after it, per component. */
static void beyond_floor(struct cell *c)
{
	double per = (double)c->comps / (double)c->lookups, r[MAX_RUNS];

	for (unsigned i = 0; i < c->nr; i++)
		r[i] = (c->ns[i] - c->floor[i]) / per;
	c->floor_med = median(c->floor, c->nfloor);
	c->beyond_med = median(r, c->nr);
}

static void summarize(struct bench *b)
{
	for (int sc = 0; sc < SC_NR; sc++)
		for (unsigned ti = 0; ti < b->ntl; ti++)
			for (int k = 0; k < IM_NR; k++) {
				struct cell *c = cell_at(b, sc, ti, k);

				c->ns_med = c->nsc_med = c->mops_med = NAN;
				c->ns_mean = c->ns_sd = c->mops_mean = c->mops_sd = NAN;
				c->scaling = c->mopsw_med = c->share_med = NAN;
				c->floor_med = c->beyond_med = NAN;
				if (!b->ran[sc] || !c->measured || !c->nr)
					continue;
				c->ns_med = median(c->ns, c->nr);
				c->ns_mean = mean(c->ns, c->nr);
				c->ns_sd = stddev(c->ns, c->nr);
				c->nsc_med = sc == SC_MIXED1 || sc == SC_MIXED10 ? NAN :
					     median(c->nsc, c->nr);
				c->mops_med = median(c->mops, c->nr);
				c->mops_mean = mean(c->mops, c->nr);
				c->mops_sd = stddev(c->mops, c->nr);
				c->mopsw_med = median(c->mopsw, c->nr);
				c->share_med = median(c->share, c->nr);
				if (c->nfloor == c->nr && c->comps)
					beyond_floor(c);
			}
	for (int sc = 0; sc < SC_NR; sc++)
		for (unsigned ti = 0; ti < b->ntl; ti++)
			for (int k = 0; k < IM_NR; k++) {
				struct cell *c = cell_get(b, sc, b->tl[ti], k);
				struct cell *one = cell_get(b, sc, 1, k);

				if (c && one && c->nr == one->nr)
					c->scaling = paired_scaling(c, one);
			}
}

/*
 * Every cell asked for must be measured in every run, and every timed
 * lookup must have answered as the tree says (a failing lookup is
 * cheaper: a broken implementation would look fast); otherwise the
 * figures do not mean what they say.  Names each such cell on stderr;
 * returns how many were not measured.
 */
static unsigned check_cells(struct bench *b)
{
	unsigned unmeasured = 0;

	for (int sc = 0; sc < SC_NR; sc++)
		for (unsigned ti = 0; ti < b->ntl && b->ran[sc]; ti++)
			for (int k = 0; k < IM_NR; k++) {
				struct cell *c = cell_at(b, sc, ti, k);
				unsigned T = b->tl[ti];

				if (!b->impl[k] || c->skipped)
					continue;
				if (!c->measured || c->nr < b->runs) {
					fprintf(stderr, "dcbench micro: %s %s, %u thread%s: not "
						"measured (%u of %u runs): %s\n", sc_names[sc],
						im_names[k], T, plural(T), c->nr, b->runs,
						c->why[0] ? c->why : "?");
					unmeasured++;
				}
				if (c->wrong)
					fprintf(stderr, "dcbench micro: %s %s, %u thread%s: %"
						PRIu64 " timed lookups answered otherwise than "
						"the tree says\n", sc_names[sc], im_names[k], T,
						plural(T), c->wrong);
				b->wrong_lookups += c->wrong;
			}
	return unmeasured;
}

/* a's ns/lookup over b's (same scenario and threads); NaN if either is missing */
static double ratio(struct bench *b, int sc, unsigned threads, int ka, int kb)
{
	struct cell *x = cell_get(b, sc, threads, ka), *y = cell_get(b, sc, threads, kb);

	return x && y ? x->ns_med / y->ns_med : NAN;
}

struct goal {
	char name[96];
	double value, target;
	bool le;		/* value <= target is met (else >=) */
};

static unsigned make_goals(struct bench *b, struct goal *g)
{
	unsigned n = 0;
	struct cell *c, *l;
	/* against padded references the lfht figures are not the goals' */
	bool refs_ok = b->ref_node_bytes == 0;

#define GOAL(v, le_, tgt, ...) do {						\
		snprintf(g[n].name, sizeof(g[n].name), __VA_ARGS__);		\
		g[n].value = (v);						\
		g[n].target = (tgt);						\
		g[n].le = (le_);						\
		n++;								\
	} while (0)

	GOAL(ratio(b, SC_HOT, 1, IM_RCU, IM_KERNEL), true, 0.1,
	     "hot 1 thread: rcu ns/path / kernel fstatat");
	{
		struct cell *r1 = cell_get(b, SC_HOT, 1, IM_RCU);
		struct cell *l1 = cell_get(b, SC_HOT, 1, IM_LFHT);

		GOAL(r1 && l1 && refs_ok ? r1->nsc_med / l1->nsc_med : NAN, true, 0.7,
		     "hot 1 thread: rcu ns/component / lfht");
	}
	c = cell_get(b, SC_HOT, 2, IM_RCU);
	l = cell_get(b, SC_HOT, 2, IM_LFHT);
	GOAL(c && l && refs_ok ? c->scaling / l->scaling : NAN, false, 0.95,
	     "hot 2 threads: rcu scaling / lfht scaling");
	c = cell_get(b, SC_NEGATIVE, 2, IM_RCU);
	l = cell_get(b, SC_NEGATIVE, 2, IM_LFHT);
	GOAL(c && l && refs_ok ? c->scaling / l->scaling : NAN, false, 0.95,
	     "negative 2 threads: rcu scaling / lfht scaling");
	GOAL(1 / ratio(b, SC_HOT, 2, IM_RCU, IM_GLOBAL), false, 3,
	     "hot 2 threads: rcu Mops / global");
	GOAL(1 / ratio(b, SC_NEGATIVE, 2, IM_RCU, IM_GLOBAL), false, 3,
	     "negative 2 threads: rcu Mops / global");
	c = cell_get(b, SC_SMALL, 2, IM_RCU);
	GOAL(c ? c->scaling : NAN, false, 1.9, "small 2 threads: rcu scaling");
	c = cell_get(b, SC_SAMEFILE, 2, IM_RCU);
	GOAL(c ? c->scaling : NAN, false, 1.8, "samefile 2 threads: rcu scaling");
	GOAL(1 / ratio(b, SC_MIXED10, 2, IM_RCU, IM_GLOBAL), false, 1.5,
	     "mixed-10 2 threads: rcu Mops / global");
	for (int sc = 0; sc < SC_NR; sc++)
		if (b->scen[sc])
			GOAL(ratio(b, sc, 1, IM_RCU, IM_GLOBAL), true, 1.05,
			     "%s 1 thread: rcu ns / global ns", sc_names[sc]);
	GOAL(b->by_short.ok ? b->by_short.bpe : NAN, true, 128,
	     "bytes per cached entry, names <= 32 bytes");
#undef GOAL
	return n;
}

static int goal_met(const struct goal *g)	/* 1, 0, or -1: not measured */
{
	if (isnan(g->value))
		return -1;
	return g->le ? g->value <= g->target : g->value >= g->target;
}

static void fmt(char *buf, size_t size, const char *f, double v)
{
	if (isnan(v) || isinf(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, f, v);
}

/* The kernel's figure is mostly the system call: its floor beside it. */
static void print_floor(struct bench *b, int sc, FILE *f)
{
	const char *sep = "";

	for (unsigned ti = 0; ti < b->ntl; ti++) {
		struct cell *c = cell_get(b, sc, b->tl[ti], IM_KERNEL);

		if (!c || isnan(c->floor_med))
			continue;
		if (!*sep)
			fprintf(f, "  kernel: mostly the system call; its floor, fstatat(\".\") "
				"in the tree's root (no component looked up), and ns per "
				"component beyond it:\n   ");
		fprintf(f, "%s %u thread%s: floor %.1f ns, %.2f ns/comp beyond", sep,
			b->tl[ti], plural(b->tl[ti]), c->floor_med, c->beyond_med);
		sep = ";";
	}
	if (*sep)
		fputc('\n', f);
}

static void print_report(struct bench *b, const char *date, const char *host)
{
	bool over, any_over = false;
	static const int refs[] = { IM_KERNEL, IM_LFHT, IM_MUTEX, IM_GLOBAL };
	struct goal g[32];
	unsigned ng;
	FILE *f = rep;

	fprintf(f, "dcbench micro: %s, %s, %u cores; %u runs of %u ms per "
		"implementation, interleaved; medians\n", host, date, b->cores, b->runs, b->ms);
	fprintf(f, "kernel: %s\n", b->impl[IM_KERNEL] ? g_kfs_note : "not asked for");
	if (b->ttl_ms)
		fprintf(f, "libdcache TTLs on: %u ms for positive and negative "
			"answers (--ttl)\n", b->ttl_ms);
	if (b->ref_node_bytes)
		fprintf(f, "references padded: every cds_lfht and mutex-table node takes "
			"at least %u bytes (--ref-node-bytes); the goals against cds_lfht "
			"are not measured\n", b->ref_node_bytes);
	fprintf(f, "tree: %s (%u entries: %u directories, %u files, %u symlinks)\n",
		b->treefile, b->hot->nn - 1, b->hot->ndirs, b->hot->nfiles, b->hot->nlinks);
	fprintf(f, "columns: ns per lookup (per operation in mixed) and per component, "
		"per thread, over its time on a CPU;\n  Mops/s: each thread's rate over "
		"its time on a CPU, summed; sd%% of Mops/s over the runs;\n  wall Mops: "
		"all threads' operations / wall time, start barrier to the last thread's "
		"end;\n  scaling = median over the rounds of wall Mops / wall Mops of the "
		"1-thread run beside it;\n  xREF = ns/lookup / REF's ns/lookup in the "
		"same run (below 1: faster than REF)\n");
	for (int sc = 0; sc < SC_NR; sc++) {
		if (!b->ran[sc])
			continue;
		fprintf(f, "\n%s: %s\n", sc_names[sc], b->scen_note[sc]);
		fprintf(f, "  thr impl    %10s %8s %8s %5s %4s %9s %7s %8s %7s %7s %7s\n",
			sc == SC_MIXED1 || sc == SC_MIXED10 ? "ns/op" : "ns/lookup",
			"ns/comp", "Mops/s", "sd%", "cpu%", "wall Mops", "scaling",
			"xkernel", "xlfht", "xmutex", "xglobal");
		for (unsigned ti = 0; ti < b->ntl; ti++) {
			unsigned T = b->tl[ti];

			for (int k = 0; k < IM_NR; k++) {
				struct cell *c = cell_at(b, sc, ti, k);
				char v[11][24];

				if (!b->impl[k])
					continue;
				if (!c->measured || !c->nr) {
					fprintf(f, "  %3u%s %-7s not measured: %s\n", T,
						T > b->cores ? "*" : " ", im_names[k],
						c->why[0] ? c->why : "?");
					continue;
				}
				fmt(v[0], 24, "%.1f", c->ns_med);
				fmt(v[1], 24, "%.2f", c->nsc_med);
				fmt(v[2], 24, "%.3f", c->mops_med);
				fmt(v[3], 24, "%.1f", 100 * c->mops_sd / c->mops_mean);
				/* more than the CPUs could give: the 1-thread
				 * runs it is paired with were slowed */
				over = c->scaling > (T < b->cores ? T : b->cores) + 0.005;
				any_over |= over;
				fmt(v[4], 24, over ? "%.2f!" : "%.2f", c->scaling);
				for (int r = 0; r < 4; r++)
					fmt(v[5 + r], 24, "%.3f",
					    refs[r] == k ? NAN : ratio(b, sc, T, k, refs[r]));
				fmt(v[9], 24, "%.0f", 100 * c->share_med);
				fmt(v[10], 24, "%.3f", c->mopsw_med);
				fprintf(f, "  %3u%s %-7s %10s %8s %8s %5s %4s %9s %7s %8s %7s %7s %7s\n",
					T, T > b->cores ? "*" : " ", im_names[k], v[0], v[1],
					v[2], v[3], v[9], v[10], v[4], v[5], v[6], v[7], v[8]);
			}
		}
		print_floor(b, sc, f);
		for (int k = 0; k < IM_NR; k++) {
			for (unsigned ti = 0; ti < b->ntl; ti++) {
				struct cell *c = cell_at(b, sc, ti, k);

				if (!c->measured || !im_is_dc(k) || !c->dc_lookups)
					continue;
				if (c->dc_misses || c->dc_restarts)
					fprintf(f, "  note: %s at %u threads: %" PRIu64 " misses, %"
						PRIu64 " restarts in %" PRIu64 " lookups\n",
						im_names[k], b->tl[ti], c->dc_misses,
						c->dc_restarts, c->dc_lookups);
			}
		}
	}
	if (b->ntl && b->tl[b->ntl - 1] > b->cores)
		fprintf(f, "\n* oversubscribed: more threads than the %u cores\n", b->cores);
	if (any_over)
		fprintf(f, "! scaling above min(threads, %u cores), which wall-clock throughput "
			"cannot reach: the 1-thread runs beside it were slowed (the machine's "
			"noise; see sd%%): read it as about the core count\n", b->cores);

	fprintf(f, "\nbytes per cached entry (dc_get_stats bytes / entries, rcu mode, "
		"cache warmed with every entry of the tree):\n");
	{
		const struct bytes_res *br[3] = { &b->by_hot, &b->by_short, &b->by_full };
		static const char *const what[3] = {
			"the hot tree, max_entries = its size",
			"its names <= 32 bytes, no symlinks, max_entries = its size",
			"the same, its first 65,536 entries",
		};

		for (int i = 0; i < 3; i++) {
			if (!br[i]->ok) {
				fprintf(f, "  %-60s not measured\n", what[i]);
				continue;
			}
			fprintf(f, "  %-60s %7.1f B (%" PRIu64 " entries, %" PRIu64
				" bytes; empty cache %" PRIu64 " B, then %.1f B per entry)\n",
				what[i], br[i]->bpe, br[i]->entries, br[i]->bytes,
				br[i]->empty_bytes, br[i]->marginal);
		}
		if (b->ref_bpe[IM_LFHT] > 0 || b->ref_bpe[IM_MUTEX] > 0)
			fprintf(f, "  references (hot tree, buckets = entries rounded up "
				"to a power of two): lfht %.1f B, mutex table %.1f B per entry\n",
				b->ref_bpe[IM_LFHT], b->ref_bpe[IM_MUTEX]);
	}
	if (b->upd_ran) {
		fprintf(f, "\nupdate costs, 1 thread, ns per operation (hot tree, the two "
			"biggest directories):\n");
		fprintf(f, "  impl     rename  rename(cache only)  create+unlink  "
			"create+unlink(cache only)\n");
		for (int k = 0; k < IM_NR; k++) {
			char v[4][24];

			if (!b->impl[k] || !b->upd_n[k][U_RENAME])
				continue;
			for (int u = 0; u < U_NR; u++)
				fmt(v[u], 24, "%.0f", b->upd_med[k][u]);
			fprintf(f, "  %-7s %7s %19s %14s %26s\n", im_names[k], v[0], v[1],
				v[2], v[3]);
		}
		fprintf(f, "  (rcu/rwlock/global: memfs + cache; cache only: the dc_* call "
			"alone; references: their table)\n");
	}
	ng = make_goals(b, g);
	fprintf(f, "\nfigures to reach:\n");
	for (unsigned i = 0; i < ng; i++) {
		int m = goal_met(&g[i]);
		char v[24];

		fmt(v, sizeof(v), "%.3f", g[i].value);
		fprintf(f, "  %-52s %9s  (%s %g)  %s\n", g[i].name, v, g[i].le ? "<=" : ">=",
			g[i].target, m < 0 ? "not measured" : m ? "met" : "NOT MET");
	}
	if (b->runs < 5)
		fprintf(f, "  (fewer than 5 runs: these figures are indicative only)\n");
	if (b->mismatches || b->update_errors || b->wrong_lookups || b->unmeasured)
		fprintf(f, "\nERRORS: %" PRIu64 " wrong answers, %" PRIu64 " timed lookups "
			"answered wrong, %" PRIu64 " failed updates, %u asked for but "
			"not measured\n", b->mismatches, b->wrong_lookups,
			b->update_errors, b->unmeasured);
}

static void write_json(struct bench *b, const char *date, const char *host)
{
	struct json j;
	struct goal g[32];
	unsigned ng = make_goals(b, g);

	json_init(&j, stdout);
	json_obj_begin(&j);
	json_kint(&j, "schema_version", MICRO_SCHEMA_VERSION);
	json_kstr(&j, "command", "micro");
	json_kstr(&j, "host", host);
	json_kstr(&j, "date", date);
	json_kuint(&j, "cores", b->cores);
	json_kuint(&j, "runs", b->runs);
	json_kuint(&j, "ms_per_run", b->ms);
	json_kuint(&j, "ref_node_bytes", b->ref_node_bytes);
	json_kuint(&j, "ttl_ms", b->ttl_ms);
	json_key(&j, "threads");
	json_arr_begin(&j);
	for (unsigned i = 0; i < b->ntl; i++)
		json_uint(&j, b->tl[i]);
	json_arr_end(&j);
	json_kstr(&j, "kernel_fs", b->impl[IM_KERNEL] ? g_kfs_note : NULL);
	json_key(&j, "tree");
	json_obj_begin(&j);
	json_kstr(&j, "file", b->treefile);
	json_kuint(&j, "entries", b->hot->nn - 1);
	json_kuint(&j, "directories", b->hot->ndirs);
	json_kuint(&j, "files", b->hot->nfiles);
	json_kuint(&j, "symlinks", b->hot->nlinks);
	json_obj_end(&j);
	json_knum(&j, "bytes_per_entry", b->by_hot.ok ? b->by_hot.bpe : NAN);
	json_knum(&j, "bytes_per_entry_short_names", b->by_short.ok ? b->by_short.bpe : NAN);
	json_key(&j, "bytes");
	json_obj_begin(&j);
	{
		const struct bytes_res *br[3] = { &b->by_hot, &b->by_short, &b->by_full };
		static const char *const key[3] = { "hot", "short_names", "short_names_65536" };

		for (int i = 0; i < 3; i++) {
			json_key(&j, key[i]);
			if (!br[i]->ok) {
				json_null(&j);
				continue;
			}
			json_obj_begin(&j);
			json_kuint(&j, "entries", br[i]->entries);
			json_kuint(&j, "bytes", br[i]->bytes);
			json_kuint(&j, "max_entries", br[i]->max_entries);
			json_knum(&j, "bytes_per_entry", br[i]->bpe);
			json_kuint(&j, "empty_cache_bytes", br[i]->empty_bytes);
			json_knum(&j, "bytes_per_added_entry", br[i]->marginal);
			json_obj_end(&j);
		}
		json_knum(&j, "lfht_bytes_per_entry",
			  b->ref_bpe[IM_LFHT] > 0 ? b->ref_bpe[IM_LFHT] : NAN);
		json_knum(&j, "mutex_bytes_per_entry",
			  b->ref_bpe[IM_MUTEX] > 0 ? b->ref_bpe[IM_MUTEX] : NAN);
	}
	json_obj_end(&j);
	json_key(&j, "results");
	json_arr_begin(&j);
	for (int sc = 0; sc < SC_NR; sc++) {
		if (!b->ran[sc])
			continue;
		for (unsigned ti = 0; ti < b->ntl; ti++)
			for (int k = 0; k < IM_NR; k++) {
				struct cell *c = cell_at(b, sc, ti, k);

				if (!b->impl[k] || !c->measured || !c->nr)
					continue;
				json_obj_begin(&j);
				json_kstr(&j, "scenario", sc_names[sc]);
				json_kstr(&j, "impl", im_names[k]);
				json_kuint(&j, "threads", b->tl[ti]);
				json_kbool(&j, "oversubscribed", b->tl[ti] > b->cores);
				json_knum(&j, "ns_per_lookup", c->ns_med);
				json_knum(&j, "ns_per_component", c->nsc_med);
				json_knum(&j, "mops", c->mops_med);
				json_knum(&j, "ns_per_lookup_mean", c->ns_mean);
				json_knum(&j, "ns_per_lookup_sd", c->ns_sd);
				json_knum(&j, "mops_mean", c->mops_mean);
				json_knum(&j, "mops_sd", c->mops_sd);
				json_knum(&j, "scaling", c->scaling);
				json_knum(&j, "mops_wall", c->mopsw_med);
				if (k == IM_KERNEL) {
					json_knum(&j, "syscall_floor_ns", c->floor_med);
					json_knum(&j, "ns_per_component_beyond_floor",
						  c->beyond_med);
				}
				json_knum(&j, "cpu_share", c->share_med);
				json_kuint(&j, "runs", c->nr);
				json_key(&j, "ratio");
				json_obj_begin(&j);
				for (int r = 0; r < IM_NR; r++)
					if (r != k && b->impl[r])
						json_knum(&j, im_names[r],
							  ratio(b, sc, b->tl[ti], k, r));
				json_obj_end(&j);
				json_kuint(&j, "operations", c->ops);
				json_kuint(&j, "lookups", c->lookups);
				json_kuint(&j, "components", c->comps);
				json_kuint(&j, "updates", c->upd);
				json_kuint(&j, "wrong_lookups", c->wrong);
				json_kuint(&j, "failed_updates", c->uerr);
				if (im_is_dc(k)) {
					json_kuint(&j, "dc_misses", c->dc_misses);
					json_kuint(&j, "dc_restarts", c->dc_restarts);
				}
				json_obj_end(&j);
			}
	}
	json_arr_end(&j);
	/* the cells asked for without a row in results, and why */
	json_key(&j, "not_measured");
	json_arr_begin(&j);
	for (int sc = 0; sc < SC_NR; sc++)
		for (unsigned ti = 0; ti < b->ntl && b->ran[sc]; ti++)
			for (int k = 0; k < IM_NR; k++) {
				struct cell *c = cell_at(b, sc, ti, k);

				if (!b->impl[k] || (c->measured && c->nr))
					continue;
				json_obj_begin(&j);
				json_kstr(&j, "scenario", sc_names[sc]);
				json_kstr(&j, "impl", im_names[k]);
				json_kuint(&j, "threads", b->tl[ti]);
				json_kstr(&j, "why", c->why[0] ? c->why : "?");
				json_kbool(&j, "by_design", c->skipped);
				json_obj_end(&j);
			}
	json_arr_end(&j);
	json_key(&j, "updates");
	json_arr_begin(&j);
	for (int k = 0; k < IM_NR && b->upd_ran; k++) {
		if (!b->impl[k])
			continue;
		json_obj_begin(&j);
		json_kstr(&j, "impl", im_names[k]);
		for (int u = 0; u < U_NR; u++)
		{
			char key[64];

			snprintf(key, sizeof(key), "%s_ns", u_names[u]);
			json_knum(&j, key, b->upd_n[k][u] ? b->upd_med[k][u] : NAN);
		}
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_key(&j, "goals");
	json_arr_begin(&j);
	for (unsigned i = 0; i < ng; i++) {
		int m = goal_met(&g[i]);

		json_obj_begin(&j);
		json_kstr(&j, "goal", g[i].name);
		json_knum(&j, "value", g[i].value);
		json_kstr(&j, "op", g[i].le ? "<=" : ">=");
		json_knum(&j, "target", g[i].target);
		if (m < 0)
			json_knull(&j, "met");
		else
			json_kbool(&j, "met", m);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_kuint(&j, "wrong_answers", b->mismatches);
	json_kuint(&j, "wrong_lookups", b->wrong_lookups);
	json_kuint(&j, "failed_updates", b->update_errors);
	json_kuint(&j, "unmeasured", b->unmeasured);
	json_obj_end(&j);
	json_finish(&j);
}

/* ---- the plot ------------------------------------------------------------------ */

static bool have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		path = "/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		snprintf(buf, sizeof(buf), "%.*s/gnuplot", (int)len, len ? p : ".");
		if (access(buf, X_OK) == 0)
			return true;
		if (!e)
			return false;
		p = e + 1;
	}
}

static const char *const im_colors[IM_NR] = {
	"#d62728", "#ff7f0e", "#9467bd", "#7f7f7f", "#1f77b4", "#2ca02c",
};

static int plot(struct bench *b, const char *file, const char *host, const char *date)
{
	char script[] = "/tmp/dcbench-micro-plot.XXXXXX";
	const char *ext = strrchr(file, '.');
	bool png = ext && !strcmp(ext, ".png");
	char *argv[] = { "gnuplot", script, NULL };
	unsigned nsc = 0, cols, rows;
	FILE *f;
	pid_t pid;
	int fd, status, err;

	if (!have_gnuplot()) {
		fprintf(stderr, "dcbench micro: gnuplot is not installed (Debian: "
			"gnuplot-nox); no plot drawn\n");
		return -1;
	}
	for (int sc = 0; sc < SC_NR; sc++)
		nsc += b->ran[sc];
	if (!nsc)
		return -1;
	cols = nsc < 3 ? nsc : 3;
	rows = (nsc + cols - 1) / cols;
	fd = mkstemp(script);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "dcbench micro: plot: %s\n", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(script);
		}
		return -1;
	}
	fprintf(f, "set terminal %s size %u,%u font 'sans,10'\n",
		png ? "pngcairo" : "svg dynamic", 420 * cols, 330 * rows + 40);
	fputs("set output '", f);
	for (const char *s = file; *s; s++)
		fputs(*s == '\'' ? "''" : (char[]){ *s, 0 }, f);
	fprintf(f, "'\nset multiplot layout %u,%u title 'dcbench micro: %s, %s, %u cores "
		"(Mops/s over wall time, median of %u runs; higher is better)'\n", rows, cols, host, date,
		b->cores, b->runs);
	fputs("set logscale x 2\nset logscale y 10\nset grid\nset key top left font ',8'\n"
	      "set xlabel 'threads'\nset ylabel 'Mops/s'\n", f);
	fputs("set xtics (", f);
	for (unsigned i = 0; i < b->ntl; i++)
		fprintf(f, "%s%u", i ? ", " : "", b->tl[i]);
	fprintf(f, ")\nset xrange [%g:%g]\n", b->tl[0] / 1.3, b->tl[b->ntl - 1] * 1.3);
	for (int sc = 0; sc < SC_NR; sc++) {
		bool any = false;

		if (!b->ran[sc])
			continue;
		fprintf(f, "set title '%s'\nplot ", sc_names[sc]);
		for (int k = 0; k < IM_NR; k++) {
			bool has = false;

			for (unsigned ti = 0; ti < b->ntl; ti++)
				has |= cell_get(b, sc, b->tl[ti], k) != NULL;
			if (!has)
				continue;
			fprintf(f, "%s'-' using 1:2 with linespoints lw 2 lc rgb '%s' pt %d "
				"title '%s'", any ? ", " : "", im_colors[k], k + 4, im_names[k]);
			any = true;
		}
		if (!any)
			fputs("1/0 notitle", f);
		fputc('\n', f);
		for (int k = 0; k < IM_NR; k++) {
			bool has = false;

			for (unsigned ti = 0; ti < b->ntl; ti++)
				has |= cell_get(b, sc, b->tl[ti], k) != NULL;
			if (!has)
				continue;
			for (unsigned ti = 0; ti < b->ntl; ti++) {
				struct cell *c = cell_get(b, sc, b->tl[ti], k);

				if (c)
					fprintf(f, "%u %.6g\n", b->tl[ti], c->mopsw_med);
			}
			fputs("e\n", f);
		}
	}
	fputs("unset multiplot\n", f);
	if (fclose(f)) {
		unlink(script);
		return -1;
	}
	fflush(NULL);
	err = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
	if (err) {
		fprintf(stderr, "dcbench micro: cannot run gnuplot: %s; no plot drawn\n",
			strerror(err));
		unlink(script);
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	unlink(script);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "dcbench micro: gnuplot failed; no plot drawn\n");
		return -1;
	}
	fprintf(rep, "plot: %s\n", file);
	return 0;
}

/* ---- the command line ------------------------------------------------------------ */

static const char micro_help[] =
"usage: dcbench micro [--json] [--plot FILE.svg|.png] [--scenarios LIST]\n"
"                     [--threads LIST] [--runs N] [--ms N] [--tree FILE]\n"
"                     [--impls LIST] [--cold-entries N] [--pin] [--seed N]\n"
"                     [--no-bytes] [--no-updates] [--ref-node-bytes N]\n"
"                     [--ttl MS]\n"
"\n"
"Micro-benchmarks of libdcache (rcu, rwlock, global) against the kernel's\n"
"dcache (fstatat on a tmpfs copy), liburcu's cds_lfht and a mutex-guarded\n"
"hash table, interleaved in one run; medians of --runs runs (default 5)\n"
"of --ms milliseconds each (default 300).\n"
"\n"
"  --scenarios  hot,small,negative,deep,longnames,cold,mixed-1,mixed-10,\n"
"               samefile (default: all)\n"
"  --threads    thread counts (default 1,2,4,8; above the core count they\n"
"               are marked oversubscribed)\n"
"  --impls      rcu,rwlock,global,kernel,lfht,mutex (default: all)\n"
"  --tree       the listing (default: data/linux-6.1-tree.tsv.xz\n"
"               of the source tree, or share/dcache/ when installed)\n"
"  --runs N     timed runs of each measurement, 1 to 101 (default 5)\n"
"  --ms N       milliseconds a run (default 300)\n"
"  --seed N     the random trees and lookup orders (default 20240601)\n"
"  --cold-entries  entries of the cold tree (default 5000000)\n"
"  --pin        pin thread i to CPU i when threads <= cores\n"
"  --no-bytes, --no-updates  skip the bytes-per-entry and update-cost parts\n"
"  --ref-node-bytes N  pad the nodes of cds_lfht and the mutex table to N\n"
"               bytes (default: as small as their names allow): what a\n"
"               lookup costs when the table's footprint grows\n"
"  --ttl MS     libdcache's caches with TTLs of MS ms on every answer\n"
"               (what expiry costs a walk; answers that expire mid-run are\n"
"               revalidated, so keep MS above --ms to measure hot walks)\n"
"  --json       one JSON document on stdout; the table goes to stderr\n"
"  --plot FILE  wall-clock Mops/s against threads, one panel per scenario (gnuplot)\n"
"  -h, --help   this help\n"
"\n"
"The kernel reference needs root (mount -t tmpfs); without it, /dev/shm.\n"
"docs/micro.md explains every figure.\n";

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *fmt, ...)
{
	va_list ap;

	fputs("dcbench micro: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	/* the synopsis: the help up to its first blank line */
	fprintf(stderr, "\n%.*s\nTry 'dcbench micro --help'.\n",
		(int)(strstr(micro_help, "\n\n") - micro_help), micro_help);
	return 2;
}

/* --name VALUE or --name=VALUE; true if argv[*i] is that option. */
static bool opt(int argc, char **argv, int *i, const char *name, bool has_value,
		const char **val, int *bad)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, "--", 2) || strncmp(a + 2, name, n))
		return false;
	if (a[2 + n] == '\0') {
		if (!has_value)
			return true;
		if (*i + 1 >= argc) {
			*bad = usage("--%s needs a value", name);
			return true;
		}
		*val = argv[++*i];
		return true;
	}
	if (a[2 + n] != '=')
		return false;
	if (!has_value) {
		*bad = usage("--%s takes no value", name);
		return true;
	}
	*val = a + 3 + n;
	return true;
}

static int parse_u64(const char *o, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || *s == '-' || *s == '+' || v < lo || v > hi)
		return usage("--%s wants a number from %" PRIu64 " to %" PRIu64 ", not '%s'",
			     o, lo, hi, s);
	*out = v;
	return 0;
}

/* A comma-separated list of names from table into sel[]. */
static int parse_names(const char *o, const char *s, const char *const *table,
		       int n, bool *sel)
{
	memset(sel, 0, (size_t)n * sizeof(*sel));
	for (const char *p = s;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int k;

		for (k = 0; k < n; k++)
			if (strlen(table[k]) == len && !strncmp(table[k], p, len))
				break;
		if (k == n)
			return usage("--%s: unknown name '%.*s'", o, (int)len, p);
		sel[k] = true;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/*
 * The listing ships with the project: data/ beside the build directory
 * the binary runs from (build/dcbench), or share/dcache/ beside an
 * installed bin/.
 */
static char *find_tree(void)
{
	static const char *const rel[] = {
		"/../data/linux-6.1-tree.tsv.xz",
		"/../share/dcache/linux-6.1-tree.tsv.xz",
	};
	char exe[PBUF], buf[PBUF + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s", exe, rel[i]);
		if (access(buf, R_OK) == 0)
			return strdup(buf);
	}
	return NULL;
}

int dcb_micro_main(int argc, char **argv)
{
	struct bench *b = xcalloc(1, sizeof(*b));
	char date[64], host[256] = "unknown", *treefile = NULL;
	time_t now = time(NULL);
	int bad = 0, status = 0;

	b->runs = 5;
	b->ms = 300;
	b->cold_entries = 5000000;
	b->seed = 20240601;
	for (int k = 0; k < SC_NR; k++)
		b->scen[k] = true;
	for (int k = 0; k < IM_NR; k++)
		b->impl[k] = true;
	b->tl[0] = 1;
	b->tl[1] = 2;
	b->tl[2] = 4;
	b->tl[3] = 8;
	b->ntl = 4;
	for (int i = 1; i < argc && !bad; i++) {
		const char *v = NULL;
		uint64_t x;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(micro_help, stdout);
			free(b);
			return 0;
		} else if (opt(argc, argv, &i, "json", false, &v, &bad)) {
			b->json = true;
		} else if (opt(argc, argv, &i, "pin", false, &v, &bad)) {
			b->pin = true;
		} else if (opt(argc, argv, &i, "no-bytes", false, &v, &bad)) {
			b->no_bytes = true;
		} else if (opt(argc, argv, &i, "no-updates", false, &v, &bad)) {
			b->no_updates = true;
		} else if (opt(argc, argv, &i, "ref-node-bytes", true, &v, &bad)) {
			if (!bad && !(bad = parse_u64("ref-node-bytes", v, 0, 4096, &x)))
				b->ref_node_bytes = (unsigned)x;
		} else if (opt(argc, argv, &i, "ttl", true, &v, &bad)) {
			if (!bad && !(bad = parse_u64("ttl", v, 0, 86400000, &x)))
				b->ttl_ms = (uint32_t)x;
		} else if (opt(argc, argv, &i, "plot", true, &v, &bad)) {
			b->plot = v;
		} else if (opt(argc, argv, &i, "tree", true, &v, &bad)) {
			b->treefile = v;
		} else if (opt(argc, argv, &i, "scenarios", true, &v, &bad)) {
			if (!bad)
				bad = parse_names("scenarios", v, sc_names, SC_NR, b->scen);
		} else if (opt(argc, argv, &i, "impls", true, &v, &bad)) {
			if (!bad)
				bad = parse_names("impls", v, im_names, IM_NR, b->impl);
		} else if (opt(argc, argv, &i, "runs", true, &v, &bad)) {
			if (!bad && !(bad = parse_u64("runs", v, 1, MAX_RUNS, &x)))
				b->runs = (unsigned)x;
		} else if (opt(argc, argv, &i, "ms", true, &v, &bad)) {
			if (!bad && !(bad = parse_u64("ms", v, 1, 60000, &x)))
				b->ms = (unsigned)x;
		} else if (opt(argc, argv, &i, "seed", true, &v, &bad)) {
			if (!bad && !(bad = parse_u64("seed", v, 0, UINT64_MAX, &x)))
				b->seed = x;
		} else if (opt(argc, argv, &i, "cold-entries", true, &v, &bad)) {
			if (!bad && !(bad = parse_u64("cold-entries", v, 20000, 100000000, &x)))
				b->cold_entries = x;
		} else if (opt(argc, argv, &i, "threads", true, &v, &bad)) {
			if (bad)
				break;
			b->ntl = 0;
			for (const char *p = v;;) {
				char num[32];
				const char *e = strchr(p, ',');
				size_t len = e ? (size_t)(e - p) : strlen(p);

				if (b->ntl == MAX_TLIST || len >= sizeof(num)) {
					bad = usage("--threads: at most %u numbers", MAX_TLIST);
					break;
				}
				memcpy(num, p, len);
				num[len] = '\0';
				if ((bad = parse_u64("threads", num, 1, MAX_THREADS, &x)))
					break;
				for (unsigned t = 0; t < b->ntl; t++)
					if (b->tl[t] == x)
						bad = usage("--threads: %s twice", num);
				if (bad)
					break;
				b->tl[b->ntl++] = (unsigned)x;
				if (!e)
					break;
				p = e + 1;
			}
		} else if (!bad) {
			bad = usage("unknown %s '%s'", argv[i][0] == '-' ? "option" : "argument",
				    argv[i]);
		}
	}
	if (bad) {
		free(b);
		return 2;
	}
	/* ascending thread counts: the plot and the scaling want it */
	for (unsigned i = 1; i < b->ntl; i++)
		for (unsigned k = i; k > 0 && b->tl[k - 1] > b->tl[k]; k--) {
			unsigned t = b->tl[k];

			b->tl[k] = b->tl[k - 1];
			b->tl[k - 1] = t;
		}
	{
		/* the references' hash key: drawn per run, as libdcache draws
		 * one per cache, but from --seed */
		uint64_t ks = b->seed ^ 0x4a5b;

		g_hkey.k0 = rng_next(&ks);
		g_hkey.k1 = rng_next(&ks);
	}
	rep = b->json ? stderr : stdout;
	show_progress = isatty(STDERR_FILENO) == 1;
	debug_runs = getenv("DCBENCH_MICRO_DEBUG") != NULL;
	raise_nofile();
	{
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		b->cores = n > 0 ? (unsigned)n : 1;
	}
	gethostname(host, sizeof(host) - 1);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	if (!b->treefile) {
		treefile = find_tree();
		if (!treefile) {
			fprintf(stderr, "dcbench micro: cannot find the tree listing "
				"(data/linux-6.1-tree.tsv.xz beside the build directory, or "
				"share/dcache/ of an installed dcbench); name it with "
				"--tree FILE\n");
			free(b);
			return 1;
		}
		b->treefile = treefile;
	}
	g_cwdfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g_cwdfd < 0) {
		fprintf(stderr, "dcbench micro: cannot open the working directory: %s\n",
			strerror(errno));
		free(treefile);
		free(b);
		return 1;
	}
	/* before any thread exists: unshare(CLONE_NEWNS) applies to the caller */
	if (b->impl[IM_KERNEL])
		kernel_setup();
	urcu_memb_register_thread();
	b->cells = xcalloc((size_t)SC_NR * b->ntl * IM_NR, sizeof(*b->cells));
	progress("reading %s", b->treefile);
	b->hot = tree_parse(b->treefile);
	if (!b->hot) {
		status = 1;
		goto out;
	}
	if (!b->no_bytes)
		run_bytes(b);
	for (int sc = 0; sc < SC_NR; sc++)
		if (b->scen[sc] && run_scenario(b, sc))
			status = 1;
	if (!b->no_updates)
		run_updates(b);
	summarize(b);
	b->unmeasured += check_cells(b);
	print_report(b, date, host);
	if (b->json)
		write_json(b, date, host);
	if (b->plot && plot(b, b->plot, host, date))
		status = status ? status : 1;
	if (b->mismatches || b->update_errors || b->wrong_lookups || b->unmeasured)
		status = 1;
out:
	fflush(NULL);
	kernel_cleanup();
	urcu_memb_unregister_thread();
	tree_free(b->hot);
	free(b->cells);
	free(treefile);
	close(g_cwdfd);
	g_cwdfd = -1;
	free(b);
	return status;
}
