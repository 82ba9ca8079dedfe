// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kernbench.c - `dcbench kernbench`: the 2002 dcache_rcu experiment for real.
 * A kernel tree is built natively and through dcfs in each libdcache mode,
 * timed the way kernbench did: every run a `make clean`, then a timed
 * `make -j N`; Elapsed, User, System and CPU% of the build (from wait4 on
 * make, which covers the compilers it waited for), and the dcfs daemon's
 * own CPU time (from wait4 on the daemon, a child of ours).
 *
 * Runs are interleaved (run 1 of every mode, then run 2, ...) so that a
 * drift in the machine's speed falls on every mode alike.  `make clean` is
 * done natively, untimed: it only resets the tree.
 *
 * --cpus 1,2 repeats the comparison with make and the daemon confined to
 * the first 1, then 2 CPUs (affinity), as the 2002 post's UP and SMP
 * sections did.  docs/dcbench.md is the manual; bench/kernbench-setup.sh
 * prepares the tree.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fs/fsmount.h"
#include "fs/host.h"
#include "fs/kernbench.h"
#include "common/json.h"
#include "common/stats.h"

#define CMD		"kernbench"
#define MAX_MODES	8
#define MAX_CPUS	8
#define MAX_RUNS	100

const char dcb_kernbench_help[] =
"usage: dcbench kernbench --tree KERNEL_TREE [--jobs N] [--runs R]\n"
"                         [--modes LIST] [--cpus LIST] [--entry-timeout S]\n"
"                         [--attr-timeout S] [--target T] [--work DIR]\n"
"                         [--dcfs-opts \"OPTS\"] [--nfs URL] [--json]\n"
"\n"
"Builds a configured kernel tree (bench/kernbench-setup.sh makes one:\n"
"Debian's linux-source-6.1 with tinyconfig) natively and through dcfs, and\n"
"reports it the way kernbench did.  Each run: make clean (native, untimed),\n"
"then a timed make -j N, through a dcfs mounted for that run alone.\n"
"\n"
"  --tree DIR           the configured kernel tree (needs DIR/.config)\n"
"  --modes LIST         of native, rcu, global, rwlock (dcfs in that mode),\n"
"                       rcu-uring, global-uring, rwlock-uring (with --uring),\n"
"                       passthrough_ll, passthrough_ll-dp (libfuse's example,\n"
"                       built here; -dp with dcfs's mount options), nfs,\n"
"                       nfs-nocache (dcfs over the export --nfs names); each\n"
"                       may add @T, its own timeouts (T seconds, or @default:\n"
"                       the daemon's; dcfs picks by its coherence mode), and a\n"
"                       dcfs one /MODE, its --coherence mode: e.g.\n"
"                       native,rcu@default,rcu@3600/off,passthrough_ll@0\n"
"                       (default native,rcu,global)\n"
"  --cpus LIST          CPU counts, each a whole comparison with the build and\n"
"                       the daemon confined to that many CPUs (default 2, or\n"
"                       all this machine has if fewer)\n"
"  --jobs N             make -j N (default 2 x the CPU count of the comparison)\n"
"  --runs R             runs per mode (default 3)\n"
"  --entry-timeout S    the kernel timeouts, seconds, of modes without @T\n"
"  --attr-timeout S     (default 1, as libfuse; 0 sends every path component\n"
"                       to the daemon)\n"
"  --target T           the make target (default: the default target)\n"
"  --work DIR           mount point and logs (default a new /tmp/dcbench-kernbench-*)\n"
"  --dcfs-opts \"OPTS\"   more dcfs options, e.g. \"--threads 4\" (dcfs modes)\n"
"  --nfs URL            nfs://HOST/EXPORT, an export of the tree, for the\n"
"                       modes nfs and nfs-nocache (scripts/nfs-server.sh\n"
"                       serves one)\n"
"  --json               one JSON document on stdout (text goes to stderr)\n"
"  -h, --help           this help\n"
"\n"
"Needs root (mounts) for any mode but native.  Exit status 0 when every\n"
"build succeeded, 1 otherwise, 2 on a usage error.  The goal lines\n"
"(docs/dcbench.md) do not change the exit status.\n";

struct sample {
	double elapsed, user, sys, cpu_pct, d_user, d_sys;
};

