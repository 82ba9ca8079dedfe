/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fsmount.h - the file systems dcbench kernbench and fsmeta measure:
 * dcfs in one of libdcache's modes, dcfs over an NFS export of the source
 * ("nfs", "nfs-nocache"), or libfuse's passthrough_ll example,
 * each run in the foreground as a child of dcbench (so its CPU time comes
 * from wait4), or "native" (nothing mounted: the source directory itself).
 */
#ifndef DCBENCH_FSMOUNT_H
#define DCBENCH_FSMOUNT_H

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

struct fsmount {
	char kind[32];		/* "native", "rcu", ..., "rcu-uring", ..., "nfs", "nfs-nocache",
				 * "passthrough_ll", "passthrough_hp" */
	pid_t pid;		/* the daemon; 0 for native */
	char dir[4096];		/* where to work: the mount point, or the source */
};

/* The name fsm_start knows kind by (a static string, so two kinds are the
 * same if the pointers are), or NULL if it knows no such kind. */
const char *fsm_kind(const char *kind);
/* Is a known kind dcfs in one of its modes ("rcu", ..., "rcu-uring", ...)? */
bool fsm_kind_dcfs(const char *kind);

/* Is a known kind dcfs over NFS ("nfs": with its name cache, "nfs-nocache":
 * without, each name a LOOKUP RPC)?  They mount the export url names,
 * whose directory is the source (fsm_start's src: what "native" works
 * in); the string is kept. */
bool fsm_kind_nfs(const char *kind);
void fsm_set_nfs_url(const char *url);

/* The binary kind "passthrough_hp" runs: libfuse's example, built by hand
 * from a libfuse tree (its C++ needs meson); the string is kept. */
void fsm_set_passthrough_hp(const char *bin);

/*
 * Mounts kind's file system mirroring src on mnt (an empty directory) and
 * returns once the mount answers; for "native" only fills m->dir = src.
 * entry_to and attr_to are the kernel's timeouts in seconds (passthrough_ll
 * has one, -o timeout=, given entry_to); a negative one is not passed, so
 * the daemon keeps its own default.  cpus, if not NULL, confines the
 * daemon.  workdir is where passthrough_ll is built (fsm_build_peer) and
 * daemon logs go (daemon-KIND.log).  0, or -1 with a message on stderr.
 */
int fsm_start(struct fsmount *m, const char *kind, const char *src,
	      const char *mnt, double entry_to, double attr_to,
	      const cpu_set_t *cpus, const char *workdir, const char *extra);

/*
 * Unmounts and reaps the daemon: umount2 (the daemon's loop ends and it
 * exits 0), SIGTERM if that is refused or the daemon lingers, then, after
 * a grace period, a lazy unmount and SIGKILL.  *ru gets the daemon's user
 * and system time (zero for native).  0 if the daemon exited with status
 * 0, else -1 with a message.
 */
int fsm_stop(struct fsmount *m, struct rusage *ru);

/*
 * Builds libfuse's passthrough_ll example from
 * /usr/share/doc/libfuse3-dev/examples into workdir (once) and returns 0,
 * or -1 with a message.  Never part of the repository.
 */
int fsm_build_peer(const char *workdir);

/* Runs argv (argv[0] searched in PATH) with stdout and stderr to log
 * (NULL: inherited), confined to cpus if not NULL.  Returns the exit
 * status (or 128 + signal), -1 if it could not be started; *ru, elapsed
 * (seconds, monotonic) when not NULL. */
int fsm_run(char *const argv[], const char *log, const cpu_set_t *cpus,
	    struct rusage *ru, double *elapsed);

/* A flag a signal handler sets: fsm_run then sends its child SIGTERM.
 * The handler must be installed without SA_RESTART, so wait4 returns. */
void fsm_set_stop_flag(volatile sig_atomic_t *flag);

/* The first n CPUs this process may run on, in *set; -1 if fewer. */
int fsm_first_cpus(unsigned n, cpu_set_t *set);

/*
 * One file system to measure, as fsmeta's --configs and kernbench's
 * --modes name it: KIND[@T][/COHERENCE].  KIND is a kind fsm_start knows
 * (a dcfs kind may be written with "dcfs-" before it); @T its own kernel
 * timeouts, T seconds (0 to 86400) or "default" (the daemon's own: dcfs
 * chooses by its coherence mode, passthrough_ll 1 s); /COHERENCE dcfs's
 * --coherence mode (a dcfs kind on the host's tree only).
 */
struct fsm_config {
	const char *kind;	/* fsm_kind's name */
	bool prefixed;		/* written "dcfs-KIND..." */
	bool own_to;		/* @T: its own timeouts (entry and attr) */
	double to;		/* ... T seconds; < 0: the daemon's default */
	char coherence[16];	/* /MODE: dcfs --coherence (empty: its default) */
};

/* Parses name into *c: 0, or -1 if it names no configuration. */
int fsm_config_parse(const char *name, struct fsm_config *c);

/* Do a and b name the same configuration ("rcu" and "dcfs-rcu", "rcu@1"
 * and "rcu@1.0" do)? */
bool fsm_config_same(const struct fsm_config *a, const struct fsm_config *b);

/* dcfs with a watcher and long timeouts: @default or @3600 and more, and
 * a coherence mode other than off and ttl. */
bool fsm_config_coherent(const struct fsm_config *c);

/* passthrough_ll at timeout 0, its only setting that shows every change. */
bool fsm_config_peer0(const struct fsm_config *c);

#endif /* DCBENCH_FSMOUNT_H */
