// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fsmount.c - start, time and stop the file systems that kernbench and
 * fsmeta compare (fsmount.h).  The daemons run in the foreground as our
 * children, so wait4() hands us their CPU time when they end.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dcache.h"
#include "common/clock.h"
#include "common/proc.h"
#include "fs/fsmount.h"

#define PEER_EXAMPLES	"/usr/share/doc/libfuse3-dev/examples"

static const char *const kinds[] = {
	"native", "rcu", "global", "rwlock", "passthrough_ll", "passthrough_ll-dp",
	"rcu-uring", "global-uring", "rwlock-uring", "passthrough_hp", "passthrough_hp-uring",
	"nfs", "nfs-nocache",
};

/* the export the kinds "nfs" and "nfs-nocache" mount (fsm_set_nfs_url) */
static const char *nfs_url;

void fsm_set_nfs_url(const char *url)
{
	nfs_url = url;
}

bool fsm_kind_nfs(const char *kind)
{
	return !strncmp(kind, "nfs", 3);
}

/* libfuse's passthrough_hp, built by hand (fsm_set_passthrough_hp) */
static const char *passthrough_hp;

void fsm_set_passthrough_hp(const char *bin)
{
	passthrough_hp = bin;
}

const char *fsm_kind(const char *kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kind, kinds[i]))
			return kinds[i];
	return NULL;
}

bool fsm_kind_dcfs(const char *kind)
{
	return strcmp(kind, "native") && strncmp(kind, "passthrough_", 12);
}

int fsm_first_cpus(unsigned n, cpu_set_t *set)
{
	cpu_set_t all;
	unsigned got = 0;

	if (sched_getaffinity(0, sizeof(all), &all) < 0)
		return -1;
	CPU_ZERO(set);
	for (int c = 0; c < CPU_SETSIZE && got < n; c++)
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, set);
			got++;
		}
	return got == n ? 0 : -1;
}

int fsm_config_parse(const char *name, struct fsm_config *c)
{
	bool prefixed = !strncmp(name, "dcfs-", 5);
	const char *base = prefixed ? name + 5 : name;
	const char *at = strchr(base, '@'), *sl = strchr(base, '/');
	size_t klen = strcspn(base, "@/");
	char kind[32];
	const char *k;

	memset(c, 0, sizeof(*c));
	if (klen >= sizeof(kind) || (at && sl && sl < at))
		return -1;
	memcpy(kind, base, klen);
	kind[klen] = '\0';
	k = fsm_kind(kind);
	if (!k || (prefixed && !fsm_kind_dcfs(k)) || (at && !strcmp(k, "native")))
		return -1;
	/* passthrough_hp takes no timeout, only its cache on or off */
	if (!strncmp(k, "passthrough_hp", 14) && at && strcmp(at, "@0") && strcmp(at, "@default"))
		return -1;
	c->kind = k;
	c->prefixed = prefixed;
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
			/* seconds as written: digits first (strtod would take
			 * " 5", "0x10" and "-0" too) */
			if (t[0] < '0' || t[0] > '9' || strpbrk(t, "xXeEpP"))
				return -1;
			errno = 0;
			c->to = strtod(t, &end);
			if (*end || errno || !isfinite(c->to) || c->to < 0 || c->to > 86400)
				return -1;
		}
	}
	if (sl) {
		enum dc_watch_mode m;

		if (!fsm_kind_dcfs(k) || fsm_kind_nfs(k) || dc_watch_mode_parse(sl + 1, &m) ||
		    strlen(sl + 1) >= sizeof(c->coherence))
			return -1;
		snprintf(c->coherence, sizeof(c->coherence), "%s", sl + 1);
	}
	return 0;
}

bool fsm_config_same(const struct fsm_config *a, const struct fsm_config *b)
{
	return a->kind == b->kind && a->own_to == b->own_to &&
	       (!a->own_to || a->to == b->to) && !strcmp(a->coherence, b->coherence);
}

bool fsm_config_coherent(const struct fsm_config *c)
{
	return fsm_kind_dcfs(c->kind) && !fsm_kind_nfs(c->kind) && c->own_to &&
	       (c->to < 0 || c->to >= 3600) && strcmp(c->coherence, "off") &&
	       strcmp(c->coherence, "ttl");
}

bool fsm_config_peer0(const struct fsm_config *c)
{
	return !strcmp(c->kind, "passthrough_ll") && c->own_to && c->to == 0;
}

