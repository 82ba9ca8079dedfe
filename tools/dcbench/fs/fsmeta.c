// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fsmeta.c - `dcbench fsmeta` (docs/dcbench.md): the metadata load of
 * fsload.c on a tree, natively and through each FUSE file system of
 * fsmount.c, the configurations interleaved R times with the page cache
 * dropped before each run; the median run of each by total ops/s, the
 * spread, failed operations, the daemon's CPU time, the ratio to native,
 * and the project's goals for dcfs (fsmeta_report.c).  This file is the
 * command line, the set-up and the runs.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fs/fsload.h"
#include "fs/fsmeta.h"
#include "fs/fsmeta_report.h"
#include "fs/fsmount.h"
#include "fs/host.h"

#define CMD		"fsmeta"
#define MAX_CONFIGS	16	/* kinds, some with their own timeouts */
#define DEFAULT_CONFIGS	"native,rcu,global,rwlock,passthrough_ll,passthrough_ll-dp"

const char dcb_fsmeta_help[] =
"usage: dcbench fsmeta --dir D [--threads N] [--entry-timeout S] [--attr-timeout S]\n"
"                      [--configs LIST] [--repeat R] [--passes P] [--mix K]\n"
"                      [--work DIR] [--dcfs-opts \"OPTS\"] [--passthrough-hp BIN]\n"
"                      [--nfs URL] [--json]\n"
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
"                     (the same with -o io_uring), nfs and nfs-nocache (dcfs\n"
"                     over the export --nfs names, with its name cache and\n"
"                     without it, every name a LOOKUP RPC); default:\n"
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
"  --nfs URL          nfs://HOST/EXPORT, an export of D (bench/nfs.sh starts\n"
"                     one), for the configurations nfs and nfs-nocache\n"
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


static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

/* ---- options --------------------------------------------------------------- */

/* One name of --configs (fsm_config_parse); the label shown is the name,
 * dcfs kinds prefixed. */
static int parse_config(const char *name, struct config *c)
{
	if (fsm_config_parse(name, &c->fs))
		return -1;
	snprintf(c->label, sizeof(c->label), "%s%s",
		 fsm_kind_dcfs(c->fs.kind) && !c->fs.prefixed ? "dcfs-" : "", name);
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
					 "rcu-uring, global-uring, rwlock-uring, nfs, nfs-nocache, passthrough_ll, "
					 "passthrough_ll-dp, passthrough_hp or passthrough_hp-uring "
					 "(@0 or @default), "
					 "with @SECONDS or @default and "
					 "(dcfs) /auto|fanotify|inotify|ttl|off after it", name);
		for (unsigned k = 0; k < *n; k++)
			dup |= fsm_config_same(&cfg[k].fs, &c.fs);
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

struct args {
	const char *configs, *dir, *work;
	bool json;
};

static int show_help(void)
{
	fputs(dcb_fsmeta_help, stdout);
	return -1;
}

/* 0, -1 after --help, or the exit status of a usage error. */
static int parse_args(int argc, char **argv, struct setup *s, struct args *a)
{
	int bad = 0;

	for (int i = 1; i < argc && !bad; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "-h") || cli_opt(CMD, argc, argv, &i, "help", false, &v, &bad))
			return bad ? bad : show_help();
		if (cli_opt(CMD, argc, argv, &i, "dir", true, &v, &bad))
			a->dir = v;
		else if (cli_opt(CMD, argc, argv, &i, "threads", true, &v, &bad))
			bad = bad ? bad : cli_uint(CMD, "--threads", v, 1, 1024, &s->threads);
		else if (cli_opt(CMD, argc, argv, &i, "entry-timeout", true, &v, &bad))
			bad = bad ? bad : cli_seconds(CMD, "--entry-timeout", v, &s->entry_to);
		else if (cli_opt(CMD, argc, argv, &i, "attr-timeout", true, &v, &bad))
			bad = bad ? bad : cli_seconds(CMD, "--attr-timeout", v, &s->attr_to);
		else if (cli_opt(CMD, argc, argv, &i, "configs", true, &v, &bad))
			a->configs = v;
		else if (cli_opt(CMD, argc, argv, &i, "repeat", true, &v, &bad))
			bad = bad ? bad : cli_uint(CMD, "--repeat", v, 1, MAX_REPEAT, &s->repeat);
		else if (cli_opt(CMD, argc, argv, &i, "passes", true, &v, &bad))
			bad = bad ? bad : cli_uint(CMD, "--passes", v, 0, 1000000, &s->passes);
		else if (cli_opt(CMD, argc, argv, &i, "mix", true, &v, &bad))
			bad = bad ? bad : cli_uint(CMD, "--mix", v, 0, 100000000, &s->mix);
		else if (cli_opt(CMD, argc, argv, &i, "work", true, &v, &bad))
			a->work = v;
		else if (cli_opt(CMD, argc, argv, &i, "nfs", true, &v, &bad))
			fsm_set_nfs_url(v);
		else if (cli_opt(CMD, argc, argv, &i, "passthrough-hp", true, &v, &bad)) {
			if (bad)
				return bad;
			if (access(v, X_OK) < 0) {
				fprintf(stderr, "dcbench fsmeta: --passthrough-hp %s: %s\n", v,
					strerror(errno));
				return EXIT_FAIL;
			}
			fsm_set_passthrough_hp(v);
		} else if (cli_opt(CMD, argc, argv, &i, "dcfs-opts", true, &v, &bad))
			s->dcfs_opts = v;
		else if (cli_opt(CMD, argc, argv, &i, "json", false, &v, &bad))
			a->json = true;
		else
			return cli_usage(CMD, "unknown option or argument '%s'", argv[i]);
	}
	if (bad)
		return bad;
	if (!a->dir)
		return cli_usage(CMD, "which tree? (--dir D)");
	return 0;
}

