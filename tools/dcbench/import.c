/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * import.c - strace log -> dcbench trace.
 *
 * Three layers:
 *  - the line parser (dct_parse_line, dct_parse_call): text to spans, no
 *    state, never reads past the length it is given (it is fuzzed);
 *  - the importer: per-process state (working directory, the half of a
 *    call left <unfinished ...>, the ops so far), path resolution and the
 *    fork/wait links between processes;
 *  - the reader: the log, plain or xz, streamed through a fixed buffer.
 *
 * Only the output grows with the log: the ops, and the string table of
 * distinct paths.  The log itself is never held, not even one process's
 * share of it.
 *
 * Working directories.  With -y, strace annotates AT_FDCWD with the
 * directory it stands for, so most lines tell us the process's cwd and we
 * simply believe them.  Lines without one (stat, lstat, mkdir, execve,
 * chdir...) use the cwd we track through chdir, fchdir, getcwd and fork.
 * A process can run before we know its cwd: a vfork child's lines come
 * before its parent's clone returns, and the first process's cwd is only
 * known from its first annotation.  Relative paths seen then are kept,
 * relative to the unknown directory, and fixed up when it becomes known.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import.h"

#define LINE_MAX_BYTES	(1u << 20)	/* longer lines are counted malformed */
#define READ_CHUNK	(1u << 20)
#define DEAD_OP		0xff		/* kind of an op dropped after the fact */
#define NAME_MAX_BYTES	23		/* longest syscall name we keep */

/* ------------------------------------------------------------------ */
/* The line parser                                                     */
/* ------------------------------------------------------------------ */

static bool is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool has_prefix(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(end - p) >= n && memcmp(p, s, n) == 0;
}

static bool has_suffix(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(end - p) >= n && memcmp(end - n, s, n) == 0;
}

static const char *skip_spaces(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Unsigned decimal, at most UINT32_MAX; NULL if there is none. */
static const char *parse_u32(const char *p, const char *end, uint32_t *v)
{
	uint64_t n = 0;
	const char *s = p;

	while (p < end && is_digit(*p)) {
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > UINT32_MAX)
			return NULL;
		p++;
	}
	*v = (uint32_t)n;
	return p > s ? p : NULL;
}

static const char *parse_pid(const char *p, const char *end, uint32_t *pid)
{
	if (has_prefix(p, end, "[pid")) {
		p = parse_u32(skip_spaces(p + 4, end), end, pid);
		if (!p || p == end || *p != ']')
			return NULL;
		p++;
	} else {
		p = parse_u32(p, end, pid);
	}
	if (!p || p == end || *p != ' ')
		return NULL;
	return skip_spaces(p, end);
}

/* "<... name resumed>rest" */
static int parse_resumed(const char *p, const char *end, struct dct_line *out)
{
	const char *n = p + 5;

	p = n;
	while (p < end && is_word(*p))
		p++;
	if (p == n || (size_t)(p - n) > NAME_MAX_BYTES ||
	    !has_prefix(p, end, " resumed>"))
		return -1;
	out->type = DCT_LINE_RESUMED;
	out->name = n;
	out->name_len = (size_t)(p - n);
	out->text = p + 9;
	out->text_len = (size_t)(end - out->text);
	return 0;
}

/* "name(args) = ret" or "name(args <unfinished ...>" */
static int parse_call_line(const char *p, const char *end, struct dct_line *out)
{
	static const char unf[] = "<unfinished ...>";
	const char *n = p;

	while (p < end && is_word(*p))
		p++;
	if (p == n || (size_t)(p - n) > NAME_MAX_BYTES || p == end || *p != '(')
		return -1;
	out->name = n;
	out->name_len = (size_t)(p - n);
	out->text = p;
	if (has_suffix(p, end, unf)) {
		out->type = DCT_LINE_UNFINISHED;
		end -= sizeof(unf) - 1;
	} else {
		out->type = DCT_LINE_CALL;
	}
	out->text_len = (size_t)(end - p);
	return 0;
}

int dct_parse_line(const char *line, size_t len, struct dct_line *out)
{
	const char *p = line, *end = line + len;

	memset(out, 0, sizeof(*out));
	while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (skip_spaces(p, end) == end) {
		out->type = DCT_LINE_BLANK;
		return 0;
	}
	p = parse_pid(p, end, &out->pid);
	if (!p)
		goto malformed;
	if (has_prefix(p, end, "--- ")) {
		out->type = DCT_LINE_SIGNAL;
		return 0;
	}
	if (has_prefix(p, end, "+++ ")) {
		out->type = DCT_LINE_EXIT;
		return 0;
	}
	if (has_prefix(p, end, "<... ")) {
		if (parse_resumed(p, end, out) == 0)
			return 0;
	} else if (parse_call_line(p, end, out) == 0) {
		return 0;
	}
malformed:
	out->type = DCT_LINE_MALFORMED;
	return -1;
}

/* p at '"': past the closing quote and a "..." that marks truncation. */
static const char *skip_string(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\') {
			if (++p == end)
				return NULL;
		} else if (*p == '"') {
			p++;
			return has_prefix(p, end, "...") ? p + 3 : p;
		}
	}
	return NULL;
}

/* p at '<' of an fd annotation ("3</dir>"); strace escapes '>' inside. */
static const char *skip_annotation(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\') {
			if (++p == end)
				return NULL;
		} else if (*p == '>') {
			return p + 1;
		}
	}
	return NULL;
}

static const char *skip_comment(const char *p, const char *end)
{
	for (p += 2; p + 1 < end; p++)
		if (p[0] == '*' && p[1] == '/')
			return p + 2;
	return NULL;
}

static void add_arg(struct dct_call *c, const char *s, const char *e)
{
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (c->nargs < DCT_MAX_ARGS) {
		c->args[c->nargs].p = s;
		c->args[c->nargs].len = (size_t)(e - s);
	}
	c->nargs++;
}

/* One element of the argument list; returns where it ended (at ',' or ')'). */
static const char *skip_arg(const char *p, const char *end, const char *start)
{
	int depth = 0;

	while (p < end) {
		char c = *p;

		if (c == '"')
			p = skip_string(p, end);
		else if (c == '/' && p + 1 < end && p[1] == '*')
			p = skip_comment(p, end);
		else if (c == '<' && p > start && is_word(p[-1]))
			p = skip_annotation(p, end);
		else if (c == '(' || c == '[' || c == '{')
			depth++, p++;
		else if ((c == ')' || c == ']' || c == '}') && depth > 0)
			depth--, p++;
		else if (c == ')' || (c == ',' && depth == 0))
			return p;
		else if (c == ']' || c == '}')
			return NULL;
		else
			p++;
		if (!p)
			return NULL;
	}
	return NULL;
}