/* In the child: affinity, output, exec.  Never returns. */
static void exec_child(char *const argv[], const char *log, const cpu_set_t *cpus)
{
	if (cpus && sched_setaffinity(0, sizeof(*cpus), cpus) < 0) {
		fprintf(stderr, "dcbench: sched_setaffinity: %s\n", strerror(errno));
		_exit(127);
	}
	if (log) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
			fprintf(stderr, "dcbench: %s: %s\n", log, strerror(errno));
			_exit(127);
		}
	}
	execvp(argv[0], argv);
	fprintf(stderr, "dcbench: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static volatile sig_atomic_t *stop_flag;

void fsm_set_stop_flag(volatile sig_atomic_t *flag)
{
	stop_flag = flag;
}

int fsm_run(char *const argv[], const char *log, const cpu_set_t *cpus,
	    struct rusage *ru, double *elapsed)
{
	struct rusage r;
	double t0 = clock_s();
	bool forwarded = false;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "dcbench: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0)
		exec_child(argv, log, cpus);
	/* wait4's rusage of a child covers the children it waited for: make's
	 * compilers are in the build's user and system time.  A signal that
	 * set the stop flag (handlers installed without SA_RESTART) ends the
	 * child too: SIGTERM, once; make passes it on to its jobs. */
	while (wait4(pid, &status, 0, &r) < 0) {
		if (errno != EINTR)
			return -1;
		if (stop_flag && *stop_flag && !forwarded) {
			kill(pid, SIGTERM);
			forwarded = true;
		}
	}
	if (elapsed)
		*elapsed = clock_s() - t0;
	if (ru)
		*ru = r;
	return exit_code(status);
}

/* dcbench's own directory: the tools are built side by side (build/). */
static int sibling(const char *name, char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n < 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	if ((size_t)snprintf(out, size, "%s/%s", self, name) >= size)
		return -1;
	return access(out, X_OK);
}

/*
 * The peer is built with argv vectors, never a shell line made of paths
 * (a work directory may hold any byte); only the compile goes through sh,
 * for pkg-config's output, and gets the paths as positional parameters.
 */
int fsm_build_peer(const char *workdir)
{
	static const char *const files[] = { "passthrough_ll.c", "passthrough_helpers.h" };
	char bin[PATH_MAX], src[PATH_MAX], log[PATH_MAX];

	if ((size_t)snprintf(bin, sizeof(bin), "%s/passthrough_ll", workdir) >= sizeof(bin) ||
	    (size_t)snprintf(src, sizeof(src), "%s/passthrough_ll.c", workdir) >= sizeof(src) ||
	    (size_t)snprintf(log, sizeof(log), "%s/peer-build.log", workdir) >= sizeof(log)) {
		fprintf(stderr, "dcbench: work directory path too long: %s\n", workdir);
		return -1;
	}
	if (access(bin, X_OK) == 0)
		return 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char plain[PATH_MAX], gz[PATH_MAX + 8], dst[PATH_MAX];
		int rc;

		snprintf(plain, sizeof(plain), "%s/%s", PEER_EXAMPLES, files[i]);
		snprintf(gz, sizeof(gz), "%s.gz", plain);
		if ((size_t)snprintf(dst, sizeof(dst), "%s/%s", workdir, files[i]) >= sizeof(dst)) {
			fprintf(stderr, "dcbench: work directory path too long: %s\n", workdir);
			return -1;
		}
		if (access(plain, R_OK) == 0) {
			char *const argv[] = { "cp", plain, dst, NULL };

			rc = fsm_run(argv, log, NULL, NULL, NULL);
		} else if (access(gz, R_OK) == 0) {
			char *const argv[] = { "sh", "-c", "gzip -dc \"$1\" > \"$2\"", "sh",
					       gz, dst, NULL };

			rc = fsm_run(argv, log, NULL, NULL, NULL);
		} else {
			fprintf(stderr, "dcbench: no %s (apt-get install libfuse3-dev)\n", plain);
			return -1;
		}
		if (rc != 0) {
			fprintf(stderr, "dcbench: could not copy %s; see %s\n", files[i], log);
			return -1;
		}
	}
	{
		char *const argv[] = {
			"sh", "-c",
			"exec ${CC:-cc} -O2 -Wall -o \"$1\" \"$2\" $(pkg-config --cflags --libs fuse3)",
			"sh", bin, src, NULL
		};

		if (fsm_run(argv, log, NULL, NULL, NULL) != 0) {
			fprintf(stderr, "dcbench: could not build %s; see %s\n", bin, log);
			unlink(bin);
			return -1;
		}
	}
	return 0;
}

/* Has a file system been mounted on mnt (its device differs from its
 * parent's)? */