/* What the command needs, checked before anything is made: the tree (its
 * canonical path into dir), and for FUSE root, /dev/fuse and dcfs. */
static int check_host(const struct config *cfg, unsigned n, const char *dir_arg, char *dir)
{
	bool any_fuse = false;
	struct stat st;

	for (unsigned i = 0; i < n; i++)
		any_fuse |= fsmeta_is_fuse(&cfg[i]);
	if (!realpath(dir_arg, dir)) {
		fprintf(stderr, "dcbench fsmeta: --dir %s: %s\n", dir_arg, strerror(errno));
		return -1;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "dcbench fsmeta: --dir %s: not a directory\n", dir_arg);
		return -1;
	}
	if (any_fuse && geteuid() != 0) {
		fprintf(stderr, "dcbench fsmeta: needs root: it mounts file systems and drops "
			"the page cache (only --configs native runs without)\n");
		return -1;
	}
	if (any_fuse && fsh_check_fuse(CMD) < 0)
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (fsm_kind_dcfs(cfg[i].fs.kind) && !dcfs_built()) {
			fprintf(stderr, "dcbench fsmeta: no dcfs beside dcbench (make)\n");
			return -1;
		}
	return 0;
}

/*
 * The work directory (never inside the tree, or the native walk would
 * count it and dcfs would refuse the mount point) and the mount point in
 * it.  *made: a temporary one, to remove at the end.  0 or -1.
 */
