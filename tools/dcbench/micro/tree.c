/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tree.c - the tree every implementation holds: nodes with their parent,
 * name, type and depth, in one array, names in one pool; and loading it
 * from the shipped listing (d<TAB>PATH, f<TAB>PATH<TAB>SIZE,
 * l<TAB>PATH<TAB>TARGET, plain or xz), each directory listed before what
 * it holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hash.h"
#include "micro/micro.h"
#include "micro/util.h"


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

uint32_t tree_add(struct tree *t, uint32_t parent, char type, const char *name,
		  size_t len, const char *target, size_t tlen)
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

struct tree *tree_new(const char *label)
{
	struct tree *t = xcalloc(1, sizeof(*t));

	snprintf(t->label, sizeof(t->label), "%s", label);
	tree_add(t, 0, 'd', "", 0, NULL, 0);
	t->ndirs = 0;	/* the root is not counted */
	return t;
}

void tree_free(struct tree *t)
{
	if (!t)
		return;
	free(t->n);
	free(t->pool);
	free(t->dirs);
	free(t);
}

const char *tname(const struct tree *t, uint32_t i)
{
	return t->pool + t->n[i].name;
}

/* Node i's path relative to the root into buf; its length, or -1 if it
 * does not fit. */
long tree_path(const struct tree *t, uint32_t i, char *buf, size_t size)
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


uint32_t tnode_mode(const struct tnode *x)
{
	return x->type == 'd' ? S_IFDIR | 0755 :
	       x->type == 'l' ? S_IFLNK | 0777 : S_IFREG | 0644;
}

void tree_index_dirs(struct tree *t)
{
	uint32_t k = 0;

	free(t->dirs);
	t->dirs = xmalloc((t->ndirs + 1) * sizeof(*t->dirs));
	for (uint32_t i = 1; i < t->nn; i++)
		if (t->n[i].type == 'd')
			t->dirs[k++] = i;
}


/* The most lines a listing may have: its nodes are numbered in 32 bits,
 * and its directory index has two slots per line.  The kernel tree's
 * listing has under 100,000. */
#define TREE_LINES_MAX	(1ul << 26)

/* Parse the listing: d<TAB>PATH, f<TAB>PATH<TAB>SIZE, l<TAB>PATH<TAB>TARGET. */
struct tree *tree_parse(const char *file)
{
	char *text, *p, *end;
	size_t len, lines = 0;
	struct tree *t;
	uint32_t *slot, mask;
	const char **kp = NULL;		/* directories' paths, by node */
	uint32_t *kl = NULL;
	unsigned long lineno = 0;

	if (slurp(file, &text, &len))
		return NULL;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	if (lines > TREE_LINES_MAX) {
		fprintf(stderr, "dcbench micro: %s: %zu lines, more than a listing "
			"may have (%lu)\n", file, lines, TREE_LINES_MAX);
		free(text);
		return NULL;
	}
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
			uint64_t h = hash_fnv1a(path, plen2, HASH_FNV_OFFSET);

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
			uint64_t h = hash_fnv1a(path, plen, HASH_FNV_OFFSET);
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