/* The fields a summary covers, by offset into struct sample. */
enum { F_ELAPSED, F_USER, F_SYS, F_CPU, F_DUSER, F_DSYS, F_DCPU, NFIELDS };

struct stat3 {
	double median, mean, sd;
};

struct series {
	const char *mode;		/* as --modes names it */
	const struct fsm_config *fs;
	unsigned cpus, jobs, n;
	struct sample s[MAX_RUNS];
	struct stat3 f[NFIELDS];
};

static struct {
	const char *tree, *target, *work, *dcfs_opts;
	const char *modes[MAX_MODES];
	struct fsm_config fs[MAX_MODES];
	unsigned nmodes, cpus[MAX_CPUS], ncpus, jobs, runs;
	double entry_to, attr_to;
	bool json;
} opt;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static double tv_sec(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* "6m12.917s", as the shell's time keyword prints it */
static const char *fmt_time(double s, char *buf, size_t size)
{
	int m = (int)(s / 60);

	snprintf(buf, size, "%dm%.3fs", m, s - 60.0 * m);
	return buf;
}

static double field(const struct sample *s, int f)
{
	switch (f) {
	case F_ELAPSED: return s->elapsed;
	case F_USER: return s->user;
	case F_SYS: return s->sys;
	case F_CPU: return s->cpu_pct;
	case F_DUSER: return s->d_user;
	case F_DSYS: return s->d_sys;
	default: return s->d_user + s->d_sys;
	}
}

static void summarize(struct series *se)
{
	for (int f = 0; f < NFIELDS; f++) {
		double v[MAX_RUNS];
		unsigned n = se->n;

		for (unsigned i = 0; i < n; i++)
			v[i] = field(&se->s[i], f);
		se->f[f].median = stats_median(v, n);
		se->f[f].mean = stats_mean(v, n);
		se->f[f].sd = n > 1 ? stats_sd(v, n) : 0;
	}
}

/* ---- options ------------------------------------------------------------------ */

static int parse_modes(char *s)
{
	opt.nmodes = 0;
	for (char *save, *m = strtok_r(s, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		struct fsm_config *c = &opt.fs[opt.nmodes];

		if (opt.nmodes == MAX_MODES)
			return cli_usage(CMD, "--modes: at most %d", MAX_MODES);
		/* passthrough_hp is built by hand (fsmeta's --passthrough-hp) */
		if (fsm_config_parse(m, c) || !strncmp(c->kind, "passthrough_hp", 14))
			return cli_usage(CMD, "--modes: '%s' is not native, rcu, global, rwlock, "
					 "rcu-uring, global-uring, rwlock-uring, passthrough_ll, "
					 "passthrough_ll-dp, nfs or nfs-nocache, with @SECONDS or "
					 "@default and (dcfs) /auto|fanotify|inotify|ttl|off after it",
					 m);
		for (unsigned k = 0; k < opt.nmodes; k++)
			if (fsm_config_same(&opt.fs[k], c))
				return cli_usage(CMD, "--modes: '%s' and '%s' are the same",
						 opt.modes[k], m);
		opt.modes[opt.nmodes++] = m;
	}
	if (!opt.nmodes)
		return cli_usage(CMD, "--modes is empty");
	return 0;
}

static int parse_args(int argc, char **argv)
{
	static char modes_default[] = "native,rcu,global";
	char *modes = modes_default;
	const char *v = NULL;
	unsigned online = cli_cores();
	int bad = 0, rc;

	opt.runs = 3;
	opt.entry_to = opt.attr_to = 1;
	opt.ncpus = 1;
	opt.cpus[0] = online < 2 ? online : 2;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(dcb_kernbench_help, stdout);
			exit(EXIT_OK);
		}
		if (cli_opt(CMD, argc, argv, &i, "tree", true, &v, &bad)) {
			if (!bad)
				opt.tree = v;
		} else if (cli_opt(CMD, argc, argv, &i, "modes", true, &v, &bad)) {
			/* parse_modes cuts the list where it stands: a copy,
			 * in static storage so that nothing is left to free */
			static char modes_arg[1024];

			if (!bad && snprintf(modes_arg, sizeof(modes_arg), "%s", v) >=
				    (int)sizeof(modes_arg))
				return cli_usage(CMD, "--modes: longer than %zu bytes",
						 sizeof(modes_arg) - 1);
			if (!bad)
				modes = modes_arg;
		} else if (cli_opt(CMD, argc, argv, &i, "cpus", true, &v, &bad)) {
			if (!bad)
				bad = cli_uint_list(CMD, "--cpus", v, 1, online, opt.cpus,
						    MAX_CPUS, &opt.ncpus);
		} else if (cli_opt(CMD, argc, argv, &i, "jobs", true, &v, &bad)) {
			if (!bad)
				bad = cli_uint(CMD, "--jobs", v, 1, 1024, &opt.jobs);
		} else if (cli_opt(CMD, argc, argv, &i, "runs", true, &v, &bad)) {
			if (!bad)
				bad = cli_uint(CMD, "--runs", v, 1, MAX_RUNS, &opt.runs);
		} else if (cli_opt(CMD, argc, argv, &i, "entry-timeout", true, &v, &bad)) {
			if (!bad)
				bad = cli_seconds(CMD, "--entry-timeout", v, &opt.entry_to);
		} else if (cli_opt(CMD, argc, argv, &i, "attr-timeout", true, &v, &bad)) {
			if (!bad)
				bad = cli_seconds(CMD, "--attr-timeout", v, &opt.attr_to);
		} else if (cli_opt(CMD, argc, argv, &i, "target", true, &v, &bad)) {
			if (!bad)
				opt.target = v;
		} else if (cli_opt(CMD, argc, argv, &i, "work", true, &v, &bad)) {
			if (!bad)
				opt.work = v;
		} else if (cli_opt(CMD, argc, argv, &i, "dcfs-opts", true, &v, &bad)) {
			if (!bad)
				opt.dcfs_opts = v;
		} else if (cli_opt(CMD, argc, argv, &i, "nfs", true, &v, &bad)) {
			if (!bad)
				fsm_set_nfs_url(v);
		} else if (cli_opt(CMD, argc, argv, &i, "json", false, &v, &bad)) {
			opt.json = true;
		} else {
			return cli_usage(CMD, "unknown option '%s'", a);
		}
		if (bad)
			return bad;
	}
	if (!opt.tree)
		return cli_usage(CMD, "--tree KERNEL_TREE is required");
	rc = parse_modes(modes);
	return rc;
}