static int make_work(const char *arg, const char *dir, char *work, char *mnt, bool *made)
{
	enum fsh_work how;

	if (fsh_make_work(CMD, "--work", arg, work, &how) < 0)
		return -1;
	*made = how == FSH_WORK_TEMP;
	snprintf(mnt, PATH_MAX + 8, "%s/mnt", work);
	if (inside(work, dir) || inside(dir, work)) {
		fprintf(stderr, "dcbench fsmeta: the work directory %s and the tree %s must not "
			"contain one another (--work DIR elsewhere)\n", work, dir);
		if (how == FSH_WORK_MADE)
			rmdir(work);
		return -1;
	}
	if (mkdir(mnt, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "dcbench fsmeta: %s: %s\n", mnt, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- the runs ------------------------------------------------------------------ */

/* Run r + 1 of c: mounted, loaded, unmounted.  0, or -1 to stop. */
static int run_one(const struct setup *s, struct config *c, unsigned r, const char *mnt)
{
	struct run *x = &c->runs[r];
	struct fsl_options lo = {
		.threads = s->threads, .passes = s->passes, .mix = s->mix,
		.stop = &interrupted,
	};
	struct fsmount m;
	struct rusage ru;
	char opts[512];
	int lrc;

	/* READDIRPLUS as the peers have it (libfuse's default),
	 * whatever the timeouts; the user's options after, to win */
	snprintf(opts, sizeof(opts), "--readdirplus auto %s%s%s",
		 s->dcfs_opts ? s->dcfs_opts : "",
		 c->fs.coherence[0] ? " --coherence=" : "", c->fs.coherence);
	/* dcfs over NFS reads no host directory: the user's options alone */
	if (fsm_start(&m, c->fs.kind, s->dir, mnt, c->fs.own_to ? c->fs.to : s->entry_to,
		      c->fs.own_to ? c->fs.to : s->attr_to, NULL, s->work,
		      fsm_kind_nfs(c->fs.kind) ? s->dcfs_opts :
		      fsm_kind_dcfs(c->fs.kind) ? opts : NULL) < 0)
		return -1;
	lo.dir = m.dir;
	lrc = fsl_run(&lo, &x->res);
	x->daemon_ok = fsm_stop(&m, &ru) == 0;
	x->user_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
	x->sys_s = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	/* what the mix could not remove through a failed mount */
	if (fsmeta_is_fuse(c))
		fsl_clean_scratch(s->dir);
	if (lrc < 0)
		return -1;
	if (!x->daemon_ok)
		fprintf(stderr, "dcbench fsmeta: %s, run %u: the daemon did not "
			"end cleanly; see %s/daemon-%s.log\n", c->label, r + 1,
			s->work, c->fs.kind);
	return 0;
}

/* Every configuration's runs, interleaved: EXIT_OK or EXIT_FAIL. */
static int run_all(FILE *rep, const struct setup *s, struct config *cfg, unsigned ncfg,
		   const char *mnt)
{
	struct sigaction old[3];
	unsigned step = 0;
	int rc = EXIT_OK;

	/* A signal ends the run in hand; then the daemon is stopped, the
	 * scratch removed and the signal's default action taken. */
	fsh_catch_signals(on_signal, old);

	/* scratch left by an interrupted or crashed run */
	fsl_clean_scratch(s->dir);

	fprintf(rep, "fsmeta: %s, %u thread%s, %u stat pass%s, mix %u per thread, "
		"timeouts entry %gs attr %gs, median of %u; %s\n", s->dir, s->threads,
		s->threads == 1 ? "" : "s", s->passes, s->passes == 1 ? "" : "es", s->mix,
		s->entry_to, s->attr_to, s->repeat,
		s->dropped ? "page cache dropped before each run" : "not root: caches NOT dropped");
	for (unsigned r = 0; r < s->repeat && !interrupted && rc == EXIT_OK; r++)
		for (unsigned i = 0; i < ncfg && !interrupted && rc == EXIT_OK; i++) {
			step++;
			if (cli_progress())
				fprintf(stderr, "\r  [%u/%u] %s, run %u of %u   ", step,
					ncfg * s->repeat, cfg[i].label, r + 1, s->repeat);
			if (s->dropped && !drop_caches() && step == 1)
				fprintf(stderr, "dcbench fsmeta: warning: cannot write "
					"/proc/sys/vm/drop_caches: %s\n", strerror(errno));
			if (run_one(s, &cfg[i], r, mnt) < 0)
				rc = EXIT_FAIL;
		}
	if (cli_progress())
		fprintf(stderr, "\r%60s\r", "");
	fsh_restore_signals(old);
	return rc;
}

/* ---- the command ------------------------------------------------------------------ */

int dcb_fsmeta_main(int argc, char **argv)
{
	struct setup s = { .threads = 2, .passes = 2, .mix = 1000, .repeat = 5 };
	struct args a = { .configs = DEFAULT_CONFIGS };
	struct config cfg[MAX_CONFIGS];
	char dir[PATH_MAX], work[PATH_MAX], mnt[PATH_MAX + 8];
	unsigned ncfg = 0;
	bool made_work = false;
	int rc;

	rc = parse_args(argc, argv, &s, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if ((rc = parse_configs(a.configs, cfg, &ncfg)))
		return rc;
	if (check_host(cfg, ncfg, a.dir, dir) < 0)
		return EXIT_FAIL;
	rc = EXIT_FAIL;
	if (make_work(a.work, dir, work, mnt, &made_work) < 0)
		goto out;
	for (unsigned i = 0; i < ncfg; i++) {
		cfg[i].runs = calloc(s.repeat, sizeof(*cfg[i].runs));
		if (!cfg[i].runs) {
			fprintf(stderr, "dcbench fsmeta: out of memory\n");
			goto out;
		}
	}
	for (unsigned i = 0; i < ncfg; i++)
		if (!strncmp(cfg[i].fs.kind, "passthrough_ll", 14)) {
			if (fsm_build_peer(work) < 0)
				goto out;
			break;
		}
	s.dir = dir;
	s.work = work;
	s.dropped = geteuid() == 0;
	rc = run_all(a.json ? stderr : stdout, &s, cfg, ncfg, mnt);
	if (interrupted) {
		fprintf(stderr, "dcbench fsmeta: interrupted\n");
		rc = EXIT_FAIL;
	}
	if (rc == EXIT_OK)
		rc = fsmeta_report(a.json ? stderr : stdout, &s, cfg, ncfg, a.json);
out:
	for (unsigned i = 0; i < ncfg; i++)
		free(cfg[i].runs);
	if (made_work) {
		rmdir(mnt);
		fsh_remove_work(CMD, work);
	}
	if (interrupted) {
		signal(interrupted, SIG_DFL);
		raise(interrupted);
	}
	return rc;
}
