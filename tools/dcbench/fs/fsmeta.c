// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fsmeta.c - `dcbench fsmeta` (docs/dcbench.md): the metadata load of
 * fsload.c on a tree, natively and through each FUSE file system of
 * fsmount.c, the configurations interleaved R times with the page cache
 * dropped before each run; the median run of each by total ops/s, the
 * spread, failed operations, the daemon's CPU time, the ratio to native,
 * and the project's goals for dcfs.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "dcache.h"
#include "fs/fsload.h"
#include "fs/fsmeta.h"
#include "fs/fsmount.h"
#include "json.h"

#define CMD		"fsmeta"
#define MAX_CONFIGS	16	/* kinds, some with their own timeouts */
#define MAX_REPEAT	1000
#define DEFAULT_CONFIGS	"native,rcu,global,rwlock,passthrough_ll,passthrough_ll-dp"

const char dcb_fsmeta_help[] =
"usage: dcbench fsmeta --dir D [--threads N] [--entry-timeout S] [--attr-timeout S]\n"
"                      [--configs LIST] [--repeat R] [--passes P] [--mix K]\n"
"                      [--work DIR] [--dcfs-opts \"OPTS\"] [--passthrough-hp BIN] [--json]\n"
"\n"
"Walks the tree D and lstat()s every entry by its full path on N threads,\n"
"stats every path again P times, then runs a create/rename/stat/unlink mix in\n"
"scratch directories under D (removed afterwards) -- natively, through dcfs\n"
"in each libdcache mode and through libfuse's passthrough_ll example (built\n"
"here from /usr/share/doc/libfuse3-dev/examples, never kept in the tree).\n"
"Reports ops/s per phase, failed operations, the daemon's CPU time, the ratio\n"
"to native, and the goals.\n"
"\n"
"  --dir D            the tree (required): any directory, e.g. a kernel tree\n"
"                     (bench/kernbench-setup.sh unpacks one), or the Linux\n"
"                     listing materialised by bench/fsmeta.sh\n"
"  --threads N        load threads (default 2)\n"
"  --entry-timeout S, --attr-timeout S\n"
"                     the kernel's FUSE name and attribute cache timeouts in\n"
"                     seconds (default 0: every component of every path reaches\n"
"                     the daemon, the setting where its name cache matters).\n"
"                     passthrough_ll has one timeout (-o timeout=): it gets\n"
"                     --entry-timeout (its own default would be 1 s)\n"
"  --configs LIST     of native, rcu, global, rwlock (dcfs modes; dcfs-rcu etc.\n"
"                     also accepted), rcu-uring, global-uring, rwlock-uring\n"
"                     (the mode with dcfs --uring: FUSE over io_uring, needs\n"
"                     the fuse module's enable_uring set to Y), passthrough_ll\n"
"                     (as shipped), passthrough_ll-dp (with dcfs's mount\n"
"                     options default_permissions,allow_other) and\n"
"                     passthrough_hp (with --passthrough-hp; timeouts\n"
"                     @default, a day, or @0, --nocache), passthrough_hp-uring\n"
"                     (the same with -o io_uring); default:\n"
"                     " DEFAULT_CONFIGS "\n"
"                     Each may add @T, its own timeouts (T seconds, or\n"
"                     @default: the daemon's; dcfs picks by its coherence\n"
"                     mode), and a dcfs one /MODE, its --coherence mode:\n"
"                     e.g. rcu@default,rcu@3600/off,passthrough_ll@0\n"
"  --repeat R         runs of each configuration, interleaved (default 5); the\n"
"                     median run by total ops/s is shown, with the mean, sd and\n"
"                     range of the totals\n"
"  --passes P         stat passes over every path (default 2)\n"
"  --mix K            mix rounds per thread, 5 operations each (default 1000)\n"
"  --work DIR         scratch: mount point, passthrough_ll build, daemon logs;\n"
"                     kept (and the build reused).  Default: a new directory\n"
"                     under $TMPDIR or /tmp, removed afterwards\n"
"  --dcfs-opts \"OPTS\" more dcfs options, split at spaces (e.g. \"--threads 2\");\n"
"                     dcfs gets --readdirplus auto first, as the peers have it\n"
"  --passthrough-hp BIN\n"
"                     libfuse's example/passthrough_hp, built from a libfuse\n"
"                     tree by hand (meson): the strongest C peer\n"
"  --json             one JSON document on stdout; the report goes to stderr\n"
"  -h, --help         this help\n"
"\n"
"Before every run: sync, then echo 3 > /proc/sys/vm/drop_caches, so each run\n"
"starts cold.  Needs root (mounts, drop_caches) and /dev/fuse; a native-only\n"
"run works without root, with warm caches.\n"
"Goals (set for --threads 2 with both timeouts 0): dcfs rcu >= 3x\n"
"passthrough_ll in total ops/s, with 0 failed operations; rcu no slower than\n"
"global (within one sd).  With a coherent dcfs (rcu@default: a watcher and\n"
"its hour-long timeouts) and passthrough_ll@0 in --configs: coherent dcfs\n"
">= 20x passthrough_ll at timeout 0, and native <= 1.5x coherent dcfs; a\n"
"ratio is \"not measured\" when either side failed an operation or walked\n"
"another number of entries.\n"
"Exit status: 0 if every run completed with no failed operation; 1 if any\n"
"operation failed, a mount or daemon failed, or D, root or /dev/fuse is\n"
"missing; 2 usage error.  The goals do not change it.\n";