/* ---- one build -------------------------------------------------------------- */

static int check_tree(void)
{
	char p[4200];
	struct stat st;

	if (stat(opt.tree, &st) < 0) {
		fprintf(stderr, "dcbench kernbench: %s: %s\n", opt.tree, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "dcbench kernbench: %s: not a directory\n", opt.tree);
		return -1;
	}
	snprintf(p, sizeof(p), "%s/Makefile", opt.tree);
	if (access(p, R_OK) < 0) {
		fprintf(stderr, "dcbench kernbench: %s has no Makefile: not a kernel tree\n", opt.tree);
		return -1;
	}
	snprintf(p, sizeof(p), "%s/.config", opt.tree);
	if (access(p, R_OK) < 0) {
		fprintf(stderr, "dcbench kernbench: %s is not configured (no .config): "
			"run bench/kernbench-setup.sh, or make tinyconfig in it\n", opt.tree);
		return -1;
	}
	return 0;
}

static int make_clean(void)
{
	char *argv[] = { "make", "-C", (char *)opt.tree, "-s", "clean", NULL };
	char log[4200];
	int rc;

	snprintf(log, sizeof(log), "%s/clean.log", opt.work);
	rc = fsm_run(argv, log, NULL, NULL, NULL);
	if (rc != 0)
		fprintf(stderr, "dcbench kernbench: make clean failed (status %d); see %s\n", rc, log);
	return rc == 0 ? 0 : -1;
}

/* The options dcfs gets for c: --dcfs-opts, then c's coherence mode. */
static const char *dcfs_opts(const struct fsm_config *c, char *buf, size_t size)
{
	if (!fsm_kind_dcfs(c->kind))
		return NULL;
	snprintf(buf, size, "%s%s%s", opt.dcfs_opts ? opt.dcfs_opts : "",
		 c->coherence[0] ? " --coherence=" : "", c->coherence);
	return buf;
}

