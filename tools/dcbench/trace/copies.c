/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * copies.c - pass 5 of replay's preparation: the private roots (the top
 * directory of every changed name), and per copy k the paths it replays,
 * with ROOT.k for ROOT when k >= 1.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcache.h"
#include "trace/replay_internal.h"
#include "trace/util.h"

int rp_pass_roots(struct rp_prep *p, char *err, size_t errlen)
{
	size_t nroots = 0;

	for (size_t ni = 1; ni < p->nnodes; ni++) {
		uint32_t a = (uint32_t)ni;

		if (!(p->nodes[ni].flags & N_CHANGED))
			continue;
		while (p->nodes[a].depth > 2)
			a = p->nodes[a].parent;
		p->nodes[a].flags |= N_ROOT;
	}
	/* keep the outermost; mark everything below a root private */
	for (size_t ni = 1; ni < p->nnodes; ni++) {
		struct node *n = &p->nodes[ni];
		bool under = (p->nodes[n->parent].flags & N_PRIVATE) != 0;

		if (under)
			n->flags &= (uint16_t)~N_ROOT;
		if (under || (n->flags & N_ROOT))
			n->flags |= N_PRIVATE;
		if (n->flags & N_ROOT)
			nroots++;
	}
	p->roots = calloc(nroots + 1, sizeof(*p->roots));
	if (!p->roots) {
		dct_fail(err, errlen, "out of memory");
		return -1;
	}
	for (size_t ni = 1; ni < p->nnodes; ni++) {
		char path[DC_PATH_MAX + 1];
		size_t pos = sizeof(path) - 1;

		if (!(p->nodes[ni].flags & N_ROOT))
			continue;
		path[pos] = '\0';
		for (uint32_t a = (uint32_t)ni; a != 0; a = p->nodes[a].parent) {
			size_t l = p->nodes[a].len;

			if (l + 1 > pos)
				break;
			pos -= l;
			memcpy(path + pos, p->names + p->nodes[a].name, l);
			path[--pos] = '/';
		}
		p->roots[p->info.nroots] = arena_strndup(&p->arena, path + pos,
							 sizeof(path) - 1 - pos);
		if (!p->roots[p->info.nroots]) {
			dct_fail(err, errlen, "out of memory");
			return -1;
		}
		p->info.nroots++;
	}
	p->info.roots = (const char *const *)p->roots;
	return 0;
}

/* The name a node has in copy k (roots get ".k"), into buf. */
size_t rp_copy_name(const struct rp_prep *p, uint32_t ni, unsigned k,
			char *buf, size_t size)
{
	const struct node *n = &p->nodes[ni];

	if (k > 0 && (n->flags & N_ROOT))
		return (size_t)snprintf(buf, size, "%s.%u", p->names + n->name, k);
	return (size_t)snprintf(buf, size, "%s", p->names + n->name);
}

/*
 * Path s as copy k sees it, or NULL when it is the same as copy 0's.
 * A path whose text starts with a private root (before any "..") gets the
 * root renamed; one that reaches a private name only lexically is
 * rewritten as its lexical form.
 */
static char *copy_path(struct rp_prep *p, const char *s, uint32_t lexnode, unsigned k,
		       bool *too_long)
{
	char buf[DC_PATH_MAX + 64], name[DC_NAME_MAX + 16];
	const char *q = s;
	uint32_t cur = 0;

	*too_long = false;
	while (*q) {
		const char *e;
		size_t len, nl;

		while (*q == '/')
			q++;
		if (!*q)
			break;
		e = strchr(q, '/');
		len = e ? (size_t)(e - q) : strlen(q);
		if ((len == 2 && q[0] == '.' && q[1] == '.') || len > DC_NAME_MAX)
			break;
		cur = rp_node_find(p, cur, q, len);
		if (cur == NONE)
			break;
		if (p->nodes[cur].flags & N_ROOT) {
			nl = rp_copy_name(p, cur, k, name, sizeof(name));
			if ((size_t)(q - s) + nl + strlen(q + len) >= sizeof(buf)) {
				*too_long = true;
				return NULL;
			}
			snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(q - s), s, name, q + len);
			return arena_strndup(&p->arena, buf, strlen(buf));
		}
		q += len;
	}
	if (lexnode == NONE || lexnode == 0 || !(p->nodes[lexnode].flags & N_PRIVATE))
		return NULL;
	{
		size_t pos = sizeof(buf) - 1;

		buf[pos] = '\0';
		for (uint32_t a = lexnode; a != 0; a = p->nodes[a].parent) {
			size_t l = rp_copy_name(p, a, k, name, sizeof(name));

			if (l + 1 > pos) {
				*too_long = true;
				return NULL;
			}
			pos -= l;
			memcpy(buf + pos, name, l);
			buf[--pos] = '/';
		}
		return arena_strndup(&p->arena, buf + pos, sizeof(buf) - 1 - pos);
	}
}