struct run {
	struct fsl_result res;
	double user_s, sys_s;	/* the daemon's CPU time (0 for native) */
	bool daemon_ok;		/* exited 0 when unmounted */
};

struct config {
	const char *kind;	/* fsm_start's name */
	char label[64];		/* native, dcfs-rcu, passthrough_ll@0... */
	bool own_to;		/* @T: its own timeouts (entry and attr) */
	double to;		/* ... T seconds; < 0: the daemon's default */
	char coherence[16];	/* /MODE: dcfs --coherence (empty: its default) */
	struct run *runs;
	unsigned median;	/* index of the median run by total ops/s */
	double med, mean, sd, lo, hi;	/* of the total ops/s */
	uint64_t failed;	/* over all runs */
	bool daemon_ok;		/* in every run */
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

/* ---- options --------------------------------------------------------------- */

/*
 * One name of --configs: KIND[@T][/COHERENCE] -- the fsmount kind; @T its
 * own kernel timeouts, T seconds or "default" (the daemon's own: dcfs
 * chooses by its coherence mode, passthrough_ll 1 s); /COHERENCE dcfs's
 * --coherence mode.  The label shown is the name, dcfs kinds prefixed.
 */
static int parse_config(const char *name, struct config *c)
{
	bool prefixed = !strncmp(name, "dcfs-", 5);
	char kind[32];
	const char *at = strchr(name, '@'), *sl = strchr(name, '/');
	const char *base = prefixed ? name + 5 : name;
	size_t klen = strcspn(base, "@/");
	const char *k;

	if (klen >= sizeof(kind) || (at && sl && sl < at))
		return -1;
	memcpy(kind, base, klen);
	kind[klen] = '\0';
	k = fsm_kind(kind);
	if (!k || (prefixed && !fsm_kind_dcfs(k)) || (at && !strcmp(k, "native")))
		return -1;
	if (!strncmp(k, "passthrough_hp", 14) && at && strcmp(at, "@0") && strcmp(at, "@default"))
		return -1;
	c->kind = k;
	if (at) {
		char t[24], *end;
		size_t tlen = sl ? (size_t)(sl - at - 1) : strlen(at + 1);

		if (tlen == 0 || tlen >= sizeof(t))
			return -1;
		memcpy(t, at + 1, tlen);
		t[tlen] = '\0';
		c->own_to = true;
		if (!strcmp(t, "default")) {
			c->to = -1;
		} else {
			errno = 0;
			c->to = strtod(t, &end);
			if (*end || errno || !isfinite(c->to) || c->to < 0 || c->to > 86400)
				return -1;
		}
	}
	if (sl) {
		enum dc_watch_mode m;

		if (!fsm_kind_dcfs(k) || dc_watch_mode_parse(sl + 1, &m) ||
		    strlen(sl + 1) >= sizeof(c->coherence))
			return -1;
		snprintf(c->coherence, sizeof(c->coherence), "%s", sl + 1);
	}
	snprintf(c->label, sizeof(c->label), "%s%s", fsm_kind_dcfs(k) && !prefixed ?
		 "dcfs-" : "", name);
	return 0;
}

static int parse_configs(const char *list, struct config *cfg, unsigned *n)
{
	char name[48];

	*n = 0;
	for (const char *p = list;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		struct config c = { 0 };
		bool dup = false;

		if (len >= sizeof(name))
			return cli_usage(CMD, "--configs: '%.*s' is too long", (int)len, p);
		memcpy(name, p, len);
		name[len] = '\0';
		if (parse_config(name, &c))
			return cli_usage(CMD, "--configs: '%s' is not native, rcu, global, rwlock, "
					 "rcu-uring, global-uring, rwlock-uring, passthrough_ll, "
					 "passthrough_ll-dp, passthrough_hp or passthrough_hp-uring "
					 "(@0 or @default), "
					 "with @SECONDS or @default and "
					 "(dcfs) /auto|fanotify|inotify|ttl|off after it", name);
		for (unsigned k = 0; k < *n; k++)
			dup |= !strcmp(cfg[k].label, c.label);
		if (dup)
			;
		else if (*n == MAX_CONFIGS)
			return cli_usage(CMD, "--configs: at most %d", MAX_CONFIGS);
		else
			cfg[(*n)++] = c;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/* ---- set-up ------------------------------------------------------------------ */

static bool is_fuse(const struct config *c)
{
	return strcmp(c->kind, "native") != 0;
}

/* Is a equal to b or below it (both canonical)? */
static bool inside(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (n == 1)	/* "/" */
		return true;
	return !strncmp(a, b, n) && (a[n] == '/' || a[n] == '\0');
}

/* dcfs is run from beside dcbench (fsm_start): is it there? */
static bool dcfs_built(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 6);
	char *slash;

	if (n < 0)
		return false;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return false;
	strcpy(slash + 1, "dcfs");
	return access(self, X_OK) == 0;
}

/*
 * Removes what this command put in a work directory it made: regular
 * files (the peer's build, the logs) and the mount point, one level and
 * never into a directory, so a mount still there is never recursed into.
 */
static void remove_work(const char *work, const char *mnt)
{
	char path[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *d;

	rmdir(mnt);
	d = opendir(work);
	if (d) {
		while ((e = readdir(d))) {
			if ((size_t)snprintf(path, sizeof(path), "%s/%s", work, e->d_name) >= sizeof(path))
				continue;
			if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
				unlink(path);
		}
		closedir(d);
	}
	if (rmdir(work) < 0)
		fprintf(stderr, "dcbench fsmeta: could not remove %s: %s\n", work, strerror(errno));
}

/* sync, then drop the page cache, dentries and inodes: a cold start. */
static bool drop_caches(void)
{
	FILE *f;
	bool ok;

	sync();
	f = fopen("/proc/sys/vm/drop_caches", "w");
	if (!f)
		return false;
	ok = fputs("3\n", f) >= 0;
	ok &= fclose(f) == 0;
	return ok;
}

/* ---- statistics -------------------------------------------------------------- */

static double total_rate(const struct run *r)
{
	return fsl_rate(&r->res.total);
}

static void summarise(struct config *c, unsigned repeat)
{
	unsigned order[MAX_REPEAT];
	double sum = 0, ss = 0;

	c->failed = 0;
	c->daemon_ok = true;
	for (unsigned r = 0; r < repeat; r++) {
		double v = total_rate(&c->runs[r]);
		unsigned k = r;

		/* insertion sort by total ops/s: R is small */
		while (k > 0 && total_rate(&c->runs[order[k - 1]]) > v) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = r;
		sum += v;
		c->failed += c->runs[r].res.total.failed;
		c->daemon_ok &= c->runs[r].daemon_ok;
	}
	/* the median, not the best: on a shared machine the best run rewards
	 * where the scheduler happened to put the threads (lower median for
	 * an even R) */
	c->median = order[(repeat - 1) / 2];
	c->med = total_rate(&c->runs[c->median]);
	c->lo = total_rate(&c->runs[order[0]]);
	c->hi = total_rate(&c->runs[order[repeat - 1]]);
	c->mean = sum / repeat;
	for (unsigned r = 0; r < repeat; r++) {
		double d = total_rate(&c->runs[r]) - c->mean;

		ss += d * d;
	}
	c->sd = repeat > 1 ? sqrt(ss / (repeat - 1)) : 0;
}

static struct config *find(struct config *cfg, unsigned n, const char *kind)
{
	/* the kind as it comes, without timeouts or coherence of its own */
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(cfg[i].kind, kind) && !cfg[i].own_to && !cfg[i].coherence[0])
			return &cfg[i];
	return NULL;
}

/* dcfs with a watcher and long timeouts (@default or @3600 and more). */
static struct config *find_coherent(struct config *cfg, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (fsm_kind_dcfs(cfg[i].kind) && cfg[i].own_to &&
		    (cfg[i].to < 0 || cfg[i].to >= 3600) &&
		    strcmp(cfg[i].coherence, "off") && strcmp(cfg[i].coherence, "ttl"))
			return &cfg[i];
	return NULL;
}

/* passthrough_ll at timeout 0, its only setting that shows every change. */
static struct config *find_peer0(struct config *cfg, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(cfg[i].kind, "passthrough_ll") && cfg[i].own_to && cfg[i].to == 0)
			return &cfg[i];
	return NULL;
}

/* ---- the report ------------------------------------------------------------------ */

struct goal {
	char text[320];
	double value, target;
	int met;		/* 1, 0, or -1: not measured */
};

/*
 * Why a ratio of a to b would not compare like with like, or NULL: a side
 * failed operations (a failed readdir prunes a subtree) or walked another
 * number of entries.
 */
static const char *unlike(const struct config *a, const struct config *b)
{
	if (a->failed || b->failed)
		return "a side failed operations";
	if (a->runs[a->median].res.entries != b->runs[b->median].res.entries)
		return "the sides walked different numbers of entries";
	return NULL;
}

/* Coherent dcfs (a watcher, long timeouts) against passthrough_ll at
 * timeout 0 and against native.  Two goals. */
static unsigned coherent_goals(struct config *cfg, unsigned n, struct goal *g)
{
	struct config *coh = find_coherent(cfg, n), *pt0 = find_peer0(cfg, n);
	struct config *nat = find(cfg, n, "native");
	const char *why;

	memset(g, 0, 2 * sizeof(*g));
	g[0].target = 20;
	g[0].value = NAN;
	g[0].met = -1;
	if (!coh || !pt0)
		snprintf(g[0].text, sizeof(g[0].text), "dcfs coherent / passthrough_ll@0 "
			 "(>= 20): not measured (--configs lacks rcu@default or "
			 "passthrough_ll@0)");
	else if ((why = unlike(coh, pt0)) || !(pt0->med > 0))
		snprintf(g[0].text, sizeof(g[0].text), "%s / %s (>= 20): not measured (%s)",
			 coh->label, pt0->label, why ? why : "no rate");
	else {
		g[0].value = coh->med / pt0->med;
		g[0].met = g[0].value >= 20;
		snprintf(g[0].text, sizeof(g[0].text), "%s / %s = %.1f (>= 20)",
			 coh->label, pt0->label, g[0].value);
	}
	g[1].target = 1.5;
	g[1].value = NAN;
	g[1].met = -1;
	if (!coh || !nat)
		snprintf(g[1].text, sizeof(g[1].text), "native / dcfs coherent (<= 1.5): "
			 "not measured (--configs lacks native or rcu@default)");
	else if ((why = unlike(coh, nat)) || !(coh->med > 0))
		snprintf(g[1].text, sizeof(g[1].text), "native / %s (<= 1.5): not measured (%s)",
			 coh->label, why ? why : "no rate");
	else {
		g[1].value = nat->med / coh->med;
		g[1].met = g[1].value <= 1.5;
		snprintf(g[1].text, sizeof(g[1].text), "native / %s = %.2f (<= 1.5)",
			 coh->label, g[1].value);
	}
	return 2;
}

static unsigned goals(struct config *cfg, unsigned n, struct goal *g)
{
	struct config *rcu = find(cfg, n, "rcu"), *glo = find(cfg, n, "global");
	struct config *ptl = find(cfg, n, "passthrough_ll");
	const char *why;

	memset(g, 0, 3 * sizeof(*g));
	g[0].target = 3;
	if (rcu && ptl && (why = unlike(rcu, ptl))) {
		g[0].value = NAN;
		g[0].met = -1;
		snprintf(g[0].text, sizeof(g[0].text),
			 "dcfs rcu / passthrough_ll (>= 3): not measured (%s)", why);
	} else if (rcu && ptl && ptl->med > 0) {
		g[0].value = rcu->med / ptl->med;
		g[0].met = g[0].value >= 3;
		snprintf(g[0].text, sizeof(g[0].text), "dcfs rcu / passthrough_ll = %.2f (>= 3)",
			 g[0].value);
	} else {
		g[0].value = NAN;
		g[0].met = -1;
		snprintf(g[0].text, sizeof(g[0].text),
			 "dcfs rcu / passthrough_ll (>= 3): not measured (--configs lacks rcu or passthrough_ll)");
	}
	g[1].target = 0;
	if (rcu) {
		g[1].value = (double)rcu->failed;
		g[1].met = rcu->failed == 0;
		snprintf(g[1].text, sizeof(g[1].text), "dcfs rcu failed operations = %llu",
			 (unsigned long long)rcu->failed);
	} else {
		g[1].value = NAN;
		g[1].met = -1;
		snprintf(g[1].text, sizeof(g[1].text),
			 "dcfs rcu failed operations = 0: not measured (--configs lacks rcu)");
	}
	/* "no slower than global, within one standard deviation": met when
	 * rcu's median is at least global's less the pooled sd of the two
	 * (0 with one run: then rcu >= global) */
	g[2].target = 1;
	if (rcu && glo && (why = unlike(rcu, glo))) {
		g[2].value = NAN;
		g[2].met = -1;
		snprintf(g[2].text, sizeof(g[2].text),
			 "dcfs rcu / global (>= 1): not measured (%s)", why);
	} else if (rcu && glo && glo->med > 0) {
		double sd = sqrt((rcu->sd * rcu->sd + glo->sd * glo->sd) / 2);

		g[2].value = rcu->med / glo->med;
		g[2].met = rcu->med >= glo->med - sd;
		snprintf(g[2].text, sizeof(g[2].text),
			 "dcfs rcu / global = %.2f (>= 1 within one sd: %.0f >= %.0f - %.0f ops/s)",
			 g[2].value, rcu->med, glo->med, sd);
	} else {
		g[2].value = NAN;
		g[2].met = -1;
		snprintf(g[2].text, sizeof(g[2].text),
			 "dcfs rcu / global (>= 1): not measured (--configs lacks rcu or global)");
	}
	return 3 + coherent_goals(cfg, n, g + 3);
}

/* An "info:" ratio of a to b, when --configs has both: a median over a
 * median, or "not measured" when they did unlike work. */
static void print_info(FILE *f, const char *what, const struct config *a,
		       const struct config *b)
{
	const char *why;

	if (!a || !b)
		return;
	if ((why = unlike(a, b)) || !(b->med > 0))
		fprintf(f, "info: %s: not measured (%s)\n", what, why ? why : "no rate");
	else
		fprintf(f, "info: %s = %.2f\n", what, a->med / b->med);
}

static void print_table(FILE *f, struct config *cfg, unsigned n, unsigned repeat,
			const struct config *nat)
{
	fprintf(f, "%-22s %7s %9s %9s %9s %9s %9s %8s %15s %6s %11s %8s\n", "config",
		"entries", "walk/s", "stat/s", "mix/s", "total/s", "mean", "sd", "total-range",
		"failed", "usr/sys_s", "x_native");
	for (unsigned i = 0; i < n; i++) {
		const struct config *c = &cfg[i];
		const struct run *m = &c->runs[c->median];
		char range[40], cpu[32], x[16];

		snprintf(range, sizeof(range), "%.0f-%.0f", c->lo, c->hi);
		if (is_fuse(c))
			snprintf(cpu, sizeof(cpu), "%.2f/%.2f", m->user_s, m->sys_s);
		else
			snprintf(cpu, sizeof(cpu), "-/-");
		if (nat && nat->med > 0)
			snprintf(x, sizeof(x), "%.3f", c->med / nat->med);
		else
			snprintf(x, sizeof(x), "-");
		fprintf(f, "%-22s %7zu %9.0f %9.0f %9.0f %9.0f %9.0f %8.0f %15s %6llu %11s %8s\n",
			c->label, m->res.entries, fsl_rate(&m->res.phase[FSL_WALK]),
			fsl_rate(&m->res.phase[FSL_STAT]), fsl_rate(&m->res.phase[FSL_MIX]),
			c->med, c->mean, c->sd, range, (unsigned long long)c->failed, cpu, x);
	}
	/* what failed, so that a failure can be told from a slow run */
	for (unsigned i = 0; i < n; i++) {
		const struct config *c = &cfg[i];

		if (!c->failed)
			continue;
		for (unsigned r = 0; r < repeat; r++)
			if (c->runs[r].res.total.failed) {
				fprintf(f, "%s: %llu failed operations; the first in run %u: %s\n",
					c->label, (unsigned long long)c->failed, r + 1,
					c->runs[r].res.total.first_error);
				break;
			}
	}
}

static void phase_json(struct json *j, const char *key, const struct fsl_phase *p)
{
	json_key(j, key);
	json_obj_begin(j);
	json_kuint(j, "ops", p->ops);
	json_knum(j, "seconds", p->seconds);
	json_knum(j, "ops_per_s", fsl_rate(p));
	json_kuint(j, "failed", p->failed);
	if (p->first_error[0])
		json_kstr(j, "first_error", p->first_error);
	else
		json_knull(j, "first_error");
	json_obj_end(j);
}

struct setup {
	const char *dir, *work, *dcfs_opts;
	unsigned threads, passes, mix, repeat;
	double entry_to, attr_to;
	bool dropped;
};

static int write_json(const struct setup *s, struct config *cfg, unsigned n,
		      const struct config *nat, const struct goal *g, unsigned ng,
		      bool goals_apply)
{
	struct json j;

	json_init(&j, stdout);
	json_obj_begin(&j);
	json_kint(&j, "schema_version", JSON_SCHEMA_VERSION);
	json_kstr(&j, "command", CMD);
	json_kstr(&j, "dir", s->dir);
	json_kuint(&j, "entries", cfg[0].runs[0].res.entries);
	json_kuint(&j, "threads", s->threads);
	json_kuint(&j, "passes", s->passes);
	json_kuint(&j, "mix", s->mix);
	json_knum(&j, "entry_timeout", s->entry_to);
	json_knum(&j, "attr_timeout", s->attr_to);
	json_kuint(&j, "repeat", s->repeat);
	json_kbool(&j, "caches_dropped", s->dropped);
	json_kstr(&j, "dcfs_opts", s->dcfs_opts ? s->dcfs_opts : "");
	json_key(&j, "results");
	json_arr_begin(&j);
	for (unsigned i = 0; i < n; i++) {
		const struct config *c = &cfg[i];
		const struct run *m = &c->runs[c->median];

		json_obj_begin(&j);
		json_kstr(&j, "config", c->label);
		json_kstr(&j, "kind", c->kind);
		json_kuint(&j, "median_run", c->median + 1);
		json_knum(&j, "walk_ops_per_s", fsl_rate(&m->res.phase[FSL_WALK]));
		json_knum(&j, "stat_ops_per_s", fsl_rate(&m->res.phase[FSL_STAT]));
		json_knum(&j, "mix_ops_per_s", fsl_rate(&m->res.phase[FSL_MIX]));
		json_knum(&j, "total_ops_per_s", c->med);
		json_knum(&j, "total_mean", c->mean);
		json_knum(&j, "total_sd", c->sd);
		json_knum(&j, "total_min", c->lo);
		json_knum(&j, "total_max", c->hi);
		json_kuint(&j, "failed", c->failed);
		json_knum(&j, "daemon_user_s", is_fuse(c) ? m->user_s : NAN);
		json_knum(&j, "daemon_sys_s", is_fuse(c) ? m->sys_s : NAN);
		json_kbool(&j, "daemon_ok", c->daemon_ok);
		json_knum(&j, "x_native", nat && nat->med > 0 ? c->med / nat->med : NAN);
		json_key(&j, "runs");
		json_arr_begin(&j);
		for (unsigned r = 0; r < s->repeat; r++) {
			const struct run *x = &c->runs[r];

			json_obj_begin(&j);
			json_kuint(&j, "entries", x->res.entries);
			json_key(&j, "phases");
			json_obj_begin(&j);
			for (int p = 0; p < FSL_NPHASES; p++)
				phase_json(&j, fsl_phase_names[p], &x->res.phase[p]);
			json_obj_end(&j);
			phase_json(&j, "total", &x->res.total);
			json_knum(&j, "daemon_user_s", is_fuse(c) ? x->user_s : NAN);
			json_knum(&j, "daemon_sys_s", is_fuse(c) ? x->sys_s : NAN);
			json_kbool(&j, "daemon_ok", x->daemon_ok);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_kbool(&j, "goals_apply", goals_apply);
	json_key(&j, "goals");
	json_arr_begin(&j);
	for (unsigned i = 0; i < ng; i++) {
		json_obj_begin(&j);
		json_kstr(&j, "goal", g[i].text);
		json_knum(&j, "value", g[i].value);
		json_knum(&j, "target", g[i].target);
		if (g[i].met < 0)
			json_knull(&j, "met");
		else
			json_kbool(&j, "met", g[i].met);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	if (json_finish(&j)) {
		fprintf(stderr, "dcbench fsmeta: cannot write to stdout\n");
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* ---- the command ------------------------------------------------------------------ */

int dcb_fsmeta_main(int argc, char **argv)
{
	struct setup s = { .threads = 2, .passes = 2, .mix = 1000, .repeat = 5 };
	struct config cfg[MAX_CONFIGS];
	const char *configs = DEFAULT_CONFIGS, *dir_arg = NULL, *work_arg = NULL;
	char dir[PATH_MAX], work[PATH_MAX], mnt[PATH_MAX + 8];
	unsigned ncfg = 0, step = 0;
	bool json = false, any_fuse = false, root;
	bool made_work = false, made_work_arg = false;	/* a work directory to remove */
	int bad = 0, rc = EXIT_FAIL;
	struct sigaction sa, old_int, old_term, old_hup;
	struct stat st;
	FILE *rep;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "-h") || cli_opt(CMD, argc, argv, &i, "help", false, &v, &bad)) {
			if (bad)
				return bad;
			fputs(dcb_fsmeta_help, stdout);
			return EXIT_OK;
		}
		if (cli_opt(CMD, argc, argv, &i, "dir", true, &v, &bad)) {
			if (bad)
				return bad;
			dir_arg = v;
		} else if (cli_opt(CMD, argc, argv, &i, "threads", true, &v, &bad)) {
			if (bad || (bad = cli_uint(CMD, "--threads", v, 1, 1024, &s.threads)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "entry-timeout", true, &v, &bad)) {
			if (bad || (bad = cli_seconds(CMD, "--entry-timeout", v, &s.entry_to)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "attr-timeout", true, &v, &bad)) {
			if (bad || (bad = cli_seconds(CMD, "--attr-timeout", v, &s.attr_to)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "configs", true, &v, &bad)) {
			if (bad)
				return bad;
			configs = v;
		} else if (cli_opt(CMD, argc, argv, &i, "repeat", true, &v, &bad)) {
			if (bad || (bad = cli_uint(CMD, "--repeat", v, 1, MAX_REPEAT, &s.repeat)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "passes", true, &v, &bad)) {
			if (bad || (bad = cli_uint(CMD, "--passes", v, 0, 1000000, &s.passes)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "mix", true, &v, &bad)) {
			if (bad || (bad = cli_uint(CMD, "--mix", v, 0, 100000000, &s.mix)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "work", true, &v, &bad)) {
			if (bad)
				return bad;
			work_arg = v;
		} else if (cli_opt(CMD, argc, argv, &i, "passthrough-hp", true, &v, &bad)) {
			if (bad)
				return bad;
			if (access(v, X_OK) < 0) {
				fprintf(stderr, "dcbench fsmeta: --passthrough-hp %s: %s\n", v,
					strerror(errno));
				return EXIT_FAIL;
			}
			fsm_set_passthrough_hp(v);
		} else if (cli_opt(CMD, argc, argv, &i, "dcfs-opts", true, &v, &bad)) {
			if (bad)
				return bad;
			s.dcfs_opts = v;
		} else if (cli_opt(CMD, argc, argv, &i, "json", false, &v, &bad)) {
			if (bad)
				return bad;
			json = true;
		} else {
			return cli_usage(CMD, "unknown option or argument '%s'", argv[i]);
		}
	}
	if (!dir_arg)
		return cli_usage(CMD, "which tree? (--dir D)");
	if ((bad = parse_configs(configs, cfg, &ncfg)))
		return bad;
	for (unsigned i = 0; i < ncfg; i++)
		any_fuse |= is_fuse(&cfg[i]);
	rep = json ? stderr : stdout;

	/* What the command needs, checked before anything is made. */
	if (!realpath(dir_arg, dir)) {
		fprintf(stderr, "dcbench fsmeta: --dir %s: %s\n", dir_arg, strerror(errno));
		return EXIT_FAIL;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "dcbench fsmeta: --dir %s: not a directory\n", dir_arg);
		return EXIT_FAIL;
	}
	root = geteuid() == 0;
	if (any_fuse && !root) {
		fprintf(stderr, "dcbench fsmeta: needs root: it mounts file systems and drops "
			"the page cache (only --configs native runs without)\n");
		return EXIT_FAIL;
	}
	if (any_fuse && (stat("/dev/fuse", &st) < 0 || !S_ISCHR(st.st_mode) ||
			 access("/dev/fuse", R_OK | W_OK) < 0)) {
		fprintf(stderr, "dcbench fsmeta: no usable /dev/fuse (modprobe fuse; in a "
			"container, give it /dev/fuse)\n");
		return EXIT_FAIL;
	}
	for (unsigned i = 0; i < ncfg; i++)
		if (fsm_kind_dcfs(cfg[i].kind) && !dcfs_built()) {
			fprintf(stderr, "dcbench fsmeta: no dcfs beside dcbench (make)\n");
			return EXIT_FAIL;
		}

	/* The work directory: never inside the tree, or the native walk
	 * would count it and dcfs would refuse the mount point. */
	if (work_arg) {
		if (mkdir(work_arg, 0755) == 0)
			made_work_arg = true;
		else if (errno != EEXIST) {
			fprintf(stderr, "dcbench fsmeta: --work %s: %s\n", work_arg, strerror(errno));
			return EXIT_FAIL;
		}
		if (!realpath(work_arg, work)) {
			fprintf(stderr, "dcbench fsmeta: --work %s: %s\n", work_arg, strerror(errno));
			return EXIT_FAIL;
		}
	} else {
		const char *tmp = getenv("TMPDIR");

		if (!tmp || !*tmp)
			tmp = "/tmp";
		if ((size_t)snprintf(work, sizeof(work), "%s/dcbench-fsmeta.XXXXXX", tmp) >=
		    sizeof(work) || !mkdtemp(work)) {
			fprintf(stderr, "dcbench fsmeta: cannot make a work directory under %s: %s\n",
				tmp, strerror(errno));
			return EXIT_FAIL;
		}
		made_work = true;
	}
	snprintf(mnt, sizeof(mnt), "%s/mnt", work);
	if (inside(work, dir) || inside(dir, work)) {
		fprintf(stderr, "dcbench fsmeta: the work directory %s and the tree %s must not "
			"contain one another (--work DIR elsewhere)\n", work, dir);
		if (made_work_arg)
			rmdir(work);
		goto out;
	}
	if (mkdir(mnt, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "dcbench fsmeta: %s: %s\n", mnt, strerror(errno));
		goto out;
	}
	for (unsigned i = 0; i < ncfg; i++) {
		cfg[i].runs = calloc(s.repeat, sizeof(*cfg[i].runs));
		if (!cfg[i].runs) {
			fprintf(stderr, "dcbench fsmeta: out of memory\n");
			goto out;
		}
	}
	for (unsigned i = 0; i < ncfg; i++)
		if (!strncmp(cfg[i].kind, "passthrough_ll", 14)) {
			if (fsm_build_peer(work) < 0)
				goto out;
			break;
		}

	/* A signal ends the run in hand; then the daemon is stopped, the
	 * scratch removed and the signal's default action taken. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);

	/* scratch left by an interrupted or crashed run */
	fsl_clean_scratch(dir);

	s.dir = dir;
	s.work = work;
	s.dropped = root;
	fprintf(rep, "fsmeta: %s, %u thread%s, %u stat pass%s, mix %u per thread, "
		"timeouts entry %gs attr %gs, median of %u; %s\n", dir, s.threads,
		s.threads == 1 ? "" : "s", s.passes, s.passes == 1 ? "" : "es", s.mix,
		s.entry_to, s.attr_to, s.repeat,
		root ? "page cache dropped before each run" : "not root: caches NOT dropped");
	rc = EXIT_OK;
	for (unsigned r = 0; r < s.repeat && !interrupted; r++)
		for (unsigned i = 0; i < ncfg && !interrupted; i++) {
			struct config *c = &cfg[i];
			struct run *x = &c->runs[r];
			struct fsl_options lo = {
				.threads = s.threads, .passes = s.passes, .mix = s.mix,
				.stop = &interrupted,
			};
			struct fsmount m;
			struct rusage ru;
			int lrc;

			step++;
			if (cli_progress())
				fprintf(stderr, "\r  [%u/%u] %s, run %u of %u   ", step,
					ncfg * s.repeat, c->label, r + 1, s.repeat);
			if (root && !drop_caches() && step == 1)
				fprintf(stderr, "dcbench fsmeta: warning: cannot write "
					"/proc/sys/vm/drop_caches: %s\n", strerror(errno));
			char opts[512];

			/* READDIRPLUS as the peers have it (libfuse's default),
			 * whatever the timeouts; the user's options after, to win */
			snprintf(opts, sizeof(opts), "--readdirplus auto %s%s%s",
				 s.dcfs_opts ? s.dcfs_opts : "",
				 c->coherence[0] ? " --coherence=" : "", c->coherence);
			if (fsm_start(&m, c->kind, dir, mnt, c->own_to ? c->to : s.entry_to,
				      c->own_to ? c->to : s.attr_to, NULL, work,
				      fsm_kind_dcfs(c->kind) ? opts : NULL) < 0) {
				rc = EXIT_FAIL;
				goto stop;
			}
			lo.dir = m.dir;
			lrc = fsl_run(&lo, &x->res);
			x->daemon_ok = fsm_stop(&m, &ru) == 0;
			x->user_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
			x->sys_s = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
			/* what the mix could not remove through a failed mount */
			if (is_fuse(c))
				fsl_clean_scratch(dir);
			if (lrc < 0) {
				rc = EXIT_FAIL;
				goto stop;
			}
			if (!x->daemon_ok)
				fprintf(stderr, "dcbench fsmeta: %s, run %u: the daemon did not "
					"end cleanly; see %s/daemon-%s.log\n", c->label, r + 1,
					work, c->kind);
		}
stop:
	if (cli_progress())
		fprintf(stderr, "\r%60s\r", "");
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	if (interrupted) {
		fprintf(stderr, "dcbench fsmeta: interrupted\n");
		rc = EXIT_FAIL;
		goto out;
	}
	if (rc)
		goto out;

	{
		struct config *nat = find(cfg, ncfg, "native"), *rcu = find(cfg, ncfg, "rcu");
		struct config *ptd = find(cfg, ncfg, "passthrough_ll-dp");
		struct config *ptl = find(cfg, ncfg, "passthrough_ll");
		struct config *rcu_uring = find(cfg, ncfg, "rcu-uring");
		bool apply = s.threads == 2 && s.entry_to == 0 && s.attr_to == 0;
		struct goal g[5];
		unsigned ng;

		for (unsigned i = 0; i < ncfg; i++) {
			summarise(&cfg[i], s.repeat);
			if (cfg[i].failed || !cfg[i].daemon_ok)
				rc = EXIT_FAIL;
		}
		fprintf(rep, "%zu entries\n", cfg[0].runs[0].res.entries);
		for (unsigned i = 1; i < ncfg; i++)
			if (cfg[i].runs[cfg[i].median].res.entries != cfg[0].runs[0].res.entries)
				fprintf(rep, "%s walked %zu entries in its median run\n",
					cfg[i].label, cfg[i].runs[cfg[i].median].res.entries);
		print_table(rep, cfg, ncfg, s.repeat, nat);
		print_info(rep, "dcfs rcu / passthrough_ll-dp (same mount options)", rcu, ptd);
		print_info(rep, "dcfs rcu / passthrough_hp", rcu, find(cfg, ncfg, "passthrough_hp"));
		print_info(rep, "dcfs rcu-uring / passthrough_ll", rcu_uring, ptl);
		print_info(rep, "dcfs rcu-uring / passthrough_hp-uring (both rings)", rcu_uring,
			   find(cfg, ncfg, "passthrough_hp-uring"));
		print_info(rep, "dcfs rcu-uring / rcu (FUSE over io_uring against /dev/fuse)",
			   rcu_uring, rcu);
		ng = goals(cfg, ncfg, g);
		if (!apply)
			fprintf(rep, "note: the goals are set for --threads 2 with both timeouts 0; "
				"this run differs\n");
		for (unsigned i = 0; i < ng; i++)
			fprintf(rep, "goal: %s%s\n", g[i].text,
				g[i].met < 0 ? "" : g[i].met ? ": met" : ": NOT met");
		if (json && write_json(&s, cfg, ncfg, nat, g, ng, apply))
			rc = EXIT_FAIL;
	}
out:
	for (unsigned i = 0; i < ncfg; i++)
		free(cfg[i].runs);
	if (made_work)
		remove_work(work, mnt);
	if (interrupted) {
		signal(interrupted, SIG_DFL);
		raise(interrupted);
	}
	return rc;
}