/* One timed build of mode on the first `cpus` CPUs; fills *s. */
static int build_once(const char *mode, const struct fsm_config *c, unsigned cpus,
		      unsigned jobs, unsigned run, struct sample *s)
{
	char mnt[4200], log[4200], jarg[32], file[64], extra[600];
	char *argv[8];
	cpu_set_t set;
	struct fsmount m;
	struct rusage ru, dru;
	double elapsed;
	int n = 0, rc, stop_rc;

	if (fsm_first_cpus(cpus, &set) < 0) {
		fprintf(stderr, "dcbench kernbench: cannot confine to %u CPUs\n", cpus);
		return -1;
	}
	if (make_clean() < 0)
		return -1;
	snprintf(mnt, sizeof(mnt), "%s/mnt", opt.work);
	if (fsm_start(&m, c->kind, opt.tree, mnt, c->own_to ? c->to : opt.entry_to,
		      c->own_to ? c->to : opt.attr_to, &set, opt.work,
		      dcfs_opts(c, extra, sizeof(extra))) < 0)
		return -1;
	snprintf(jarg, sizeof(jarg), "-j%u", jobs);
	/* the mode's name as a file name: "rcu@3600/off" -> "rcu@3600-off" */
	snprintf(file, sizeof(file), "%s", mode);
	for (char *p = file; (p = strchr(p, '/')); )
		*p = '-';
	snprintf(log, sizeof(log), "%s/build-%ucpu-%s-%u.log", opt.work, cpus, file, run);
	argv[n++] = "make";
	argv[n++] = "-C";
	argv[n++] = m.dir;
	argv[n++] = jarg;
	if (opt.target)
		argv[n++] = (char *)opt.target;
	argv[n] = NULL;
	rc = fsm_run(argv, log, &set, &ru, &elapsed);
	stop_rc = fsm_stop(&m, &dru);
	if (rc != 0) {
		fprintf(stderr, "dcbench kernbench: make (%s, %u CPUs, run %u) failed with "
			"status %d; see %s\n", mode, cpus, run, rc, log);
		return -1;
	}
	if (stop_rc < 0)
		return -1;
	s->elapsed = elapsed;
	s->user = tv_sec(ru.ru_utime);
	s->sys = tv_sec(ru.ru_stime);
	s->cpu_pct = elapsed > 0 ? 100 * (s->user + s->sys) / elapsed : 0;
	s->d_user = tv_sec(dru.ru_utime);
	s->d_sys = tv_sec(dru.ru_stime);
	return 0;
}

/* ---- reporting --------------------------------------------------------------- */

static void print_run(FILE *out, const struct series *se, unsigned r)
{
	const struct sample *s = &se->s[r];
	char a[32], b[32], c[32];

	fprintf(out, "%u CPU%s %-7s run %u: real %s  user %s  sys %s", se->cpus,
		se->cpus > 1 ? "s" : "", se->mode, r + 1, fmt_time(s->elapsed, a, sizeof(a)),
		fmt_time(s->user, b, sizeof(b)), fmt_time(s->sys, c, sizeof(c)));
	if (strcmp(se->fs->kind, "native"))
		fprintf(out, "  (daemon user %.2fs sys %.2fs)", s->d_user, s->d_sys);
	fputc('\n', out);
}

static void print_summary(FILE *out, const struct series *se)
{
	const struct stat3 *f = se->f;

	fprintf(out, "%-7s Elapsed: %.2fs User: %.2fs System: %.2fs CPU: %.1f%%  "
		"[median of %u; Elapsed mean %.2fs sd %.2fs; System mean %.2fs sd %.2fs]\n",
		se->mode, f[F_ELAPSED].median, f[F_USER].median, f[F_SYS].median,
		f[F_CPU].median, se->n, f[F_ELAPSED].mean, f[F_ELAPSED].sd, f[F_SYS].mean,
		f[F_SYS].sd);
	if (strcmp(se->fs->kind, "native"))
		fprintf(out, "        %s daemon: User: %.2fs System: %.2fs  [median of %u; "
			"User+System mean %.2fs sd %.2fs]\n",
			fsm_kind_dcfs(se->fs->kind) ? "dcfs" : se->fs->kind, f[F_DUSER].median,
			f[F_DSYS].median, se->n, f[F_DCPU].mean, f[F_DCPU].sd);
}

/* Is the difference of two medians within one standard deviation (the
 * larger of the two series')? */