/* Fill in slash, parent and name for an entry whose s is set. */
static int cpath_finish(struct rp_prep *p, struct cpath *c, uint8_t use)
{
	size_t len = strlen(c->s);
	const char *last;

	if (use & PU_SLASH) {
		char *sl = arena_alloc(&p->arena, len + 2);

		if (!sl)
			return -1;
		memcpy(sl, c->s, len);
		sl[len] = '/';
		sl[len + 1] = '\0';
		c->slash = sl;
	}
	if (!(use & PU_PARENT))
		return 0;
	last = strrchr(c->s, '/');
	if (!last || !last[1] || !strcmp(last + 1, "..") || !strcmp(last + 1, ".") ||
	    strlen(last + 1) > DC_NAME_MAX)
		return 0;	/* no name to create or remove: replayed as a lookup */
	c->parent = last == c->s ? "/" : arena_strndup(&p->arena, c->s, (size_t)(last - c->s));
	if (!c->parent)
		return -1;
	c->name = last + 1;
	c->nlen = (uint32_t)strlen(last + 1);
	return 0;
}

/* Make the path tables of copies [p->ncopies, k). */
int rp_build_copies(struct rp_prep *p, unsigned k, char *err, size_t errlen)
{
	const struct dct_trace *t = p->t;
	struct cpath **cp;

	if (k <= p->ncopies)
		return 0;
	cp = realloc(p->cp, k * sizeof(*cp));
	if (!cp)
		goto oom;
	p->cp = cp;
	for (unsigned c = p->ncopies; c < k; c++) {
		/* a root's new name must not be a name the trace uses */
		for (size_t ni = 1; c > 0 && ni < p->nnodes; ni++) {
			char name[DC_NAME_MAX + 16];
			size_t nl;

			if (!(p->nodes[ni].flags & N_ROOT))
				continue;
			nl = rp_copy_name(p, (uint32_t)ni, c, name, sizeof(name));
			if (nl > DC_NAME_MAX ||
			    rp_node_find(p, p->nodes[ni].parent, name, nl) != NONE) {
				dct_fail(err, errlen, "copy %u: the private root name "
				     "\"%s\" is too long or used by the trace", c, name);
				return -1;
			}
		}
		cp[c] = calloc(t->npaths ? t->npaths : 1, sizeof(**cp));
		if (!cp[c])
			goto oom;
		p->ncopies = c + 1;
		for (uint32_t id = 0; id < t->npaths; id++) {
			struct cpath *e = &cp[c][id];
			const struct pinfo *pi = &p->pi[id];
			bool tl = false;
			char *s = NULL;

			if (!(pi->use & (PU_PATH | PU_TEXT)))
				continue;
			if (c > 0) {
				if (pi->use & PU_PATH)
					s = copy_path(p, t->paths[id],
						      (pi->use & PU_LONGNAME) ? NONE : pi->node,
						      c, &tl);
				else if (t->paths[id][0] == '/')
					s = copy_path(p, t->paths[id], NONE, c, &tl);
				if (!s && !tl) {
					*e = cp[0][id];	/* shared */
					continue;
				}
				if (tl) {
					/* longer than a path may be: resolves to ENAMETOOLONG */
					s = arena_alloc(&p->arena, DC_PATH_MAX + 2);
					if (!s)
						goto oom;
					memset(s, 'x', DC_PATH_MAX + 1);
					s[0] = '/';
					s[DC_PATH_MAX + 1] = '\0';
				}
			}
			e->s = s ? s : t->paths[id];
			if ((pi->use & PU_PATH) && cpath_finish(p, e, pi->use))
				goto oom;
		}
	}
	return 0;
oom:
	dct_fail(err, errlen, "out of memory");
	return -1;
}