/* Decimal or 0x hex, optional '-'; NULL if none or it overflows. */
static const char *parse_ll(const char *p, const char *end, long long *v)
{
	bool neg = p < end && *p == '-';
	unsigned long long n = 0;
	const char *s;
	int base = 10;

	if (neg)
		p++;
	if (has_prefix(p, end, "0x"))
		p += 2, base = 16;
	for (s = p; p < end; p++) {
		int d;

		if (is_digit(*p))
			d = *p - '0';
		else if (base == 16 && ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f'))
			d = (*p | 0x20) - 'a' + 10;
		else
			break;
		if (n > (ULLONG_MAX - (unsigned)d) / (unsigned)base)
			return NULL;
		n = n * (unsigned)base + (unsigned)d;
	}
	if (p == s || n > (unsigned long long)LLONG_MAX)
		return NULL;
	*v = neg ? -(long long)n : (long long)n;
	return p;
}

static const char *parse_errname(const char *p, const char *end, struct dct_span *e)
{
	const char *s = p;

	while (p < end && is_word(*p))
		p++;
	e->p = s;
	e->len = (size_t)(p - s);
	return p;
}

/* After the closing ')': " = 0", " = -1 ENOENT (...)", " = ? ERESTARTSYS". */
static int parse_ret(const char *p, const char *end, struct dct_call *c)
{
	p = skip_spaces(p, end);
	if (p == end || *p != '=')
		return -1;
	p = skip_spaces(p + 1, end);
	if (p < end && *p == '?') {
		c->ret = DCT_RET_UNKNOWN;
		p = skip_spaces(p + 1, end);
		if (p < end && *p == 'E')
			parse_errname(p, end, &c->errname);
		return 0;
	}
	p = parse_ll(p, end, &c->value);
	if (!p)
		return -1;
	c->ret = DCT_RET_NUM;
	if (c->value == -1 && p + 1 < end && *p == ' ' && p[1] == 'E') {
		c->ret = DCT_RET_ERR;
		parse_errname(p + 1, end, &c->errname);
	}
	return 0;
}

int dct_parse_call(const char *text, size_t len, struct dct_call *c)
{
	const char *p = text, *end = text + len;

	memset(c, 0, sizeof(*c));
	if (p == end || *p != '(')
		return -1;
	for (p++;;) {
		const char *s = skip_spaces(p, end), *e = skip_arg(s, end, s);

		if (!e)
			return -1;
		/* "()" and "( )" (a vfork rejoined) have no arguments */
		if (!(*e == ')' && c->nargs == 0 && e == s))
			add_arg(c, s, e);
		p = e + 1;
		if (*e == ')')
			break;
	}
	if (c->nargs > DCT_MAX_ARGS)
		c->nargs = DCT_MAX_ARGS;
	return parse_ret(p, end, c);
}

static int hexval(char c)
{
	if (is_digit(c))
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One escape after a backslash at *pp; returns the byte, advances *pp. */
static int decode_escape(const char **pp, const char *end)
{
	const char *p = *pp;
	int v = 0, n;

	if (p == end)
		return -1;
	switch (*p) {
	case 'n': *pp = p + 1; return '\n';
	case 't': *pp = p + 1; return '\t';
	case 'r': *pp = p + 1; return '\r';
	case 'v': *pp = p + 1; return '\v';
	case 'f': *pp = p + 1; return '\f';
	case 'a': *pp = p + 1; return '\a';
	case 'b': *pp = p + 1; return '\b';
	case 'x':
		for (n = 0, p++; n < 2 && p < end && hexval(*p) >= 0; n++, p++)
			v = v * 16 + hexval(*p);
		*pp = p;
		return n ? v : -1;
	}
	if (*p >= '0' && *p <= '7') {
		for (n = 0; n < 3 && p < end && *p >= '0' && *p <= '7'; n++, p++)
			v = v * 8 + (*p - '0');
		*pp = p;
		return v & 0xff;
	}
	*pp = p + 1;
	return (unsigned char)*p;	/* \" \\ and anything strace may add */
}

/* Bytes between two delimiters, escapes decoded, NUL-terminated. */
static long decode_between(const char *p, const char *end, char *buf, size_t cap)
{
	size_t n = 0;

	while (p < end) {
		int c = (unsigned char)*p++;

		if (c == '\\' && (c = decode_escape(&p, end)) < 0)
			return -1;
		if (n + 1 >= cap)
			return -1;
		buf[n++] = (char)c;
	}
	if (cap == 0)
		return -1;
	buf[n] = '\0';
	return (long)n;
}

long dct_decode_string(struct dct_span a, char *buf, size_t cap)
{
	const char *end = a.p + a.len;

	if (a.len < 2 || a.p[0] != '"' || skip_string(a.p, end) != end ||
	    end[-1] != '"' || has_suffix(a.p, end, "\"..."))
		return -1;
	return decode_between(a.p + 1, end - 1, buf, cap);
}

/* Is word, delimited, somewhere in a (flag lists, struct fields)? */
static bool has_word(struct dct_span a, const char *word)
{
	size_t n = strlen(word);
	const char *p = a.p, *end = a.p + a.len;

	while ((size_t)(end - p) >= n) {
		const char *m = memmem(p, (size_t)(end - p), word, n);

		if (!m)
			return false;
		if ((m == a.p || !is_word(m[-1])) &&
		    (m + n == end || !is_word(m[n])))
			return true;
		p = m + 1;
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* Paths                                                               */
/* ------------------------------------------------------------------ */

#define PATH_CAP	(DCT_PATH_MAX + 1)

/*
 * Append s's components to out (holding a normalised prefix): drop empty
 * and "." components, keep "..": the cache resolves it physically, and
 * "a/link/.." is not "a" when link is a symlink.
 */
static int norm_append(char *out, size_t *olen, const char *s, size_t slen)
{
	const char *p = s, *end = s + slen;

	while (p < end) {
		const char *c;
		size_t n, sep;

		while (p < end && *p == '/')
			p++;
		for (c = p; p < end && *p != '/'; p++)
			;
		n = (size_t)(p - c);
		if (n == 0 || (n == 1 && c[0] == '.'))
			continue;
		sep = *olen > 0 && out[*olen - 1] != '/';
		if (*olen + sep + n >= PATH_CAP)
			return -1;
		if (sep)
			out[(*olen)++] = '/';
		memcpy(out + *olen, c, n);
		*olen += n;
	}
	out[*olen] = '\0';
	return 0;
}

/*
 * base (absolute, or relative to an unknown directory) joined with rel,
 * normalised into out; its length, or -1 when over DCT_PATH_MAX.  The base
 * is normalised as well: annotations come from the log, so trust none.
 */
static long join_path(char *out, const char *base, const char *rel, size_t rlen)
{
	size_t n = 0;

	if (rlen > 0 && rel[0] == '/') {
		out[n++] = '/';
		out[n] = '\0';
	} else {
		if (base[0] == '/')
			out[n++] = '/';
		out[n] = '\0';
		if (norm_append(out, &n, base, strlen(base)))
			return -1;
	}
	if (norm_append(out, &n, rel, rlen))
		return -1;
	return (long)n;
}

/* A trailing '/' or "/." asks for a directory; "/" itself asks nothing. */
static bool trailing_slash(const char *s, size_t n)
{
	size_t k = n;

	while (k > 0 && s[k - 1] == '/')
		k--;
	if (k == 0)
		return false;
	if (k < n)
		return true;
	return n >= 2 && s[n - 1] == '.' && s[n - 2] == '/';
}

/* ------------------------------------------------------------------ */
/* The string table                                                    */
/* ------------------------------------------------------------------ */

struct strtab {
	char *blob;
	size_t len, cap;
	size_t *off;		/* per id */
	uint32_t *hash;		/* per id, to rehash without re-reading */
	uint32_t n, ncap;
	uint32_t *slot;		/* id + 1, 0 empty */
	uint32_t nslots;	/* power of two */
};

static uint32_t hash_str(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return (uint32_t)(h ^ (h >> 32));
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return true;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, ncap * size);
	if (!np)
		return false;
	*p = np;
	*cap = ncap;
	return true;
}

static bool strtab_rehash(struct strtab *t)
{
	uint32_t ns = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slot = calloc(ns, sizeof(*slot));

	if (!slot)
		return false;
	for (uint32_t id = 0; id < t->n; id++) {
		uint32_t i = t->hash[id] & (ns - 1);

		while (slot[i])
			i = (i + 1) & (ns - 1);
		slot[i] = id + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslots = ns;
	return true;
}

static bool strtab_add(struct strtab *t, const char *s, size_t n, uint32_t h)
{
	if (t->n == t->ncap) {
		size_t c = t->ncap ? (size_t)t->ncap * 2 : 1024;
		size_t *off = realloc(t->off, c * sizeof(*off));
		uint32_t *hash;

		if (!off)
			return false;
		t->off = off;
		hash = realloc(t->hash, c * sizeof(*hash));
		if (!hash)
			return false;
		t->hash = hash;
		t->ncap = (uint32_t)c;
	}
	if (!grow((void **)&t->blob, &t->cap, t->len + n + 1, 1))
		return false;
	memcpy(t->blob + t->len, s, n + 1);
	t->off[t->n] = t->len;
	t->hash[t->n] = h;
	t->len += n + 1;
	t->n++;
	return true;
}

/* The id of s (NUL-terminated, n bytes), adding it; DCT_NONE if out of memory. */
static uint32_t strtab_intern(struct strtab *t, const char *s, size_t n)
{
	uint32_t h = hash_str(s, n), i;

	if ((uint64_t)(t->n + 1) * 2 > t->nslots && !strtab_rehash(t))
		return DCT_NONE;
	for (i = h & (t->nslots - 1); t->slot[i]; i = (i + 1) & (t->nslots - 1)) {
		uint32_t id = t->slot[i] - 1;

		if (t->hash[id] == h && strcmp(t->blob + t->off[id], s) == 0)
			return id;
	}
	if (t->n >= UINT32_MAX - 1 || !strtab_add(t, s, n, h))
		return DCT_NONE;
	t->slot[i] = t->n;
	return t->n - 1;
}

static void strtab_free(struct strtab *t)
{
	free(t->blob);
	free(t->off);
	free(t->hash);
	free(t->slot);
}

/* ------------------------------------------------------------------ */
/* Processes                                                           */
/* ------------------------------------------------------------------ */

enum { LIVE, EXITED, REAPED };

/* A relative path waiting for its process's unknown directory. */
struct pend {
	uint64_t op;
	uint8_t slot;		/* 0: path, 1: path2 */
	char *rel;		/* normalised, relative to that directory */
};

struct proc {
	uint32_t pid;
	uint32_t index;		/* in dct_importer.procs */
	int32_t parent;
	uint8_t state;
	bool has_exit;
	bool linked;		/* its fork was seen */
	bool base_from_parent;	/* pending paths may be resolved by the fork */
	char *cwd;		/* absolute, or NULL while unknown */
	char *cwd_rel;		/* while cwd is NULL: relative to the unknown one */
	struct dct_op *ops;
	size_t nops, cap;
	struct pend *pend;
	size_t npend, pcap;
	char *unf;		/* the call left <unfinished ...>, NUL-terminated */
	size_t unf_len;
	char unf_name[NAME_MAX_BYTES + 1];
	uint32_t unf_line;
	uint32_t last_line;
};

struct unknown_name {
	char name[NAME_MAX_BYTES + 1];
	uint64_t count;
};

#define MAX_UNKNOWN_NAMES 64

struct dct_importer {
	struct dct_import_summary sum;
	struct strtab paths;
	struct proc **procs;
	size_t nprocs, pcap;
	uint32_t *pidmap;	/* pid -> proc index + 1, open addressing */
	uint32_t *pidkey;
	size_t pidslots, pidused;
	uint64_t lineno;
	bool oom;
	char *join;		/* unfinished + resumed halves, rejoined */
	size_t join_cap;
	char sbuf[PATH_CAP];	/* a decoded string argument */
	char pbuf[PATH_CAP];	/* a path being made absolute */
	char abuf[PATH_CAP];	/* a decoded fd annotation */
	char errname[32];	/* the last errno name looked up, and ... */
	int errnum;		/* ... its number */
	struct unknown_name unknown[MAX_UNKNOWN_NAMES];
	size_t nunknown;
};

static uint32_t clamp_line(uint64_t l)
{
	return l > UINT32_MAX ? UINT32_MAX : (uint32_t)l;
}

static size_t pid_hash(uint32_t pid, size_t nslots)
{
	return (pid * 2654435761u) & (nslots - 1);
}

static bool pidmap_grow(struct dct_importer *im)
{
	size_t ns = im->pidslots ? im->pidslots * 2 : 4096;
	uint32_t *map = calloc(ns, sizeof(*map)), *key = calloc(ns, sizeof(*key));

	if (!map || !key) {
		free(map);
		free(key);
		return false;
	}
	for (size_t i = 0; i < im->pidslots; i++) {
		size_t j;

		if (!im->pidmap[i])
			continue;
		for (j = pid_hash(im->pidkey[i], ns); map[j]; j = (j + 1) & (ns - 1))
			;
		map[j] = im->pidmap[i];
		key[j] = im->pidkey[i];
	}
	free(im->pidmap);
	free(im->pidkey);
	im->pidmap = map;
	im->pidkey = key;
	im->pidslots = ns;
	return true;
}

static size_t pidmap_slot(const struct dct_importer *im, uint32_t pid)
{
	size_t j = pid_hash(pid, im->pidslots);

	while (im->pidmap[j] && im->pidkey[j] != pid)
		j = (j + 1) & (im->pidslots - 1);
	return j;
}

/* The latest process with this pid, whatever its state; NULL if none. */
static struct proc *find_proc(const struct dct_importer *im, uint32_t pid)
{
	size_t j;

	if (!im->pidslots)
		return NULL;
	j = pidmap_slot(im, pid);
	return im->pidmap[j] ? im->procs[im->pidmap[j] - 1] : NULL;
}

static struct proc *new_proc(struct dct_importer *im, uint32_t pid)
{
	struct proc *p;
	size_t j;

	if (im->nprocs >= INT32_MAX ||
	    ((im->pidused + 1) * 2 > im->pidslots && !pidmap_grow(im)) ||
	    !grow((void **)&im->procs, &im->pcap, im->nprocs + 1, sizeof(*im->procs)))
		goto oom;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->cwd_rel = strdup(""))) {
		free(p);
		goto oom;
	}
	p->pid = pid;
	p->index = (uint32_t)im->nprocs;
	p->parent = -1;
	p->base_from_parent = true;
	im->procs[im->nprocs++] = p;
	j = pidmap_slot(im, pid);
	if (!im->pidmap[j])
		im->pidused++;
	im->pidmap[j] = (uint32_t)im->nprocs;
	im->pidkey[j] = pid;
	return p;
oom:
	im->oom = true;
	return NULL;
}

/* The running process with this pid; a new one if the pid is new or reused. */
static struct proc *live_proc(struct dct_importer *im, uint32_t pid)
{
	struct proc *p = find_proc(im, pid);

	return p && p->state == LIVE ? p : new_proc(im, pid);
}

static void count_malformed(struct dct_importer *im)
{
	if (!im->sum.malformed_first_line)
		im->sum.malformed_first_line = im->lineno;
	im->sum.malformed++;
}

/* Append an op; its index, or -1 (out of memory, or after the EXIT). */
static long long add_op(struct dct_importer *im, struct proc *p, unsigned kind,
			unsigned flags, int err, uint64_t line)
{
	struct dct_op *o;

	if (p->has_exit) {
		count_malformed(im);	/* a call after the process's end */
		return -1;
	}
	if (!grow((void **)&p->ops, &p->cap, p->nops + 1, sizeof(*p->ops))) {
		im->oom = true;
		return -1;
	}
	o = &p->ops[p->nops];
	o->kind = (uint8_t)kind;
	o->flags = (uint8_t)flags;
	o->err = (int16_t)err;
	o->path = o->path2 = o->child = DCT_NONE;
	o->line = clamp_line(line);
	return (long long)p->nops++;
}

static void kill_op(struct dct_importer *im, struct proc *p, uint64_t op)
{
	if (p->ops[op].kind != DEAD_OP)
		im->sum.unresolved++;
	p->ops[op].kind = DEAD_OP;
}

static void drop_pending(struct dct_importer *im, struct proc *p)
{
	for (size_t i = 0; i < p->npend; i++) {
		kill_op(im, p, p->pend[i].op);
		free(p->pend[i].rel);
	}
	p->npend = 0;
}

static uint32_t intern_abs(struct dct_importer *im, const char *base,
			   const char *rel, size_t rlen)
{
	long n = join_path(im->pbuf, base, rel, rlen);
	uint32_t id;

	if (n < 0) {
		im->sum.too_long++;
		return DCT_NONE;
	}
	id = strtab_intern(&im->paths, im->pbuf, (size_t)n);
	if (id == DCT_NONE)
		im->oom = true;
	return id;
}

/* The unknown directory turned out to be base: resolve what waited for it. */
static void resolve_pending(struct dct_importer *im, struct proc *p, const char *base)
{
	for (size_t i = 0; i < p->npend; i++) {
		struct pend *e = &p->pend[i];
		struct dct_op *o = &p->ops[e->op];
		uint32_t id = DCT_NONE;

		if (o->kind != DEAD_OP)
			id = intern_abs(im, base, e->rel, strlen(e->rel));
		if (id == DCT_NONE)
			o->kind = DEAD_OP;
		else if (e->slot == 0)
			o->path = id;
		else
			o->path2 = id;
		free(e->rel);
	}
	p->npend = 0;
}

static bool set_str(struct dct_importer *im, char **dst, const char *s)
{
	char *c = strdup(s);

	if (!c) {
		im->oom = true;
		return false;
	}
	free(*dst);
	*dst = c;
	return true;
}

/* The directory the process stood in at fork is now known. */
static void learn_base(struct dct_importer *im, struct proc *p, const char *base)
{
	if (p->cwd == NULL) {
		if (join_path(im->pbuf, base, p->cwd_rel, strlen(p->cwd_rel)) >= 0)
			set_str(im, &p->cwd, im->pbuf);
		else
			im->sum.too_long++;
	}
	resolve_pending(im, p, base);
	p->base_from_parent = false;
}

/*
 * Where an unknown cwd started, given that it is now abs: abs minus the
 * chdirs made since, when those were plain descents.  NULL if we cannot
 * tell (a ".." or a symlink in between).
 */
static const char *derive_base(struct dct_importer *im, const struct proc *p,
			       const char *abs)
{
	size_t n = strlen(abs), r = strlen(p->cwd_rel), b;

	if (r == 0)
		return abs;
	/* abs must be base + "/" + cwd_rel */
	if (has_word((struct dct_span){ p->cwd_rel, r }, "..") || r >= n ||
	    memcmp(abs + n - r, p->cwd_rel, r) != 0 || abs[n - r - 1] != '/')
		return NULL;
	b = n - r - 1;
	if (b == 0)
		return "/";
	memcpy(im->sbuf, abs, b);
	im->sbuf[b] = '\0';
	return im->sbuf;
}

/* The kernel told us the cwd (AT_FDCWD annotation, getcwd): believe it. */
static void adopt_cwd(struct dct_importer *im, struct proc *p, const char *abs)
{
	const char *base;

	if (p->cwd) {
		if (strcmp(p->cwd, abs) != 0) {
			im->sum.cwd_corrections++;
			set_str(im, &p->cwd, abs);
		}
		return;
	}
	if (p->npend) {
		base = derive_base(im, p, abs);
		if (base)
			resolve_pending(im, p, base);
		else
			drop_pending(im, p);
	}
	set_str(im, &p->cwd, abs);
	p->base_from_parent = false;
}

/* The cwd became unknowable (fchdir to an fd we cannot name). */
static void lose_cwd(struct dct_importer *im, struct proc *p)
{
	drop_pending(im, p);
	free(p->cwd);
	p->cwd = NULL;
	set_str(im, &p->cwd_rel, "");
	p->base_from_parent = false;
}

static void free_proc(struct proc *p)
{
	for (size_t i = 0; i < p->npend; i++)
		free(p->pend[i].rel);
	free(p->pend);
	free(p->ops);
	free(p->cwd);
	free(p->cwd_rel);
	free(p->unf);
	free(p);
}

/* ------------------------------------------------------------------ */
/* System calls                                                        */
/* ------------------------------------------------------------------ */

enum sys_type {
	S_PATH,		/* a path lookup: one op */
	S_SYMLINK,	/* path is the new link, path2 the target text */
	S_CHDIR,
	S_FCHDIR,
	S_GETCWD,
	S_FORK,
	S_WAIT,
	S_WAITID,
	S_EXIT,
	S_IGNORE,	/* known, no path lookup, nothing to track */
};

/* How to read the flags argument. */
enum flag_style {
	FL_NONE,
	FL_OPEN,	/* O_CREAT, O_EXCL, O_DIRECTORY, O_TRUNC, O_NOFOLLOW */
	FL_STAT,	/* AT_SYMLINK_NOFOLLOW makes it LSTAT */
	FL_AT,		/* AT_SYMLINK_NOFOLLOW sets NOFOLLOW */
	FL_LINKAT,	/* NOFOLLOW unless AT_SYMLINK_FOLLOW */
	FL_UNLINKAT,	/* AT_REMOVEDIR makes it RMDIR */
	FL_RENAME,	/* RENAME_NOREPLACE, _EXCHANGE, _WHITEOUT */
};

struct sysdesc {
	const char *name;
	uint8_t type;
	uint8_t kind;
	int8_t dfd, path, dfd2, path2, flags;	/* argument indices, -1: none */
	uint8_t style;
	uint8_t fixed;		/* DCT_F_* always set */
};

#define P1(n, k, p)		{ n, S_PATH, k, -1, p, -1, -1, -1, FL_NONE, 0 }
#define PAT(n, k, d, p, f, s)	{ n, S_PATH, k, d, p, -1, -1, f, s, 0 }
#define P2(n, k, d, p, d2, p2, f, s, x) { n, S_PATH, k, d, p, d2, p2, f, s, x }
#define T(n, t)			{ n, t, 0, -1, -1, -1, -1, -1, FL_NONE, 0 }

/* Sorted by name: bsearch. */
static const struct sysdesc systab[] = {
	P1("access", DCT_ACCESS, 0),
	{ "chdir", S_CHDIR, DCT_CHDIR, -1, 0, -1, -1, -1, FL_NONE, 0 },
	P1("chmod", DCT_CHMOD, 0),
	P1("chown", DCT_CHOWN, 0),
	P1("chown32", DCT_CHOWN, 0),
	T("clone", S_FORK),
	T("clone2", S_FORK),
	T("clone3", S_FORK),
	{ "creat", S_PATH, DCT_OPEN, -1, 0, -1, -1, -1, FL_NONE, DCT_F_CREAT | DCT_F_TRUNC },
	P1("execve", DCT_EXECVE, 0),
	PAT("execveat", DCT_EXECVE, 0, 1, -1, FL_NONE),
	T("exit", S_EXIT),
	T("exit_group", S_EXIT),
	PAT("faccessat", DCT_ACCESS, 0, 1, -1, FL_NONE),
	PAT("faccessat2", DCT_ACCESS, 0, 1, 3, FL_AT),
	T("fchdir", S_FCHDIR),
	T("fchmod", S_IGNORE),
	PAT("fchmodat", DCT_CHMOD, 0, 1, 3, FL_AT),
	PAT("fchmodat2", DCT_CHMOD, 0, 1, 3, FL_AT),
	T("fchown", S_IGNORE),
	T("fchown32", S_IGNORE),
	PAT("fchownat", DCT_CHOWN, 0, 1, 4, FL_AT),
	T("fork", S_FORK),
	T("fstat", S_IGNORE),
	T("fstat64", S_IGNORE),
	PAT("fstatat64", DCT_STAT, 0, 1, 3, FL_STAT),
	T("fstatfs", S_IGNORE),
	T("fstatfs64", S_IGNORE),
	PAT("futimesat", DCT_UTIMENS, 0, 1, -1, FL_NONE),
	T("getcwd", S_GETCWD),
	P1("getxattr", DCT_STAT, 0),
	T("kill", S_IGNORE),
	{ "lchown", S_PATH, DCT_CHOWN, -1, 0, -1, -1, -1, FL_NONE, DCT_F_NOFOLLOW },
	{ "lchown32", S_PATH, DCT_CHOWN, -1, 0, -1, -1, -1, FL_NONE, DCT_F_NOFOLLOW },
	P1("lgetxattr", DCT_LSTAT, 0),
	P2("link", DCT_LINK, -1, 0, -1, 1, -1, FL_NONE, DCT_F_NOFOLLOW),
	P2("linkat", DCT_LINK, 0, 1, 2, 3, 4, FL_LINKAT, 0),
	P1("listxattr", DCT_STAT, 0),
	P1("llistxattr", DCT_LSTAT, 0),
	P1("lremovexattr", DCT_LSTAT, 0),
	P1("lsetxattr", DCT_LSTAT, 0),
	P1("lstat", DCT_LSTAT, 0),
	P1("lstat64", DCT_LSTAT, 0),
	P1("mkdir", DCT_MKDIR, 0),
	PAT("mkdirat", DCT_MKDIR, 0, 1, -1, FL_NONE),
	P1("mknod", DCT_MKNOD, 0),
	PAT("mknodat", DCT_MKNOD, 0, 1, -1, FL_NONE),
	PAT("newfstatat", DCT_STAT, 0, 1, 3, FL_STAT),
	P1("oldlstat", DCT_LSTAT, 0),
	P1("oldstat", DCT_STAT, 0),
	PAT("open", DCT_OPEN, -1, 0, 1, FL_OPEN),
	PAT("openat", DCT_OPEN, 0, 1, 2, FL_OPEN),
	PAT("openat2", DCT_OPEN, 0, 1, 2, FL_OPEN),
	T("pidfd_open", S_IGNORE),
	T("pidfd_send_signal", S_IGNORE),
	P1("readlink", DCT_READLINK, 0),
	PAT("readlinkat", DCT_READLINK, 0, 1, -1, FL_NONE),
	P1("removexattr", DCT_STAT, 0),
	P2("rename", DCT_RENAME, -1, 0, -1, 1, -1, FL_NONE, 0),
	P2("renameat", DCT_RENAME, 0, 1, 2, 3, -1, FL_NONE, 0),
	P2("renameat2", DCT_RENAME, 0, 1, 2, 3, 4, FL_RENAME, 0),
	P1("rmdir", DCT_RMDIR, 0),
	T("rt_sigqueueinfo", S_IGNORE),
	T("rt_tgsigqueueinfo", S_IGNORE),
	P1("setxattr", DCT_STAT, 0),
	P1("stat", DCT_STAT, 0),
	P1("stat64", DCT_STAT, 0),
	P1("statfs", DCT_STAT, 0),
	P1("statfs64", DCT_STAT, 0),
	PAT("statx", DCT_STAT, 0, 1, 2, FL_STAT),
	{ "symlink", S_SYMLINK, DCT_SYMLINK, -1, 1, -1, 0, -1, FL_NONE, 0 },
	{ "symlinkat", S_SYMLINK, DCT_SYMLINK, 1, 2, -1, 0, -1, FL_NONE, 0 },
	T("tgkill", S_IGNORE),
	T("tkill", S_IGNORE),
	P1("truncate", DCT_TRUNCATE, 0),
	P1("truncate64", DCT_TRUNCATE, 0),
	P1("unlink", DCT_UNLINK, 0),
	PAT("unlinkat", DCT_UNLINK, 0, 1, 2, FL_UNLINKAT),
	P1("utime", DCT_UTIMENS, 0),
	PAT("utimensat", DCT_UTIMENS, 0, 1, 3, FL_AT),
	P1("utimes", DCT_UTIMENS, 0),
	T("vfork", S_FORK),
	T("wait4", S_WAIT),
	T("waitid", S_WAITID),
	T("waitpid", S_WAIT),
};

static int cmp_sys(const void *key, const void *elem)
{
	const struct dct_span *k = key;
	const char *n = ((const struct sysdesc *)elem)->name;
	size_t nl = strlen(n);
	int c = memcmp(k->p, n, k->len < nl ? k->len : nl);

	return c ? c : (k->len > nl) - (k->len < nl);
}

static const struct sysdesc *find_sys(const char *name, size_t len)
{
	struct dct_span k = { name, len };

	return bsearch(&k, systab, sizeof(systab) / sizeof(systab[0]),
		       sizeof(systab[0]), cmp_sys);
}

static void count_unknown(struct dct_importer *im, const char *name, size_t len)
{
	size_t i;

	im->sum.unknown_calls++;
	for (i = 0; i < im->nunknown; i++)
		if (strlen(im->unknown[i].name) == len &&
		    memcmp(im->unknown[i].name, name, len) == 0)
			break;
	if (i == im->nunknown) {
		if (i == MAX_UNKNOWN_NAMES)
			return;
		memcpy(im->unknown[i].name, name, len);
		im->unknown[i].name[len] = '\0';
		im->nunknown++;
	}
	im->unknown[i].count++;
}

/* 0, a positive errno, DCT_ERR_UNKNOWN; or -2 for a call to be restarted. */
static int call_err(struct dct_importer *im, const struct dct_call *c)
{
	const struct dct_span *e = &c->errname;

	if (e->len >= 8 && memcmp(e->p, "ERESTART", 8) == 0)
		return -2;
	if (c->ret == DCT_RET_NUM)
		return 0;
	if (c->ret == DCT_RET_UNKNOWN || e->len >= sizeof(im->errname))
		return DCT_ERR_UNKNOWN;
	/* nearly every failure is the same ENOENT: remember the last one */
	if (strlen(im->errname) != e->len || memcmp(im->errname, e->p, e->len)) {
		memcpy(im->errname, e->p, e->len);
		im->errname[e->len] = '\0';
		im->errnum = dct_errno_from_name(e->p, e->len);
	}
	return im->errnum ? im->errnum : DCT_ERR_UNKNOWN;
}

enum fd_kind { FD_NONE, FD_CWD, FD_NUM };

/*
 * A directory-fd argument: AT_FDCWD or a number, with its -y annotation
 * decoded into im->abuf when there is one (*annot set).
 */
static enum fd_kind parse_fd(struct dct_importer *im, const struct dct_call *c,
			     int idx, bool *annot)
{
	const char *p, *end, *e;
	enum fd_kind k;
	uint32_t fd;

	*annot = false;
	if (idx < 0 || (unsigned)idx >= c->nargs)
		return FD_NONE;
	p = c->args[idx].p;
	end = p + c->args[idx].len;
	if (has_prefix(p, end, "AT_FDCWD")) {
		k = FD_CWD, p += 8;
	} else if (has_prefix(p, end, "-100")) {
		k = FD_CWD, p += 4;
	} else {
		p = parse_u32(p, end, &fd);
		if (!p)
			return FD_NONE;
		k = FD_NUM;
	}
	if (p < end && *p == '<' && (e = skip_annotation(p, end)) == end) {
		long n = decode_between(p + 1, end - 1, im->abuf, sizeof(im->abuf));

		/* socket:[..], pipe:[..] and paths with a NUL name no directory */
		*annot = n > 0 && im->abuf[0] == '/' && strlen(im->abuf) == (size_t)n;
	}
	return k;
}

/* Normalise im->abuf in place; false if it is too long. */
static bool norm_abuf(struct dct_importer *im)
{
	long n = join_path(im->pbuf, "/", im->abuf, strlen(im->abuf));

	if (n < 0)
		return false;
	memcpy(im->abuf, im->pbuf, (size_t)n + 1);
	return true;
}

/* AT_FDCWD</dir> tells us the cwd, whatever the path argument is. */
static void adopt_fdcwd(struct dct_importer *im, struct proc *p,
			const struct dct_call *c, int didx)
{
	bool annot;

	if (didx >= 0 && parse_fd(im, c, didx, &annot) == FD_CWD && annot &&
	    norm_abuf(im))
		adopt_cwd(im, p, im->abuf);
}

enum res { R_OK, R_PENDING, R_SKIP, R_FAIL };

struct resolved {
	enum res res;
	uint32_t id;		/* R_OK */
	char *rel;		/* R_PENDING, malloc'd */
	bool slash;
};

/* Decode path argument a into im->sbuf; its length, or -1 (counted). */
static long decode_path(struct dct_importer *im, struct dct_span a)
{
	long n = dct_decode_string(a, im->sbuf, sizeof(im->sbuf));

	if (n < 0) {
		if (a.len > DCT_PATH_MAX && a.p[a.len - 1] == '"')
			im->sum.too_long++;
		else
			count_malformed(im);
		return -1;
	}
	if ((size_t)n != strlen(im->sbuf)) {
		count_malformed(im);	/* a NUL: strace never prints one in a path */
		return -1;
	}
	return n;
}

static enum res resolve_rel(struct dct_importer *im, struct proc *p,
			    const struct dct_call *c, int didx, size_t n,
			    struct resolved *r)
{
	bool annot = false;
	enum fd_kind fk = didx < 0 ? FD_CWD : parse_fd(im, c, didx, &annot);
	long k;

	if (fk == FD_NUM && annot && norm_abuf(im))
		r->id = intern_abs(im, im->abuf, im->sbuf, n);
	else if (fk == FD_CWD && p->cwd)
		r->id = intern_abs(im, p->cwd, im->sbuf, n);
	else if (fk == FD_CWD) {
		k = join_path(im->pbuf, p->cwd_rel, im->sbuf, n);
		if (k < 0) {
			im->sum.too_long++;
			return R_FAIL;
		}
		r->rel = strdup(im->pbuf);
		if (!r->rel) {
			im->oom = true;
			return R_FAIL;
		}
		return R_PENDING;
	} else {
		im->sum.unresolved++;	/* an fd we cannot name */
		return R_FAIL;
	}
	return r->id == DCT_NONE ? R_FAIL : R_OK;
}

/*
 * Path argument pidx, relative to directory-fd argument didx (-1: the
 * cwd).  R_SKIP: not a lookup ("" with AT_EMPTY_PATH, NULL, an address).
 */
static enum res resolve(struct dct_importer *im, struct proc *p,
			const struct dct_call *c, int didx, int pidx,
			struct resolved *r)
{
	struct dct_span a;
	long n;

	memset(r, 0, sizeof(*r));
	r->id = DCT_NONE;
	if (pidx < 0 || (unsigned)pidx >= c->nargs) {
		count_malformed(im);
		return r->res = R_FAIL;
	}
	a = c->args[pidx];
	if (a.len == 0 || a.p[0] != '"') {
		im->sum.skipped_fd_calls++;
		return r->res = R_SKIP;
	}
	n = decode_path(im, a);
	if (n < 0)
		return r->res = R_FAIL;
	if (n == 0) {
		im->sum.skipped_fd_calls++;
		return r->res = R_SKIP;
	}
	r->slash = trailing_slash(im->sbuf, (size_t)n);
	if (im->sbuf[0] == '/') {
		r->id = intern_abs(im, "/", im->sbuf, (size_t)n);
		return r->res = r->id == DCT_NONE ? R_FAIL : R_OK;
	}
	return r->res = resolve_rel(im, p, c, didx, (size_t)n, r);
}

/* A symlink's target: text, stored as given. */
static enum res symlink_target(struct dct_importer *im, const struct dct_call *c,
			       int idx, struct resolved *r)
{
	long n;

	memset(r, 0, sizeof(*r));
	if (idx < 0 || (unsigned)idx >= c->nargs || c->args[idx].len == 0 ||
	    c->args[idx].p[0] != '"') {
		count_malformed(im);
		return r->res = R_FAIL;
	}
	n = decode_path(im, c->args[idx]);
	if (n < 0)
		return r->res = R_FAIL;
	r->id = strtab_intern(&im->paths, im->sbuf, (size_t)n);
	if (r->id == DCT_NONE) {
		im->oom = true;
		return r->res = R_FAIL;
	}
	return r->res = R_OK;
}

/* Give op its path in slot: now, or once the directory is known. */
static void attach(struct dct_importer *im, struct proc *p, uint64_t op,
		   uint8_t slot, struct resolved *r)
{
	struct pend *e;

	if (r->res == R_OK) {
		if (slot == 0)
			p->ops[op].path = r->id;
		else
			p->ops[op].path2 = r->id;
		return;
	}
	if (r->res != R_PENDING)
		return;
	if (!grow((void **)&p->pend, &p->pcap, p->npend + 1, sizeof(*p->pend))) {
		free(r->rel);
		im->oom = true;
		return;
	}
	e = &p->pend[p->npend++];
	e->op = op;
	e->slot = slot;
	e->rel = r->rel;
	r->rel = NULL;
}

static unsigned decode_flags(const struct sysdesc *sd, const struct dct_call *c,
			     unsigned *kind)
{
	struct dct_span a = { "", 0 };
	unsigned f = sd->fixed;

	if (sd->flags >= 0 && (unsigned)sd->flags < c->nargs)
		a = c->args[sd->flags];
	switch (sd->style) {
	case FL_OPEN:
		f |= has_word(a, "O_CREAT") ? DCT_F_CREAT : 0;
		f |= has_word(a, "O_EXCL") ? DCT_F_EXCL : 0;
		f |= has_word(a, "O_TRUNC") ? DCT_F_TRUNC : 0;
		f |= has_word(a, "O_NOFOLLOW") ? DCT_F_NOFOLLOW : 0;
		if (has_word(a, "O_DIRECTORY") || has_word(a, "O_TMPFILE"))
			f |= DCT_F_DIRECTORY;
		break;
	case FL_STAT:
		if (has_word(a, "AT_SYMLINK_NOFOLLOW"))
			*kind = DCT_LSTAT;
		break;
	case FL_AT:
		f |= has_word(a, "AT_SYMLINK_NOFOLLOW") ? DCT_F_NOFOLLOW : 0;
		break;
	case FL_LINKAT:
		f |= has_word(a, "AT_SYMLINK_FOLLOW") ? 0 : DCT_F_NOFOLLOW;
		break;
	case FL_UNLINKAT:
		if (has_word(a, "AT_REMOVEDIR"))
			*kind = DCT_RMDIR;
		break;
	case FL_RENAME:
		f |= has_word(a, "RENAME_NOREPLACE") ? DCT_F_NOREPLACE : 0;
		f |= has_word(a, "RENAME_EXCHANGE") ? DCT_F_EXCHANGE : 0;
		f |= has_word(a, "RENAME_WHITEOUT") ? DCT_F_WHITEOUT : 0;
		break;
	}
	return f;
}

static void do_path(struct dct_importer *im, struct proc *p, const struct sysdesc *sd,
		    const struct dct_call *c, int err, uint64_t line)
{
	unsigned kind = sd->kind, flags = decode_flags(sd, c, &kind);
	struct resolved r1, r2 = { .res = R_SKIP };
	long long op;

	adopt_fdcwd(im, p, c, sd->dfd);
	adopt_fdcwd(im, p, c, sd->dfd2);
	if (resolve(im, p, c, sd->dfd, sd->path, &r1) >= R_SKIP)
		return;
	if (sd->type == S_SYMLINK)
		symlink_target(im, c, sd->path2, &r2);
	else if (sd->path2 >= 0 && resolve(im, p, c, sd->dfd2, sd->path2, &r2) == R_OK)
		flags |= r2.slash ? DCT_F_SLASH2 : 0;
	if (sd->path2 >= 0 && r2.res >= R_SKIP) {
		free(r1.rel);
		return;
	}
	flags |= r1.slash ? DCT_F_SLASH : 0;
	if (r2.res == R_PENDING)
		flags |= r2.slash ? DCT_F_SLASH2 : 0;
	op = add_op(im, p, kind, flags, err, line);
	if (op < 0) {
		free(r1.rel);
		free(r2.rel);
		return;
	}
	attach(im, p, (uint64_t)op, 0, &r1);
	attach(im, p, (uint64_t)op, 1, &r2);
}

static void do_chdir(struct dct_importer *im, struct proc *p,
		     const struct dct_call *c, int err, uint64_t line)
{
	struct resolved r;
	enum res s = resolve(im, p, c, -1, 0, &r);
	long long op;

	if (s == R_SKIP)
		return;
	if (s == R_FAIL) {
		if (err == 0)
			lose_cwd(im, p);
		return;
	}
	op = add_op(im, p, DCT_CHDIR, r.slash ? DCT_F_SLASH : 0, err, line);
	if (err == 0 && s == R_OK) {
		/* pending paths stay only if the fork can still resolve them */
		if (!p->cwd && !p->base_from_parent)
			drop_pending(im, p);
		set_str(im, &p->cwd, im->paths.blob + im->paths.off[r.id]);
	} else if (err == 0) {
		set_str(im, &p->cwd_rel, r.rel);
	}
	if (op >= 0)
		attach(im, p, (uint64_t)op, 0, &r);
	free(r.rel);
}

static void do_fchdir(struct dct_importer *im, struct proc *p,
		      const struct dct_call *c, int err)
{
	bool annot;

	if (err != 0)
		return;
	if (parse_fd(im, c, 0, &annot) == FD_NUM && annot && norm_abuf(im)) {
		if (!p->cwd && !p->base_from_parent)
			drop_pending(im, p);
		set_str(im, &p->cwd, im->abuf);
	} else {
		lose_cwd(im, p);
	}
}

static void do_getcwd(struct dct_importer *im, struct proc *p, const struct dct_call *c)
{
	long n;

	if (c->ret != DCT_RET_NUM || c->value <= 0 || c->nargs < 1)
		return;
	n = dct_decode_string(c->args[0], im->abuf, sizeof(im->abuf));
	/* "(unreachable)/x" names no directory we could walk to */
	if (n > 0 && im->abuf[0] == '/' && strlen(im->abuf) == (size_t)n && norm_abuf(im))
		adopt_cwd(im, p, im->abuf);
}

/* The process a clone returned: one already running, or a new one. */
static struct proc *fork_child(struct dct_importer *im, struct proc *parent, uint32_t pid)
{
	struct proc *c = find_proc(im, pid);

	if (c && c->state == LIVE && !c->linked && c->index > parent->index) {
		/* its first lines came before the clone returned */
		if (c->base_from_parent && parent->cwd)
			learn_base(im, c, parent->cwd);
	} else {
		c = new_proc(im, pid);
		if (!c)
			return NULL;
		if (parent->cwd)
			set_str(im, &c->cwd, parent->cwd);
	}
	c->linked = true;
	c->parent = (int32_t)parent->index;
	c->base_from_parent = false;
	return c;
}

static void do_fork(struct dct_importer *im, struct proc *p, struct dct_span name,
		    struct dct_span text, const struct dct_call *c, uint64_t entry)
{
	unsigned flags = 0;
	struct proc *child;
	long long op;

	if (c->ret != DCT_RET_NUM || c->value <= 0 || c->value > UINT32_MAX)
		return;
	if (has_word(name, "vfork") || has_word(text, "CLONE_VFORK"))
		flags |= DCT_F_VFORK;
	if (has_word(text, "CLONE_THREAD"))
		flags |= DCT_F_THREAD;
	op = add_op(im, p, DCT_FORK, flags, 0, entry);
	if (op < 0)
		return;
	child = fork_child(im, p, (uint32_t)c->value);
	if (child)
		p->ops[op].child = child->index;
	else
		p->ops[op].kind = DEAD_OP;	/* out of memory: the import fails */
}

static void do_wait(struct dct_importer *im, struct proc *p, uint32_t pid, uint64_t line)
{
	struct proc *c = find_proc(im, pid);
	long long op;

	if (!c || c->parent != (int32_t)p->index || c->state == REAPED) {
		im->sum.wait_unmatched++;
		return;
	}
	op = add_op(im, p, DCT_WAIT, 0, 0, line);
	if (op < 0)
		return;
	p->ops[op].child = c->index;
	c->state = REAPED;
}

/* waitid(P_..., id, {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=N, ...}, ...) */
static void do_waitid(struct dct_importer *im, struct proc *p, struct dct_span text,
		      const struct dct_call *c, uint64_t line)
{
	const char *end = text.p + text.len, *s;
	uint32_t pid;

	if (c->ret != DCT_RET_NUM || c->value != 0 || has_word(text, "WNOWAIT") ||
	    !(has_word(text, "CLD_EXITED") || has_word(text, "CLD_KILLED") ||
	      has_word(text, "CLD_DUMPED")))
		return;
	s = memmem(text.p, text.len, "si_pid=", 7);
	if (s && parse_u32(s + 7, end, &pid) && pid)
		do_wait(im, p, pid, line);
}

static void do_exit(struct dct_importer *im, struct proc *p, uint64_t line)
{
	if (p->has_exit)
		return;
	add_op(im, p, DCT_EXIT, 0, 0, line);
	p->has_exit = true;
	if (p->state == LIVE)
		p->state = EXITED;
}

/* One complete call: name(text), made at line entry, completed at line. */
static void handle_call(struct dct_importer *im, struct proc *p, struct dct_span name,
			struct dct_span text, uint64_t entry, uint64_t line)
{
	const struct sysdesc *sd = find_sys(name.p, name.len);
	struct dct_call c;
	int err;

	if (!sd) {
		count_unknown(im, name.p, name.len);
		return;
	}
	if (sd->type == S_IGNORE) {
		im->sum.ignored_calls++;
		return;
	}
	if (dct_parse_call(text.p, text.len, &c) < 0) {
		count_malformed(im);
		return;
	}
	err = call_err(im, &c);
	if (err == -2) {
		im->sum.restarted++;
		return;
	}
	switch (sd->type) {
	case S_PATH:
	case S_SYMLINK:
		do_path(im, p, sd, &c, err, line);
		break;
	case S_CHDIR:
		do_chdir(im, p, &c, err, line);
		break;
	case S_FCHDIR:
		do_fchdir(im, p, &c, err);
		break;
	case S_GETCWD:
		do_getcwd(im, p, &c);
		break;
	case S_FORK:
		do_fork(im, p, name, text, &c, entry);
		break;
	case S_WAIT:
		if (c.ret == DCT_RET_NUM && c.value > 0 && c.value <= UINT32_MAX)
			do_wait(im, p, (uint32_t)c.value, line);
		break;
	case S_WAITID:
		do_waitid(im, p, text, &c, line);
		break;
	case S_EXIT:
		do_exit(im, p, line);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Lines                                                               */
/* ------------------------------------------------------------------ */

static void on_unfinished(struct dct_importer *im, const struct dct_line *l)
{
	struct proc *p = live_proc(im, l->pid);

	if (!p)
		return;
	p->last_line = clamp_line(im->lineno);
	if (p->unf) {
		count_malformed(im);	/* the previous one never resumed */
		free(p->unf);
	}
	p->unf = malloc(l->text_len + 1);
	if (!p->unf) {
		im->oom = true;
		return;
	}
	memcpy(p->unf, l->text, l->text_len);
	p->unf[l->text_len] = '\0';
	p->unf_len = l->text_len;
	memcpy(p->unf_name, l->name, l->name_len);
	p->unf_name[l->name_len] = '\0';
	p->unf_line = clamp_line(im->lineno);
}

/* Rejoin "<... name resumed>rest" with its unfinished half, then handle it. */
static void on_resumed(struct dct_importer *im, const struct dct_line *l)
{
	struct proc *p = find_proc(im, l->pid);
	const char *rest = l->text;
	size_t rlen = l->text_len, n;
	static const char unf[] = " <unfinished ...>";

	if (!p || !p->unf || strlen(p->unf_name) != l->name_len ||
	    memcmp(p->unf_name, l->name, l->name_len) != 0) {
		count_malformed(im);
		return;
	}
	/* "<... wait4 resumed> <unfinished ...>) = ?": it died in the call */
	if (rlen >= sizeof(unf) - 1 && memcmp(rest, unf, sizeof(unf) - 1) == 0)
		rest += sizeof(unf) - 1, rlen -= sizeof(unf) - 1;
	n = p->unf_len + rlen;
	if (!grow((void **)&im->join, &im->join_cap, n + 1, 1)) {
		im->oom = true;
		return;
	}
	memcpy(im->join, p->unf, p->unf_len);
	memcpy(im->join + p->unf_len, rest, rlen);
	im->join[n] = '\0';
	free(p->unf);
	p->unf = NULL;
	p->last_line = clamp_line(im->lineno);
	handle_call(im, p, (struct dct_span){ l->name, l->name_len },
		    (struct dct_span){ im->join, n }, p->unf_line, im->lineno);
}

/*
 * Would the line parse with a pid in front?  strace writes none without
 * -f, with -ff, nor for a lone process when it writes to stderr: such a
 * log does not say which process made a call.
 */
static bool unprefixed(const char *line, size_t len)
{
	const char *p = skip_spaces(line, line + len), *end = line + len;
	struct dct_line l;
	struct dct_call c;

	while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	/* strace's own words only: a diff's "--- a/x" is no strace line */
	if (has_prefix(p, end, "--- SIG") || has_prefix(p, end, "+++ exited with ") ||
	    has_prefix(p, end, "+++ killed by "))
		return true;
	if (has_prefix(p, end, "<... "))
		return parse_resumed(p, end, &l) == 0;
	if (parse_call_line(p, end, &l) < 0)
		return false;
	return l.type == DCT_LINE_UNFINISHED ||
	       dct_parse_call(l.text, l.text_len, &c) == 0;
}

void dct_importer_line(struct dct_importer *im, const char *line, size_t len)
{
	struct dct_line l;
	struct proc *p;

	im->lineno++;
	im->sum.lines++;
	im->sum.bytes += len + 1;
	if (im->oom)
		return;
	if (dct_parse_line(line, len, &l) < 0) {
		count_malformed(im);
		if (unprefixed(line, len))
			im->sum.unprefixed++;
		return;
	}
	switch (l.type) {
	case DCT_LINE_BLANK:
		im->sum.blank++;
		break;
	case DCT_LINE_CALL:
		p = live_proc(im, l.pid);
		if (p) {
			p->last_line = clamp_line(im->lineno);
			handle_call(im, p, (struct dct_span){ l.name, l.name_len },
				    (struct dct_span){ l.text, l.text_len },
				    im->lineno, im->lineno);
		}
		break;
	case DCT_LINE_UNFINISHED:
		on_unfinished(im, &l);
		break;
	case DCT_LINE_RESUMED:
		on_resumed(im, &l);
		break;
	case DCT_LINE_SIGNAL:
		im->sum.signals++;
		break;
	case DCT_LINE_EXIT:
		p = find_proc(im, l.pid);
		if (p)
			do_exit(im, p, im->lineno);
		break;
	default:
		break;
	}
}

/* A line too long to keep: counted, never parsed. */
static void overlong_line(struct dct_importer *im)
{
	im->lineno++;
	im->sum.lines++;
	count_malformed(im);
}

/* ------------------------------------------------------------------ */
/* Finishing: from per-process state to a trace                        */
/* ------------------------------------------------------------------ */

#ifndef NDEBUG
/* bsearch needs systab in strcmp order; an edit out of order would lose calls. */
static bool systab_sorted(void)
{
	for (size_t i = 1; i < sizeof(systab) / sizeof(systab[0]); i++)
		if (strcmp(systab[i - 1].name, systab[i].name) >= 0)
			return false;
	return true;
}
#endif

struct dct_importer *dct_importer_new(void)
{
	assert(systab_sorted());
	return calloc(1, sizeof(struct dct_importer));
}

void dct_importer_free(struct dct_importer *im)
{
	if (!im)
		return;
	for (size_t i = 0; i < im->nprocs; i++)
		free_proc(im->procs[i]);
	free(im->procs);
	free(im->pidmap);
	free(im->pidkey);
	free(im->join);
	strtab_free(&im->paths);
	free(im);
}

/* Close every process: its pending call, its pending paths, its EXIT. */
static void finish_procs(struct dct_importer *im)
{
	for (size_t i = 0; i < im->nprocs && !im->oom; i++) {
		struct proc *p = im->procs[i];

		if (p->unf) {
			if (!strcmp(p->unf_name, "exit_group") || !strcmp(p->unf_name, "exit"))
				do_exit(im, p, p->unf_line);
			else
				im->sum.unfinished_at_eof++;
		}
		drop_pending(im, p);
		if (!p->has_exit && add_op(im, p, DCT_EXIT, DCT_F_IMPLIED, 0,
					   p->last_line) >= 0)
			p->has_exit = true;
		if (p->parent < 0 && i > 0)
			im->sum.orphans++;
	}
}

static int cmp_unknown(const void *a, const void *b)
{
	const struct unknown_name *x = a, *y = b;

	return (x->count < y->count) - (x->count > y->count);
}

static void fill_summary(struct dct_importer *im, const struct dct_trace *t)
{
	struct dct_import_summary *s = &im->sum;

	s->processes = t->nprocs;
	s->ops = t->nops;
	s->distinct_paths = t->npaths;
	for (uint64_t i = 0; i < t->nops; i++) {
		const struct dct_op *o = &t->ops[i];

		s->ops_by_kind[o->kind]++;
		if (dct_kind_paths(o->kind) == 0)
			continue;
		s->path_ops++;
		s->path_ops_failed += o->err != 0;
		s->path_ops_enoent += o->err == ENOENT;
	}
	qsort(im->unknown, im->nunknown, sizeof(im->unknown[0]), cmp_unknown);
	for (size_t i = 0; i < im->nunknown && i < DCT_TOP_UNKNOWN; i++) {
		memcpy(s->unknown[i].name, im->unknown[i].name, sizeof(s->unknown[i].name));
		s->unknown[i].count = im->unknown[i].count;
	}
}

static bool alloc_trace(struct dct_importer *im, struct dct_trace *t)
{
	uint64_t n = 0;

	for (size_t i = 0; i < im->nprocs; i++)
		for (size_t k = 0; k < im->procs[i]->nops; k++)
			n += im->procs[i]->ops[k].kind != DEAD_OP;
	t->nprocs = (uint32_t)im->nprocs;
	t->nops = n;
	t->npaths = im->paths.n;
	t->procs = calloc(im->nprocs ? im->nprocs : 1, sizeof(*t->procs));
	t->ops = malloc((n ? n : 1) * sizeof(*t->ops));
	t->paths = malloc((im->paths.n ? im->paths.n : 1) * sizeof(*t->paths));
	return t->procs && t->ops && t->paths;
}

/* Ops become one array, process after process; links become op indices. */
static void copy_ops(struct dct_importer *im, struct dct_trace *t)
{
	uint64_t cur = 0;

	for (size_t i = 0; i < im->nprocs; i++)
		t->procs[i].fork_op = t->procs[i].wait_op = DCT_NO_OP;
	for (size_t i = 0; i < im->nprocs; i++) {
		struct proc *p = im->procs[i];
		struct dct_proc *tp = &t->procs[i];

		tp->pid = p->pid;
		tp->parent = p->parent;
		tp->first_op = cur;
		for (size_t k = 0; k < p->nops; k++) {
			const struct dct_op *o = &p->ops[k];

			if (o->kind == DEAD_OP)
				continue;
			if (o->kind == DCT_FORK)
				t->procs[o->child].fork_op = cur;
			else if (o->kind == DCT_WAIT)
				t->procs[o->child].wait_op = cur;
			t->ops[cur++] = *o;
		}
		tp->nops = cur - tp->first_op;
		free(p->ops);		/* keep the peak to one copy and a bit */
		p->ops = NULL;
		p->nops = p->cap = 0;
	}
}

static void take_paths(struct dct_importer *im, struct dct_trace *t)
{
	struct strtab *s = &im->paths;

	t->blob = s->blob ? s->blob : calloc(1, 1);
	t->blob_len = s->len;
	for (uint32_t i = 0; i < s->n; i++)
		t->paths[i] = t->blob + s->off[i];
	s->blob = NULL;
	s->len = s->cap = 0;
}

int dct_importer_finish(struct dct_importer *im, struct dct_trace **out,
			struct dct_import_summary *sum, char *err, size_t errlen)
{
	struct dct_trace *t;
	char why[200];

	*out = NULL;
	finish_procs(im);
	t = calloc(1, sizeof(*t));
	if (im->oom || !t || !alloc_trace(im, t)) {
		snprintf(err, errlen, "out of memory");
		dct_free(t);
		return -1;
	}
	copy_ops(im, t);
	take_paths(im, t);
	fill_summary(im, t);
	if (sum)
		*sum = im->sum;
	if (!t->blob || dct_validate(t, why, sizeof(why))) {
		snprintf(err, errlen, "internal error, trace invalid: %s",
			 t->blob ? why : "out of memory");
		dct_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Reading the log                                                     */
/* ------------------------------------------------------------------ */

struct logreader {
	FILE *f;
	bool xz, in_eof, done;
	lzma_stream lz;
	unsigned char *in;
	size_t held;		/* plain: bytes read while sniffing, not yet given */
};

static const unsigned char xz_magic[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 };

static int lr_open(struct logreader *r, const char *path, char *err, size_t errlen)
{
	struct stat st;
	size_t n;

	memset(r, 0, sizeof(*r));
	r->f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	r->in = malloc(READ_CHUNK);
	if (!r->f || !r->in) {
		snprintf(err, errlen, "%s: %s", path, r->f ? "out of memory" : strerror(errno));
		return -1;
	}
	if (fstat(fileno(r->f), &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: is a directory, not an strace log", path);
		return -1;
	}
	/* sniff by content, not name: pipes and misnamed files work too */
	n = fread(r->in, 1, sizeof(xz_magic), r->f);
	r->xz = n == sizeof(xz_magic) && memcmp(r->in, xz_magic, n) == 0;
	if (!r->xz) {
		r->held = n;
		return 0;
	}
	r->lz = (lzma_stream)LZMA_STREAM_INIT;
	if (lzma_stream_decoder(&r->lz, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
		snprintf(err, errlen, "%s: cannot start the xz decoder", path);
		return -1;
	}
	r->lz.next_in = r->in;
	r->lz.avail_in = n;
	return 0;
}

static void lr_close(struct logreader *r)
{
	if (r->xz)
		lzma_end(&r->lz);
	if (r->f && r->f != stdin)
		fclose(r->f);
	free(r->in);
}

static long lr_read_plain(struct logreader *r, char *buf, size_t cap)
{
	size_t n;

	if (r->held) {
		n = r->held < cap ? r->held : cap;
		memcpy(buf, r->in, n);
		memmove(r->in, r->in + n, r->held - n);
		r->held -= n;
		return (long)n;
	}
	n = fread(buf, 1, cap, r->f);
	return n == 0 && ferror(r->f) ? -1 : (long)n;
}

static const char *lzma_why(lzma_ret ret)
{
	switch (ret) {
	case LZMA_MEM_ERROR: return "out of memory";
	case LZMA_FORMAT_ERROR: return "not xz data";
	case LZMA_DATA_ERROR: return "corrupt xz data";
	case LZMA_BUF_ERROR: return "truncated xz data";
	default: return "xz decoder error";
	}
}

/* Up to cap bytes of log text; 0 at the end, -1 on error (err set). */
static long lr_read(struct logreader *r, char *buf, size_t cap, char *err, size_t errlen)
{
	if (!r->xz) {
		long n = lr_read_plain(r, buf, cap);

		if (n < 0)
			snprintf(err, errlen, "read error: %s", strerror(errno));
		return n;
	}
	if (r->done)
		return 0;
	r->lz.next_out = (uint8_t *)buf;
	r->lz.avail_out = cap;
	for (;;) {
		lzma_ret ret;

		if (r->lz.avail_in == 0 && !r->in_eof) {
			r->lz.next_in = r->in;
			r->lz.avail_in = fread(r->in, 1, READ_CHUNK, r->f);
			if (r->lz.avail_in == 0 && ferror(r->f)) {
				snprintf(err, errlen, "read error: %s", strerror(errno));
				return -1;
			}
			r->in_eof = r->lz.avail_in == 0;
		}
		ret = lzma_code(&r->lz, r->in_eof ? LZMA_FINISH : LZMA_RUN);
		if (ret == LZMA_STREAM_END)
			r->done = true;
		else if (ret != LZMA_OK) {
			snprintf(err, errlen, "%s", lzma_why(ret));
			return -1;
		}
		if (r->lz.avail_out < cap || r->done)
			return (long)(cap - r->lz.avail_out);
	}
}

/* Hand every complete line in buf[0, *len) to im; keep the partial tail. */
static void feed_lines(struct dct_importer *im, char *buf, size_t *len, bool *skipping)
{
	char *s = buf, *e = buf + *len, *nl;
	size_t rest;

	while ((nl = memchr(s, '\n', (size_t)(e - s)))) {
		if (*skipping)
			*skipping = false;	/* the end of an overlong line */
		else if ((size_t)(nl - s) > LINE_MAX_BYTES)
			overlong_line(im);	/* the same limit, however it was read */
		else
			dct_importer_line(im, s, (size_t)(nl - s));
		s = nl + 1;
	}
	rest = (size_t)(e - s);
	if (!*skipping && rest > LINE_MAX_BYTES) {
		overlong_line(im);
		*skipping = true;
	}
	if (*skipping)
		rest = 0;
	memmove(buf, s, rest);
	*len = rest;
}

static int read_log(struct dct_importer *im, struct logreader *r, FILE *progress,
		    char *err, size_t errlen)
{
	size_t cap = LINE_MAX_BYTES + READ_CHUNK, len = 0;
	char *buf = malloc(cap);
	bool skipping = false;
	uint64_t next_report = 64u << 20;
	long n;

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	while ((n = lr_read(r, buf + len, cap - len, err, errlen)) > 0) {
		len += (size_t)n;
		feed_lines(im, buf, &len, &skipping);
		if (progress && im->sum.bytes >= next_report) {
			fprintf(progress, "import: %" PRIu64 " lines, %" PRIu64 " MB\n",
				im->sum.lines, im->sum.bytes >> 20);
			next_report += 64u << 20;
		}
	}
	if (n == 0 && len > 0 && !skipping)
		dct_importer_line(im, buf, len);	/* a last line without '\n' */
	free(buf);
	return n < 0 ? -1 : 0;
}

#define STRACE_HOW "strace -f -y -qq -e trace=%%file,%%process,chdir,fchdir -o LOG COMMAND"

int dct_import_usable(const struct dct_import_summary *s, char *err, size_t errlen)
{
	uint64_t lines = s->lines - s->blank;
	uint64_t bad = s->malformed < lines ? s->malformed : lines;

	if (lines == 0) {
		if (s->lines)
			snprintf(err, errlen, "empty log: %" PRIu64 " lines, all blank; "
				 "capture one with " STRACE_HOW, s->lines);
		else
			snprintf(err, errlen, "empty log: not one line in it; capture "
				 "one with " STRACE_HOW);
		return -1;
	}
	/* whose calls they are is lost: the trace would miss a process's share */
	if (s->unprefixed) {
		snprintf(err, errlen, "%" PRIu64 " of %" PRIu64 " lines have no process "
			 "id in front: strace ran without -f (or with -ff, or wrote to "
			 "stderr, not to -o LOG); capture with " STRACE_HOW,
			 s->unprefixed, lines);
		return -1;
	}
	if (s->processes == 0) {
		snprintf(err, errlen, "not an strace log: none of its %" PRIu64 " lines "
			 "is a system call as strace -f writes it (\"PID name(args) = "
			 "result\"); capture one with " STRACE_HOW, lines);
		return -1;
	}
	if (bad * 100 > lines * DCT_MALFORMED_PERCENT) {
		snprintf(err, errlen, "%" PRIu64 " of %" PRIu64 " lines are malformed "
			 "(the first is line %" PRIu64 "); more than %d%% is refused: "
			 "not a log of " STRACE_HOW, bad, lines, s->malformed_first_line,
			 DCT_MALFORMED_PERCENT);
		return -1;
	}
	if (s->path_ops == 0) {
		snprintf(err, errlen, "no path lookups in its %" PRIu64 " lines: nothing "
			 "to replay; capture with " STRACE_HOW, lines);
		return -1;
	}
	return 0;
}

int dct_import_check_output(const char *out_trace, char *err, size_t errlen)
{
	struct dct_out o;

	if (dct_out_open(&o, out_trace, err, errlen))
		return -1;
	dct_out_abandon(&o);
	return 0;
}

/* Read the log into im; the trace goes to out if the log is usable.  0 or -1. */
static int import_into(struct dct_importer *im, struct logreader *r,
		       struct dct_out *out, const char *log,
		       struct dct_import_summary *sum, FILE *progress,
		       char *err, size_t errlen)
{
	struct dct_import_summary s;
	struct dct_trace *t = NULL;
	char why[512];
	int rc = -1;

	if (read_log(im, r, progress, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", log, why);
	} else if (dct_importer_finish(im, &t, &s, err, errlen) == 0) {
		if (sum)
			*sum = s;
		if (dct_import_usable(&s, why, sizeof(why)) == 0) {
			rc = dct_out_write(out, t, err, errlen);
			dct_free(t);
			return rc;
		}
		snprintf(err, errlen, "%s: %s", log, why);
	}
	dct_out_abandon(out);
	dct_free(t);
	return rc;
}

int dct_import(const char *log, const char *out_trace,
	       struct dct_import_summary *sum, FILE *progress,
	       char *err, size_t errlen)
{
	struct dct_importer *im = dct_importer_new();
	struct dct_out out;
	struct logreader r;
	int rc = -1;

	if (!im) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (lr_open(&r, log, err, errlen) == 0 &&
	    dct_out_open(&out, out_trace, err, errlen) == 0)
		rc = import_into(im, &r, &out, log, sum, progress, err, errlen);
	lr_close(&r);
	dct_importer_free(im);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Summary                                                             */
/* ------------------------------------------------------------------ */

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

void dct_import_summary_print(FILE *f, const struct dct_import_summary *s)
{
	fprintf(f, "log:          %" PRIu64 " lines (%" PRIu64 " blank), %.1f MB\n",
		s->lines, s->blank, (double)s->bytes / 1e6);
	fprintf(f, "processes:    %" PRIu64 " (%" PRIu64 " without a parent"
		" besides the first)\n", s->processes, s->orphans);
	fprintf(f, "paths:        %" PRIu64 " distinct\n", s->distinct_paths);
	fprintf(f, "ops:          %" PRIu64 "\n", s->ops);
	for (unsigned k = 0; k < DCT_NKINDS; k++)
		if (s->ops_by_kind[k])
			fprintf(f, "  %-10s %10" PRIu64 "\n", dct_kind_name(k),
				s->ops_by_kind[k]);
	fprintf(f, "path ops:     %" PRIu64 ", failed %" PRIu64 " (%.1f%%),"
		" ENOENT %" PRIu64 " (%.1f%%)\n", s->path_ops, s->path_ops_failed,
		pct(s->path_ops_failed, s->path_ops), s->path_ops_enoent,
		pct(s->path_ops_enoent, s->path_ops));
	fprintf(f, "malformed:    %" PRIu64 " lines", s->malformed);
	if (s->malformed)
		fprintf(f, " (first: line %" PRIu64 ")", s->malformed_first_line);
	fprintf(f, "\nunknown:      %" PRIu64 " calls", s->unknown_calls);
	for (int i = 0; i < DCT_TOP_UNKNOWN && s->unknown[i].count; i++)
		fprintf(f, "%s%s %" PRIu64, i ? ", " : " (", s->unknown[i].name,
			s->unknown[i].count);
	fprintf(f, "%s\n", s->unknown[0].count ? ")" : "");
	fprintf(f, "ignored:      %" PRIu64 " calls without a path lookup\n",
		s->ignored_calls);
	fprintf(f, "skipped:      %" PRIu64 " calls with an empty or NULL path (no lookup)\n",
		s->skipped_fd_calls);
	fprintf(f, "unresolved:   %" PRIu64 " relative paths, directory unknown;"
		" %" PRIu64 " too long\n", s->unresolved, s->too_long);
	fprintf(f, "restarted:    %" PRIu64 "; unfinished at end: %" PRIu64
		"; unmatched waits: %" PRIu64 "\n", s->restarted,
		s->unfinished_at_eof, s->wait_unmatched);
	fprintf(f, "cwd:          %" PRIu64 " corrections from AT_FDCWD annotations\n",
		s->cwd_corrections);
	fprintf(f, "signals:      %" PRIu64 " lines\n", s->signals);
}

void dct_import_summary_brief(FILE *f, const struct dct_import_summary *s)
{
	fprintf(f, "# procs=%" PRIu64 " ops=%" PRIu64 " paths=%" PRIu64
		" malformed=%" PRIu64 " unknown=%" PRIu64 " ignored=%" PRIu64
		" skipped=%" PRIu64 " unresolved=%" PRIu64 " too_long=%" PRIu64
		" restarted=%" PRIu64 " unfinished=%" PRIu64 " orphans=%" PRIu64
		" unmatched_waits=%" PRIu64 " cwd_corrections=%" PRIu64
		" signals=%" PRIu64 "\n", s->processes, s->ops, s->distinct_paths,
		s->malformed, s->unknown_calls, s->ignored_calls,
		s->skipped_fd_calls, s->unresolved, s->too_long, s->restarted,
		s->unfinished_at_eof, s->orphans, s->wait_unmatched,
		s->cwd_corrections, s->signals);
}