static bool within_sd(const struct stat3 *a, const struct stat3 *b)
{
	double sd = a->sd > b->sd ? a->sd : b->sd;

	return fabs(a->median - b->median) <= sd;
}

static void print_change(FILE *out, const char *what, const struct stat3 *a,
			 const struct stat3 *b, const char *unit)
{
	double pct = a->median > 0 ? 100 * (b->median - a->median) / a->median : 0;

	fprintf(out, "%s %.2f%s -> %.2f%s (%s%.1f%%%s)", what, a->median, unit, b->median,
		unit, pct >= 0 ? "+" : "", pct,
		within_sd(a, b) ? ", within one standard deviation" : "");
}

/* "rcu vs native: Elapsed 20.47s -> 19.62s (-4.2%), System ..." */
static void print_compare(FILE *out, const struct series *a, const struct series *b)
{
	fprintf(out, "%s vs %s: ", b->mode, a->mode);
	print_change(out, "Elapsed", &a->f[F_ELAPSED], &b->f[F_ELAPSED], "s");
	fputs(", ", out);
	print_change(out, "System", &a->f[F_SYS], &b->f[F_SYS], "s");
	if (strcmp(a->fs->kind, "native") && strcmp(b->fs->kind, "native")) {
		fputs(", ", out);
		print_change(out, "daemon CPU", &a->f[F_DCPU], &b->f[F_DCPU], "s");
	}
	fputc('\n', out);
}

static const struct series *find(const struct series *all, unsigned n, unsigned cpus,
				 const char *mode)
{
	for (unsigned i = 0; i < n; i++)
		if (all[i].cpus == cpus && !strcmp(all[i].mode, mode) && all[i].n)
			return &all[i];
	return NULL;
}

/* The first series of cpus whose configuration passes is(). */
static const struct series *find_by(const struct series *all, unsigned n, unsigned cpus,
				    bool (*is)(const struct fsm_config *))
{
	for (unsigned i = 0; i < n; i++)
		if (all[i].cpus == cpus && is(all[i].fs) && all[i].n)
			return &all[i];
	return NULL;
}

static bool is_uncoherent_dcfs(const struct fsm_config *c)
{
	return fsm_kind_dcfs(c->kind) && !fsm_kind_nfs(c->kind) && !strcmp(c->coherence, "off");
}

/*
 * The goals (docs/dcbench.md): with timeouts of 1 s, rcu Elapsed <= 1.2x
 * native; with timeouts 0, the daemon's CPU for rcu no higher than for
 * global (within one sd); dcfs coherent with long timeouts (e.g.
 * rcu@default) Elapsed <= 1.03x native.  Under other timeouts the first
 * two ratios are printed as "info", and so are coherent dcfs against
 * passthrough_ll@0 and against dcfs with --coherence=off.
 */
static void print_goals(FILE *out, const struct series *all, unsigned n, unsigned cpus)
{
	const struct series *nat = find(all, n, cpus, "native");
	const struct series *rcu = find(all, n, cpus, "rcu");
	const struct series *glo = find(all, n, cpus, "global");
	const struct series *coh = find_by(all, n, cpus, fsm_config_coherent);
	const struct series *pt0 = find_by(all, n, cpus, fsm_config_peer0);
	const struct series *off = find_by(all, n, cpus, is_uncoherent_dcfs);

	if (nat && rcu) {
		double r = rcu->f[F_ELAPSED].median / nat->f[F_ELAPSED].median;

		if (opt.entry_to == 1 && opt.attr_to == 1)
			fprintf(out, "goal: rcu Elapsed / native = %.3f (<= 1.2 with timeouts 1 s): %s\n",
				r, r <= 1.2 ? "met" : "NOT met");
		else
			fprintf(out, "info: rcu Elapsed / native = %.3f (timeouts entry %gs attr %gs)\n",
				r, opt.entry_to, opt.attr_to);
	}
	if (nat && coh) {
		double r = coh->f[F_ELAPSED].median / nat->f[F_ELAPSED].median;

		fprintf(out, "goal: %s Elapsed / native = %.3f (<= 1.03, dcfs coherent with long "
			"timeouts): %s\n", coh->mode, r, r <= 1.03 ? "met" : "NOT met");
	}
	/* coherent dcfs against the coherent peer and against itself unwatched */
	if (coh && pt0)
		fprintf(out, "info: %s Elapsed / %s = %.3f\n", pt0->mode, coh->mode,
			pt0->f[F_ELAPSED].median / coh->f[F_ELAPSED].median);
	if (coh && off)
		fprintf(out, "info: %s Elapsed / %s = %.3f\n", coh->mode, off->mode,
			coh->f[F_ELAPSED].median / off->f[F_ELAPSED].median);
	if (rcu && glo) {
		const struct stat3 *a = &rcu->f[F_DCPU], *b = &glo->f[F_DCPU];
		bool ok = a->median <= b->median || within_sd(a, b);

		fprintf(out, "%s: rcu daemon CPU %.2fs vs global %.2fs (no higher, within one "
			"standard deviation): %s\n",
			opt.entry_to == 0 && opt.attr_to == 0 ? "goal" : "info",
			a->median, b->median, ok ? "met" : "NOT met");
	}
}