static bool mounted(const char *mnt)
{
	char parent[PATH_MAX];
	struct stat a, b;

	if ((size_t)snprintf(parent, sizeof(parent), "%s/..", mnt) >= sizeof(parent))
		return false;
	return stat(mnt, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

/* src as one value of a -o list: fuse_opt splits at ',' and takes '\\'
 * as an escape, so both are escaped.  0, or -1 if it does not fit. */
static int opt_escape(const char *src, char *out, size_t size)
{
	size_t k = 0;

	for (; *src; src++) {
		if (k + 3 > size)
			return -1;
		if (*src == ',' || *src == '\\')
			out[k++] = '\\';
		out[k++] = *src;
	}
	out[k] = '\0';
	return 0;
}

/* Splits extra at spaces into argv[*n...] (at most max); the copy is kept. */
static void add_words(char **argv, int *n, int max, char *copy)
{
	for (char *save, *w = strtok_r(copy, " ", &save); w && *n < max;
	     w = strtok_r(NULL, " ", &save))
		argv[(*n)++] = w;
}

/* dcfs's timeout options into argv from n (a negative timeout: none,
 * the daemon's own); the new count. */
static int dcfs_timeouts(char **argv, int n, double entry_to, char *et,
			 double attr_to, char *at)
{
	if (entry_to >= 0) {
		argv[n++] = "--entry-timeout";
		argv[n++] = et;
	}
	if (attr_to >= 0) {
		argv[n++] = "--attr-timeout";
		argv[n++] = at;
	}
	return n;
}

int fsm_start(struct fsmount *m, const char *kind, const char *src,
	      const char *mnt, double entry_to, double attr_to,
	      const cpu_set_t *cpus, const char *workdir, const char *extra)
{
	char bin[PATH_MAX], mode[64], et[32], at[32], log[PATH_MAX];
	char esc[2 * PATH_MAX], opts[2 * PATH_MAX + 128];
	char *argv[64], *extra_copy = NULL;
	int n = 0;
	double deadline;

	memset(m, 0, sizeof(*m));
	if (!fsm_kind(kind)) {
		fprintf(stderr, "dcbench: unknown file system '%s'\n", kind);
		return -1;
	}
	snprintf(m->kind, sizeof(m->kind), "%s", kind);
	if (!strcmp(kind, "native")) {
		snprintf(m->dir, sizeof(m->dir), "%s", src);
		return 0;
	}
	snprintf(m->dir, sizeof(m->dir), "%s", mnt);
	if (mounted(mnt)) {
		fprintf(stderr, "dcbench: %s is already a mount point\n", mnt);
		return -1;
	}
	snprintf(et, sizeof(et), "%g", entry_to);
	snprintf(at, sizeof(at), "%g", attr_to);
	if (!strncmp(kind, "passthrough_ll", 14)) {
		if (fsm_build_peer(workdir) < 0)
			return -1;
		snprintf(bin, sizeof(bin), "%s/passthrough_ll", workdir);
		if (opt_escape(src, esc, sizeof(esc)) < 0) {
			fprintf(stderr, "dcbench: source path too long: %s\n", src);
			return -1;
		}
		snprintf(opts, sizeof(opts), "source=%s%s%s%s", esc,
			 entry_to >= 0 ? ",timeout=" : "", entry_to >= 0 ? et : "",
			 strcmp(kind, "passthrough_ll-dp") ? "" : ",default_permissions,allow_other");
		argv[n++] = bin;
		argv[n++] = "-f";
		argv[n++] = "-o";
		argv[n++] = opts;
		argv[n++] = (char *)mnt;
	} else if (!strncmp(kind, "passthrough_hp", 14)) {
		/* its timeouts are a day, or 0 with --nocache; "-uring": libfuse's
		 * own FUSE over io_uring */
		if (!passthrough_hp) {
			fprintf(stderr, "dcbench: passthrough_hp: where is it? (--passthrough-hp BIN)\n");
			return -1;
		}
		if ((entry_to >= 0 || attr_to >= 0) && (entry_to != 0 || attr_to != 0)) {
			fprintf(stderr, "dcbench: passthrough_hp: timeouts are 0 (--nocache) "
				"or its own (a day), not entry %g s attr %g s\n", entry_to, attr_to);
			return -1;
		}
		snprintf(bin, sizeof(bin), "%s", passthrough_hp);
		argv[n++] = bin;
		argv[n++] = "--foreground";
		if (entry_to == 0)
			argv[n++] = "--nocache";
		if (strchr(kind, '-')) {
			argv[n++] = "-o";
			argv[n++] = "io_uring";
		}
		argv[n++] = (char *)src;
		argv[n++] = (char *)mnt;
	} else if (fsm_kind_nfs(kind)) {
		/* dcfs over the export that serves src; "-nocache": every name
		 * the kernel asks for is a LOOKUP RPC */
		if (!nfs_url) {
			fprintf(stderr, "dcbench: %s: which export? (--nfs URL)\n", kind);
			return -1;
		}
		if (sibling("dcfs", bin, sizeof(bin)) < 0) {
			fprintf(stderr, "dcbench: no dcfs beside dcbench (make)\n");
			return -1;
		}
		argv[n++] = bin;
		argv[n++] = (char *)nfs_url;
		argv[n++] = (char *)mnt;
		argv[n++] = "--foreground";
		n = dcfs_timeouts(argv, n, entry_to, et, attr_to, at);
		if (strchr(kind, '-')) {
			argv[n++] = "--name-cache";
			argv[n++] = "off";
		}
	} else {
		if (sibling("dcfs", bin, sizeof(bin)) < 0) {
			fprintf(stderr, "dcbench: no dcfs beside dcbench (make)\n");
			return -1;
		}
		/* "rcu-uring": dcfs --mode rcu --uring */
		snprintf(mode, sizeof(mode), "%.*s", (int)strcspn(kind, "-"), kind);
		argv[n++] = bin;
		argv[n++] = (char *)src;
		argv[n++] = (char *)mnt;
		argv[n++] = "--foreground";
		argv[n++] = "--mode";
		argv[n++] = mode;
		n = dcfs_timeouts(argv, n, entry_to, et, attr_to, at);
		if (strchr(kind, '-'))
			argv[n++] = "--uring";
	}
	if (extra && *extra) {
		extra_copy = strdup(extra);
		if (!extra_copy) {
			fprintf(stderr, "dcbench: out of memory\n");
			return -1;
		}
		add_words(argv, &n, 62, extra_copy);
	}
	argv[n] = NULL;
	snprintf(log, sizeof(log), "%s/daemon-%s.log", workdir, kind);

	fflush(NULL);
	m->pid = fork();
	if (m->pid < 0) {
		fprintf(stderr, "dcbench: fork: %s\n", strerror(errno));
		free(extra_copy);
		return -1;
	}
	if (m->pid == 0) {
		/* a process group of its own: the terminal's ^C goes to dcbench
		 * and the build, and dcbench unmounts the daemon after them,
		 * instead of the daemon vanishing under a running build */
		setpgid(0, 0);
		/* dcfs raises its own limit at start; passthrough_ll does
		 * not, and both keep a descriptor per inode the kernel holds,
		 * so the peer alone would fail with EMFILE on a tree larger
		 * than the inherited limit */
		proc_raise_nofile();
		exec_child(argv, log, cpus);
	}
	free(extra_copy);

	/* The daemon mounts, then serves: poll until the mount answers. */
	deadline = clock_s() + 30;
	while (!mounted(mnt)) {
		int status;

		if (waitpid(m->pid, &status, WNOHANG) == m->pid) {
			fprintf(stderr, "dcbench: %s exited (status %d) before the mount was live; see %s\n",
				kind, exit_code(status), log);
			m->pid = 0;
			return -1;
		}
		if (clock_s() > deadline) {
			fprintf(stderr, "dcbench: %s did not mount %s within 30 s; see %s\n",
				kind, mnt, log);
			fsm_stop(m, NULL);
			return -1;
		}
		usleep(10000);
	}
	return 0;
}

int fsm_stop(struct fsmount *m, struct rusage *ru)
{
	struct rusage r;
	int status, rc = 0;
	bool termed = false, killed = false;
	double deadline;

	if (ru)
		memset(ru, 0, sizeof(*ru));
	if (m->pid <= 0)
		return 0;
	/*
	 * Unmount first, as fusermount3 -u does: the daemon's loop then ends
	 * the ordinary way and it exits 0.  SIGTERM is the fallback (a busy
	 * mount, a daemon that lingers): libfuse's own signal handlers, which
	 * passthrough_ll uses, make its loop return the signal's number, and
	 * the example then exits 1.
	 */
	if (umount2(m->dir, 0) < 0) {
		kill(m->pid, SIGTERM);
		termed = true;
	}
	deadline = clock_s() + 10;
	for (;;) {
		pid_t p = wait4(m->pid, &status, WNOHANG, &r);

		if (p == m->pid)
			break;
		if (p < 0 && errno != EINTR) {
			fprintf(stderr, "dcbench: wait4 %s: %s\n", m->kind, strerror(errno));
			m->pid = 0;
			return -1;
		}
		if (clock_s() > deadline && !killed) {
			if (!termed) {
				kill(m->pid, SIGTERM);
				termed = true;
				deadline = clock_s() + 10;
				continue;
			}
			fprintf(stderr, "dcbench: %s did not stop on SIGTERM; killing it\n", m->kind);
			umount2(m->dir, MNT_DETACH);
			kill(m->pid, SIGKILL);
			killed = true;
			rc = -1;
		}
		usleep(10000);
	}
	/* A daemon that died without unmounting leaves a dead mount
	 * (ENOTCONN): detach whatever is still there; EINVAL if nothing. */
	umount2(m->dir, MNT_DETACH);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (rc == 0)
			fprintf(stderr, "dcbench: %s ended with status %d\n", m->kind, exit_code(status));
		rc = -1;
	}
	if (ru)
		*ru = r;
	m->pid = 0;
	return rc;
}
