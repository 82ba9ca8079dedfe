// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coherence.c - `dcbench coherence` (docs/dcbench.md): how long a change
 * made directly in the source directory, behind a FUSE file system's
 * back, takes to show through the mount, and which changes never show.
 *
 * For each file system: a fresh tree in the source directory, mounted
 * (fs/fsmount.c) and read through the mount by reader threads until the
 * kernel and the daemon have all of it cached, then N random changes, one
 * at a time, the readers still reading.  Before a change the mount must
 * show the old state of every name the change touches: looking at them is
 * what puts them in the kernel's caches, where they can go stale.  After
 * it, the mount is polled until it shows, for every one of those names,
 * what the source shows.  The lag runs from the return of the change's
 * last system call to the end of the first poll that agreed; a change
 * not seen within --give-up-ms is counted as never seen.  A share of the
 * changes is made through the mount instead, and must show in the source
 * and through the mount at once.
 *
 * With --flood N, before the first change and then every quarter of the
 * changes, many threads make N empty files as fast as the source takes
 * them, in a directory of the tree that no change touches, and go on
 * making more until the next change has been made (directly in the
 * source), then remove them all: a watcher of the source (dcfs's
 * coherence) falls behind, its event queue overflows, the change's event
 * is likely dropped, and the change must still show, as must every change
 * after it.  Afterwards the daemon's log tells how many overflows it saw.
 *
 * The parts, in this folder: run.h (what they share), tree.c, readers.c,
 * names.c, view.c (looking at a name), plan.c and change.c (a change),
 * lag.c (timing it), flood.c, kind.c (one file system's run), report.c,
 * util.c; this file is the command line.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fs/fsmount.h"
#include "fs/host.h"
#include "fs/coherence/coherence.h"
#include "fs/coherence/run.h"

#define CMD		"coherence"

const char dcb_coherence_help[] =
"usage: dcbench coherence --fs KIND[,KIND...] [--source DIR] [--mount DIR]\n"
"                         [--changes N] [--bound-ms B] [--give-up-ms G] [--seed S]\n"
"                         [--readers R] [--through-mount PERCENT] [--peer-timeout S]\n"
"                         [--dcfs-args \"ARGS\"] [--workdir DIR] [--json FILE]\n"
"                         [--flood N [--require-overflow]] [--require-bound]\n"
"\n"
"For each KIND: makes a fresh tree in the source directory, mounts it, reads\n"
"all of it through the mount, then makes N random changes directly in the\n"
"source, one at a time, while R threads keep reading through the mount.\n"
"Before each change the mount must show the old state of the names it\n"
"touches; after it, the mount is polled every 200 us until it shows what the\n"
"source shows (type, mode, owner, size, links, symlink target, contents,\n"
"xattr, directory listing).  Reports the lag per kind of change: p50, p99,\n"
"max, how many took longer than B ms, how many were never seen within G ms.\n"
"\n"
"  --fs KIND[,...]     file systems: rcu, global, rwlock (dcfs in that mode,\n"
"                      with its own default timeouts), rcu-uring, ...\n"
"                      (with --uring), passthrough_ll, passthrough_ll-dp\n"
"                      (libfuse's example, built in the work directory), and\n"
"                      native (no mount: a control, every lag about 0)\n"
"  --source DIR        the directory mounted; each tree is made in a new\n"
"                      directory in it, removed afterwards (default WORKDIR/src)\n"
"  --mount DIR         the mount point, an empty directory (default WORKDIR/mnt)\n"
"  --changes N         changes per file system (default 1000)\n"
"  --bound-ms B        a change seen later than this is stale (default 100)\n"
"  --give-up-ms G      a change not seen by then is never seen (default 3000)\n"
"  --seed S            the tree and the changes (default 1; the same for each KIND)\n"
"  --readers R         threads reading through the mount all along (default 2)\n"
"  --through-mount P   percent of the changes made through the mount (default 10)\n"
"  --peer-timeout S    passthrough_ll's -o timeout= in seconds (default: its own, 1 s)\n"
"  --dcfs-args \"ARGS\"  more dcfs options, split at spaces (e.g. \"--attr-timeout 0\");\n"
"                      --dcfs-opts is the same\n"
"  --workdir DIR       passthrough_ll's build, the daemons' logs, the default source\n"
"                      and mount point; kept.  Default: a new directory under\n"
"                      $TMPDIR or /tmp, removed afterwards\n"
"  --json FILE         the results as one JSON document in FILE ('-': stdout, and\n"
"                      the report goes to stderr)\n"
"  --flood N           before the first change and then every quarter of them,\n"
"                      make N empty files in the tree's " FLOOD_DIR " as fast as\n"
"                      possible, and more while the next change is made (in the\n"
"                      source), then remove them: the daemon's event queue\n"
"                      overflows (default 0: no floods); the report says how many\n"
"                      overflows dcfs logged\n"
"  --require-overflow  with --flood: exit 1 if a dcfs kind logged no overflow\n"
"  --require-bound     exit 1 if any change was seen later than B ms, never seen,\n"
"                      or failed\n"
"  -h, --help          this help\n"
"\n"
"Needs root (mounts, chown) and /dev/fuse.\n"
"Exit status: 0 if every file system ran; 1 if one could not be set up, mounted\n"
"or stopped cleanly (or --require-bound or --require-overflow was not met);\n"
"2 usage error.\n";

volatile sig_atomic_t coh_interrupted;

static void on_signal(int sig)
{
	coh_interrupted = sig;
}

static int parse_kinds(const char *list, struct setup *s)
{
	char name[32];

	s->nkinds = 0;
	for (const char *p = list;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *k;
		bool dup = false;

		if (len >= sizeof(name))
			len = sizeof(name) - 1;
		memcpy(name, p, len);
		name[len] = '\0';
		k = fsm_kind(name);
		if (!k)
			return cli_usage(CMD, "--fs: '%s' is not rcu, global, rwlock, rcu-uring, "
					 "global-uring, rwlock-uring, passthrough_ll, "
					 "passthrough_ll-dp or native", name);
		for (unsigned i = 0; i < s->nkinds; i++)
			dup |= s->kinds[i] == k;
		if (!dup && s->nkinds < MAX_KINDS)
			s->kinds[s->nkinds++] = k;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/* An existing directory given on the command line, made absolute. */
static int existing_dir(const char *opt, const char *arg, char *out)
{
	struct stat st;

	if (!realpath(arg, out) || stat(out, &st) < 0)
		return cli_usage(CMD, "%s %s: %s", opt, arg, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cli_usage(CMD, "%s %s: not a directory", opt, arg);
	return 0;
}

static bool empty_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = true;

	if (!d)
		return false;
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

struct args {
	const char *fs, *source, *mount, *work;
};

/* An option's number, unless the option was refused already (bad). */
static int num(int bad, const char *opt, const char *v, unsigned lo, unsigned hi,
	       unsigned *out)
{
	return bad ? bad : cli_uint(CMD, opt, v, lo, hi, out);
}

/* 0, -1 after --help, or the exit status of a usage error. */
static int parse_args(int argc, char **argv, struct setup *s, struct args *a)
{
	int bad = 0;

	for (int i = 1; i < argc && !bad; i++) {
		const char *v = NULL;

		if (cli_opt(CMD, argc, argv, &i, "fs", true, &v, &bad))
			a->fs = v;
		else if (cli_opt(CMD, argc, argv, &i, "source", true, &v, &bad))
			a->source = v;
		else if (cli_opt(CMD, argc, argv, &i, "mount", true, &v, &bad))
			a->mount = v;
		else if (cli_opt(CMD, argc, argv, &i, "workdir", true, &v, &bad))
			a->work = v;
		else if (cli_opt(CMD, argc, argv, &i, "changes", true, &v, &bad))
			bad = num(bad, "--changes", v, 1, 10000000, &s->changes);
		else if (cli_opt(CMD, argc, argv, &i, "bound-ms", true, &v, &bad))
			bad = num(bad, "--bound-ms", v, 0, 3600000, &s->bound_ms);
		else if (cli_opt(CMD, argc, argv, &i, "give-up-ms", true, &v, &bad))
			bad = num(bad, "--give-up-ms", v, 1, 3600000, &s->give_up_ms);
		else if (cli_opt(CMD, argc, argv, &i, "seed", true, &v, &bad))
			bad = num(bad, "--seed", v, 0, UINT_MAX, &s->seed);
		else if (cli_opt(CMD, argc, argv, &i, "readers", true, &v, &bad))
			bad = num(bad, "--readers", v, 0, MAX_READERS, &s->readers);
		else if (cli_opt(CMD, argc, argv, &i, "through-mount", true, &v, &bad))
			bad = num(bad, "--through-mount", v, 0, 100, &s->through);
		else if (cli_opt(CMD, argc, argv, &i, "peer-timeout", true, &v, &bad))
			bad = bad ? bad : cli_seconds(CMD, "--peer-timeout", v, &s->peer_to);
		else if (cli_opt(CMD, argc, argv, &i, "dcfs-args", true, &v, &bad) ||
			 cli_opt(CMD, argc, argv, &i, "dcfs-opts", true, &v, &bad))
			s->dcfs_args = v;
		else if (cli_opt(CMD, argc, argv, &i, "json", true, &v, &bad))
			s->json = v;
		else if (cli_opt(CMD, argc, argv, &i, "require-bound", false, &v, &bad))
			s->require = true;
		else if (cli_opt(CMD, argc, argv, &i, "flood", true, &v, &bad))
			bad = num(bad, "--flood", v, 0, 10000000, &s->flood);
		else if (cli_opt(CMD, argc, argv, &i, "require-overflow", false, &v, &bad))
			s->require_overflow = true;
		else if (!strcmp(argv[i], "-h") || cli_opt(CMD, argc, argv, &i, "help", false, &v, &bad)) {
			if (!bad)
				fputs(dcb_coherence_help, stdout);
			return bad ? bad : -1;
		} else
			return cli_usage(CMD, "unknown option or argument '%s'", argv[i]);
	}
	if (bad)
		return bad;
	if (!a->fs)
		return cli_usage(CMD, "which file systems? (--fs KIND[,KIND...])");
	if (s->require_overflow && !s->flood)
		return cli_usage(CMD, "--require-overflow needs --flood N");
	return parse_kinds(a->fs, s);
}

/* Is a equal to b or below it (both absolute and canonical)? */
static bool inside(const char *a, const char *b)
{
	return !strcmp(b, "/") || coh_within(a, b);
}

/* The work directory, then the source and the mount point in it unless
 * given.  made[]: what to remove at the end (work, source, mount). */
static int prepare_dirs(struct setup *s, const struct args *a, bool made[3])
{
	enum fsh_work how;
	char path[PATH_MAX];

	if (fsh_make_work(CMD, "--workdir", a->work, s->work, &how) < 0)
		return EXIT_FAIL;
	made[0] = how == FSH_WORK_TEMP;
	for (int k = 1; k < 3; k++) {
		char *dst = k == 1 ? s->source : s->mount;

		if ((k == 1 ? a->source : a->mount))
			continue;
		coh_put(path, sizeof(path), "%s/%s", s->work, k == 1 ? "src" : "mnt");
		if (mkdir(path, 0755) == 0)
			made[k] = true;
		else if (errno != EEXIST) {
			fprintf(stderr, "dcbench coherence: %s: %s\n", path, strerror(errno));
			return EXIT_FAIL;
		}
		coh_put(dst, PATH_MAX, "%s", path);
	}
	if (strlen(s->source) + 2 * REL_MAX + 64 > PATH_MAX ||
	    strlen(s->mount) + 2 * REL_MAX + 64 > PATH_MAX) {
		fprintf(stderr, "dcbench coherence: the source or mount path is too long\n");
		return EXIT_FAIL;
	}
	return 0;
}

static void remove_work(const struct setup *s, const bool made[3])
{
	if (made[2])
		rmdir(s->mount);
	if (made[1])
		rmdir(s->source);
	if (made[0])
		fsh_remove_work(CMD, s->work);
}

/* What the command needs before it makes anything: 0 or an exit status. */
static int check_host(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "dcbench coherence: needs root: it mounts file systems and "
			"chowns files\n");
		return EXIT_FAIL;
	}
	return fsh_check_fuse(CMD) < 0 ? EXIT_FAIL : 0;
}

/* The source and the mount point, once both are known. */
static int check_dirs(const struct setup *s)
{
	if (inside(s->mount, s->source) || inside(s->source, s->mount))
		return cli_usage(CMD, "the mount point %s and the source %s must not contain "
				 "one another", s->mount, s->source);
	if (!empty_dir(s->mount))
		return cli_usage(CMD, "--mount %s: not an empty directory", s->mount);
	return 0;
}

static void set_defaults(struct setup *s)
{
	memset(s, 0, sizeof(*s));
	s->changes = 1000;
	s->bound_ms = 100;
	s->give_up_ms = 3000;
	s->seed = 1;
	s->readers = 2;
	s->through = 10;
	s->peer_to = -1;
}

/* Each file system's run, its buffers; -1 when out of memory. */
static int alloc_runs(struct setup *s, struct run **out)
{
	struct run *runs = calloc(s->nkinds, sizeof(*runs));

	*out = runs;
	if (!runs)
		return -1;
	for (unsigned i = 0; i < s->nkinds; i++) {
		struct run *r = &runs[i];

		r->s = s;
		r->kind = s->kinds[i];
		pthread_mutex_init(&r->names.lock, NULL);
		pthread_mutex_init(&r->quar.lock, NULL);
		r->buf = malloc(DATA_MAX + 1);
		r->old = malloc(2 * DATA_MAX);
		r->recs = calloc(s->changes, sizeof(*r->recs));
		if (!r->buf || !r->old || !r->recs)
			return -1;
	}
	return 0;
}

static void free_runs(const struct setup *s, struct run *runs)
{
	if (runs)
		for (unsigned i = 0; i < s->nkinds; i++) {
			free(runs[i].buf);
			free(runs[i].old);
			free(runs[i].recs);
			free(runs[i].names.e);
			free(runs[i].quar.e);
			coh_witness_free(&runs[i].wit);
		}
	free(runs);
}

/* Every file system in turn, each reported as soon as it has run. */
static void run_all(const struct setup *s, struct run *runs, FILE *rep)
{
	struct sigaction old[3];

	/* A signal ends the change in hand; then the readers stop, the file
	 * system is unmounted, the trees removed and the signal's default
	 * action taken. */
	fsh_catch_signals(on_signal, old);
	fprintf(rep, "coherence: %u changes per file system (seed %u), %u%% through the mount, "
		"%u reader%s; bound %u ms, give up after %u ms; source %s, mount %s\n",
		s->changes, s->seed, s->through, s->readers, s->readers == 1 ? "" : "s",
		s->bound_ms, s->give_up_ms, s->source, s->mount);
	for (unsigned i = 0; i < s->nkinds && !coh_interrupted; i++) {
		struct run *r = &runs[i];

		r->tried = true;
		coh_run_kind(r);
		if (coh_summarise(r) < 0) {
			fprintf(stderr, "dcbench coherence: out of memory\n");
			r->ran = false;
		}
		coh_print_kind(rep, r);
		fflush(rep);
	}
	fsh_restore_signals(old);
}

/* The closing summary and what --require-* asks: the exit status;
 * *failed when a file system did not run. */
static int verdict(const struct setup *s, const struct run *runs, FILE *rep, bool *failed)
{
	bool over = false, no_overflow = false;
	int rc;

	fprintf(rep, "\n");
	for (unsigned i = 0; i < s->nkinds; i++) {
		const struct run *r = &runs[i];

		if (r->tried)
			coh_print_verdict(rep, r);
		*failed |= !r->ran;
		over |= r->all.over || r->all.failed;
		no_overflow |= r->ran && fsm_kind_dcfs(r->kind) && r->overflows <= 0;
	}
	rc = *failed || coh_interrupted ? EXIT_FAIL : EXIT_OK;
	if (s->require && over) {
		fprintf(rep, "coherence: --require-bound: not met (a change stale past %u ms, "
			"never seen, or failed)\n", s->bound_ms);
		rc = EXIT_FAIL;
	}
	if (s->require_overflow && no_overflow) {
		fprintf(rep, "coherence: --require-overflow: not met (a dcfs kind logged no "
			"overflow of its event queue)\n");
		rc = EXIT_FAIL;
	}
	return rc;
}

static int save_json(const struct setup *s, struct run *runs)
{
	FILE *f = strcmp(s->json, "-") ? fopen(s->json, "w") : stdout;

	if (!f || coh_write_json(s, runs, f) < 0 || (f != stdout && fclose(f) != 0)) {
		fprintf(stderr, "dcbench coherence: cannot write %s: %s\n", s->json,
			strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int dcb_coherence_main(int argc, char **argv)
{
	struct setup s;
	struct args a = { 0 };
	struct run *runs = NULL;
	bool made[3] = { false, false, false };
	bool failed = false;
	FILE *rep = stdout;
	int rc;

	set_defaults(&s);
	rc = parse_args(argc, argv, &s, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (a.source && (rc = existing_dir("--source", a.source, s.source)))
		return rc;
	if (a.mount && (rc = existing_dir("--mount", a.mount, s.mount)))
		return rc;
	if (s.json && !strcmp(s.json, "-"))
		rep = stderr;
	if ((rc = check_host()))
		return rc;
	if ((rc = prepare_dirs(&s, &a, made)) || (rc = check_dirs(&s)))
		goto out;
	s.umask = umask(0);
	umask(s.umask);
	if (alloc_runs(&s, &runs) < 0) {
		fprintf(stderr, "dcbench coherence: out of memory\n");
		rc = EXIT_FAIL;
		goto out;
	}
	run_all(&s, runs, rep);
	rc = verdict(&s, runs, rep, &failed);
	if (s.json && !coh_interrupted && save_json(&s, runs))
		rc = EXIT_FAIL;
	if (failed && made[0]) {
		fprintf(stderr, "dcbench coherence: kept %s for the daemons' logs\n", s.work);
		made[0] = false;
	}
out:
	free_runs(&s, runs);
	remove_work(&s, made);
	if (coh_interrupted) {
		fprintf(stderr, "dcbench coherence: interrupted\n");
		signal(coh_interrupted, SIG_DFL);
		raise(coh_interrupted);
	}
	return rc;
}