static void json_stat(struct json *j, const char *key, const struct series *se, int f)
{
	json_key(j, key);
	json_obj_begin(j);
	json_knum(j, "median", se->f[f].median);
	json_knum(j, "mean", se->f[f].mean);
	json_knum(j, "sd", se->f[f].sd);
	json_obj_end(j);
}

static int write_json(const struct series *all, unsigned n)
{
	struct json j;

	json_init(&j, stdout);
	json_obj_begin(&j);
	json_kint(&j, "schema_version", JSON_SCHEMA_VERSION);
	json_kstr(&j, "command", "kernbench");
	json_kstr(&j, "tree", opt.tree);
	json_kstr(&j, "target", opt.target);
	json_knum(&j, "entry_timeout", opt.entry_to);
	json_knum(&j, "attr_timeout", opt.attr_to);
	json_kuint(&j, "runs", opt.runs);
	json_key(&j, "results");
	json_arr_begin(&j);
	for (unsigned i = 0; i < n; i++) {
		const struct series *se = &all[i];
		bool fs = strcmp(se->fs->kind, "native") != 0;

		json_obj_begin(&j);
		json_kstr(&j, "mode", se->mode);
		json_kstr(&j, "kind", se->fs->kind);
		json_kuint(&j, "cpus", se->cpus);
		json_kuint(&j, "jobs", se->jobs);
		json_key(&j, "runs");
		json_arr_begin(&j);
		for (unsigned r = 0; r < se->n; r++) {
			const struct sample *s = &se->s[r];

			json_obj_begin(&j);
			json_knum(&j, "elapsed", s->elapsed);
			json_knum(&j, "user", s->user);
			json_knum(&j, "system", s->sys);
			json_knum(&j, "cpu_percent", s->cpu_pct);
			json_knum(&j, "daemon_user", fs ? s->d_user : NAN);
			json_knum(&j, "daemon_system", fs ? s->d_sys : NAN);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_stat(&j, "elapsed", se, F_ELAPSED);
		json_stat(&j, "user", se, F_USER);
		json_stat(&j, "system", se, F_SYS);
		json_stat(&j, "cpu_percent", se, F_CPU);
		if (fs) {
			json_stat(&j, "daemon_user", se, F_DUSER);
			json_stat(&j, "daemon_system", se, F_DSYS);
			json_stat(&j, "daemon_cpu", se, F_DCPU);
		}
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	return json_finish(&j);
}

/* ---- the command -------------------------------------------------------------- */

static bool needs_mount(void)
{
	for (unsigned m = 0; m < opt.nmodes; m++)
		if (strcmp(opt.fs[m].kind, "native"))
			return true;
	return false;
}

/* libfuse's passthrough_ll, built once into the work directory if a mode
 * runs it. */
static int build_peer(void)
{
	for (unsigned m = 0; m < opt.nmodes; m++)
		if (!strncmp(opt.fs[m].kind, "passthrough_ll", 14))
			return fsm_build_peer(opt.work);
	return 0;
}

static int make_workdir(char *tmpl, size_t size)
{
	char mnt[4200];

	if (opt.work) {
		if (mkdir(opt.work, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "dcbench kernbench: %s: %s\n", opt.work, strerror(errno));
			return -1;
		}
	} else {
		snprintf(tmpl, size, "/tmp/dcbench-kernbench-XXXXXX");
		if (!mkdtemp(tmpl)) {
			fprintf(stderr, "dcbench kernbench: mkdtemp: %s\n", strerror(errno));
			return -1;
		}
		opt.work = tmpl;
	}
	snprintf(mnt, sizeof(mnt), "%s/mnt", opt.work);
	if (mkdir(mnt, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "dcbench kernbench: %s: %s\n", mnt, strerror(errno));
		return -1;
	}
	return 0;
}

int dcb_kernbench_main(int argc, char **argv)
{
	static struct series all[MAX_CPUS * MAX_MODES];
	char tmpl[64];
	unsigned nseries = 0;
	FILE *out;
	int rc = parse_args(argc, argv);

	if (rc)
		return rc;
	out = opt.json ? stderr : stdout;
	if (check_tree() < 0)
		return EXIT_FAIL;
	if (needs_mount() && geteuid() != 0) {
		fprintf(stderr, "dcbench kernbench: mounting dcfs needs root\n");
		return EXIT_FAIL;
	}
	if (needs_mount() && fsh_check_fuse(CMD) < 0)
		return EXIT_FAIL;
	if (make_workdir(tmpl, sizeof(tmpl)) < 0 || build_peer() < 0)
		return EXIT_FAIL;
	/* no SA_RESTART: wait4 in fsm_run returns, and passes SIGTERM on to
	 * make (a SIGTERM sent to dcbench alone would not reach the build) */
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		fsm_set_stop_flag(&interrupted);
	}

	for (unsigned c = 0; c < opt.ncpus; c++)
		for (unsigned m = 0; m < opt.nmodes; m++) {
			struct series *se = &all[nseries++];

			se->mode = opt.modes[m];
			se->fs = &opt.fs[m];
			se->cpus = opt.cpus[c];
			se->jobs = opt.jobs ? opt.jobs : 2 * opt.cpus[c];
		}
	fprintf(out, "kernbench: %s, %u run%s per mode, timeouts entry %gs attr %gs, work in %s\n",
		opt.tree, opt.runs, opt.runs > 1 ? "s" : "", opt.entry_to, opt.attr_to, opt.work);

	rc = EXIT_OK;
	for (unsigned c = 0; c < opt.ncpus && rc == EXIT_OK; c++) {
		struct series *first = &all[c * opt.nmodes];

		fprintf(out, "\n== %u CPU%s, make -j%u ==\n", first->cpus,
			first->cpus > 1 ? "s" : "", first->jobs);
		for (unsigned r = 0; r < opt.runs && rc == EXIT_OK; r++)
			for (unsigned m = 0; m < opt.nmodes && rc == EXIT_OK; m++) {
				struct series *se = &first[m];

				if (build_once(se->mode, se->fs, se->cpus, se->jobs, r + 1, &se->s[r]) < 0 ||
				    interrupted) {
					rc = EXIT_FAIL;
					break;
				}
				se->n++;
				print_run(out, se, r);
				fflush(out);
			}
		for (unsigned m = 0; m < opt.nmodes; m++)
			if (first[m].n)
				summarize(&first[m]);
		bool complete = true;

		for (unsigned m = 0; m < opt.nmodes; m++)
			complete &= first[m].n == opt.runs;
		if (complete) {
			fputc('\n', out);
			for (unsigned m = 0; m < opt.nmodes; m++)
				print_summary(out, &first[m]);
			for (unsigned m = 1; m < opt.nmodes; m++)
				print_compare(out, &first[0], &first[m]);
			for (unsigned m = 2; m < opt.nmodes; m++)
				print_compare(out, &first[1], &first[m]);
			print_goals(out, all, nseries, first->cpus);
		}
	}
	if (interrupted)
		fprintf(stderr, "dcbench kernbench: interrupted\n");
	if (rc == EXIT_OK && opt.json && write_json(all, nseries) < 0)
		rc = EXIT_FAIL;
	if (rc == EXIT_OK && opt.work == tmpl) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
		if (system(cmd) != 0)
			fprintf(stderr, "dcbench kernbench: could not remove %s\n", tmpl);
	} else if (rc != EXIT_OK) {
		fprintf(stderr, "dcbench kernbench: logs kept in %s\n", opt.work);
	}
	return rc;
}
