// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * remote_main.c - dcfs over NFS: the command line, the export checked
 * before the fork and the cache made after it, the mount and its loop,
 * and the statistics at the end.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "remote.h"
#include "remote_fs.h"

struct ropts {
	const char *url, *mountpoint, *stats;
	char *fuse_opts;		/* every -o given, joined by commas */
	bool foreground, debug;
	unsigned threads;
	uint32_t ttl_ms, neg_ttl_ms;
	/* trust in attributes seen (ms): files (--ac, --acregmax) and
	 * directories (--acdir, --acdirmax); a max of -1: not given */
	int64_t acreg_min, acreg_max, acdir_min, acdir_max;
	enum { LC_ALL, LC_POSITIVE, LC_NONE } lookupcache;
};

static const char remote_usage[] =
"usage: dcfs nfs://HOST/EXPORT MOUNTPOINT [-f] [-d] [-o OPT[,OPT...]]\n"
"            [--threads N] [--entry-timeout S] [--attr-timeout S]\n"
"            [--ttl MS] [--neg-ttl MS] [--ac MS] [--acregmax MS]\n"
"            [--acdir MS] [--acdirmax MS] [--actimeo MS]\n"
"            [--lookupcache all|positive|none] [--name-cache on|off]\n"
"            [--stats FILE]\n"
"\n"
"Serves an NFS export (NFSv3; NFSv4 with ?version=4) through FUSE, its\n"
"names in libdcache (one LOOKUP per name missed), everything else by file\n"
"handle.  See docs/dcfs.md, \"Over NFS\", for what a second client sees\n"
"and when.\n"
"\n"
"  -f, --foreground    stay in the foreground\n"
"  -d                  libfuse's debug output (implies -f)\n"
"  -o OPT              a mount option for libfuse (fsname=, allow_root, ...)\n"
"  --threads N         requests served at once (default 8)\n"
"  --entry-timeout S   how long the kernel keeps a name (default 1)\n"
"  --attr-timeout S    how long the kernel keeps attributes (default 1)\n"
"  --ttl MS            how long the cache trusts a name before it asks\n"
"                      whether its directory changed (default 1000)\n"
"  --neg-ttl MS        the same for an absent name (default 1000)\n"
"  --ac MS             a file's (not a directory's) attributes seen this\n"
"                      recently answer the kernel's lookups and getattrs\n"
"                      without a GETATTR (default 1000; 0: always ask;\n"
"                      open always asks)\n"
"  --acregmax MS       ... and for longer, a tenth of how long the file\n"
"                      had been unchanged when seen, up to MS (default\n"
"                      60000; --ac alone: --ac's, a fixed time)\n"
"  --acdir MS          the same for a directory's attributes, which also\n"
"                      say whether its names changed (default 100)\n"
"  --acdirmax MS       the same as --acregmax for directories (default\n"
"                      60000; --acdir alone: --acdir's)\n"
"  --actimeo MS        --ac and --acdir both MS, a fixed time (NFS's\n"
"                      actimeo; 0: always ask)\n"
"  --lookupcache all|positive|none\n"
"                      which answers are kept, as NFS's option (default all)\n"
"  --name-cache off    no name cache: each name the kernel asks for is a\n"
"                      LOOKUP RPC (a baseline to measure the cache by)\n"
"  --stats FILE        at unmount, write RPC and cache counts to FILE\n";

static void __attribute__((noreturn, format(printf, 1, 2)))
remote_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("dcfs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n\n", stderr);
	fputs(remote_usage, stderr);
	exit(2);
}

/* One more -o: libfuse takes them all, as one list. */
static void add_fuse_opts(struct ropts *o, const char *v)
{
	size_t n = o->fuse_opts ? strlen(o->fuse_opts) : 0;
	char *all = realloc(o->fuse_opts, n + strlen(v) + 2);

	if (!all) {
		fprintf(stderr, "dcfs: out of memory\n");
		exit(1);
	}
	sprintf(all + n, "%s%s", n ? "," : "", v);
	o->fuse_opts = all;
}

/* A whole number in [0, max] from s, or a usage error naming opt. */
static uint64_t number(const char *opt, const char *s, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > max)
		remote_usage_error("%s takes a whole number from 0 to %llu, not '%s'",
				   opt, (unsigned long long)max, s);
	return v;
}

static double seconds(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1e9)
		remote_usage_error("%s takes seconds (0 or more), not '%s'", opt, s);
	return v;
}

/*
 * One pair of trust bounds (ms; a max of -1: not given): a min given
 * alone fixes the trust, as NFS's actimeo; a max given alone below the
 * default min lowers the min to it; both given, the max may not be below
 * the min.  A min of 0 always asks, whatever the max.
 */
static void trust_bounds(const char *min_opt, int64_t *min, bool min_given,
			 const char *max_opt, int64_t *max)
{
	if (*max < 0)
		*max = min_given ? *min : 60000;
	else if (*max < *min && min_given)
		remote_usage_error("%s %lld is below %s %lld", max_opt,
				   (long long)*max, min_opt, (long long)*min);
	else if (*max < *min)
		*min = *max;
	if (!*min)
		*max = 0;
}

static void parse(int argc, char **argv, struct ropts *o)
{
	static const struct option longs[] = {
		{ "threads", required_argument, NULL, 'T' },
		{ "entry-timeout", required_argument, NULL, 'E' },
		{ "attr-timeout", required_argument, NULL, 'A' },
		{ "ttl", required_argument, NULL, 't' },
		{ "neg-ttl", required_argument, NULL, 'n' },
		{ "acdir", required_argument, NULL, 'a' },
		{ "ac", required_argument, NULL, 'c' },
		{ "acregmax", required_argument, NULL, 'C' },
		{ "acdirmax", required_argument, NULL, 'D' },
		{ "actimeo", required_argument, NULL, 'O' },
		{ "lookupcache", required_argument, NULL, 'l' },
		{ "stats", required_argument, NULL, 's' },
		{ "name-cache", required_argument, NULL, 'N' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool acreg_given = false, acdir_given = false;
	int c;

	while ((c = getopt_long(argc, argv, "fdo:h", longs, NULL)) != -1) {
		switch (c) {
		case 'f': o->foreground = true; break;
		case 'd': o->debug = o->foreground = true; break;
		case 'o': add_fuse_opts(o, optarg); break;
		case 'T': o->threads = (unsigned)number("--threads", optarg, 1024);
			  if (!o->threads)
				  remote_usage_error("--threads is at least 1");
			  break;
		case 'E': rs.entry_timeout = seconds("--entry-timeout", optarg); break;
		case 'A': rs.attr_timeout = seconds("--attr-timeout", optarg); break;
		case 't': o->ttl_ms = (uint32_t)number("--ttl", optarg, UINT32_MAX - 1); break;
		case 'n': o->neg_ttl_ms = (uint32_t)number("--neg-ttl", optarg, UINT32_MAX - 1); break;
		case 'a': o->acdir_min = (int64_t)number("--acdir", optarg, UINT32_MAX - 1);
			  acdir_given = true;
			  break;
		case 'c': o->acreg_min = (int64_t)number("--ac", optarg, UINT32_MAX - 1);
			  acreg_given = true;
			  break;
		case 'C': o->acreg_max = (int64_t)number("--acregmax", optarg, UINT32_MAX - 1); break;
		case 'D': o->acdir_max = (int64_t)number("--acdirmax", optarg, UINT32_MAX - 1); break;
		case 'O': o->acreg_min = o->acdir_min =
				(int64_t)number("--actimeo", optarg, UINT32_MAX - 1);
			  acreg_given = acdir_given = true;
			  break;
		case 'l':
			if (!strcmp(optarg, "all"))
				o->lookupcache = LC_ALL;
			else if (!strcmp(optarg, "positive"))
				o->lookupcache = LC_POSITIVE;
			else if (!strcmp(optarg, "none"))
				o->lookupcache = LC_NONE;
			else
				remote_usage_error("--lookupcache is all, positive or none, not '%s'",
						   optarg);
			break;
		case 's': o->stats = optarg; break;
		case 'N':
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				remote_usage_error("--name-cache is on or off, not '%s'", optarg);
			rs.no_names = !strcmp(optarg, "off");
			break;
		case 'h': fputs(remote_usage, stdout); exit(0);
		default: remote_usage_error("unknown option (see above)");
		}
	}
	if (argc - optind != 2)
		remote_usage_error("give nfs://HOST/EXPORT and MOUNTPOINT");
	o->url = argv[optind];
	o->mountpoint = argv[optind + 1];
	{
		char why[160];

		if (dcnfs_url_check(o->url, why, sizeof(why)))
			remote_usage_error("%s: %s", o->url, why);
	}
	trust_bounds("--ac", &o->acreg_min, acreg_given, "--acregmax", &o->acreg_max);
	trust_bounds("--acdir", &o->acdir_min, acdir_given, "--acdirmax", &o->acdir_max);
	rs.acreg_min_ms = o->acreg_min;
	rs.acreg_max_ms = o->acreg_max;
	rs.acdir_min_ms = o->acdir_min;
	rs.acdir_max_ms = o->acdir_max;
}

static struct dcnfs_options backend_options(const struct ropts *o)
{
	/* lookupcache none: no attributes reused to check an answer;
	 * positive: an absent name is checked before each use, against
	 * directory attributes at most --acdir old, not by their age */
	struct dcnfs_options no = {
		.acdir_ms = o->acdir_min && o->lookupcache != LC_NONE ?
			    (uint32_t)o->acdir_min : DCNFS_ACDIR_OFF,
		.acdir_max_ms = o->lookupcache == LC_ALL ? (uint32_t)o->acdir_max : 0,
	};

	return no;
}

/* Can the export be mounted?  Said on stderr if not. */
static int check_export(const struct ropts *o)
{
	struct dcnfs_options no = backend_options(o);
	struct dc_backend be;
	int err = dcnfs_open(o->url, &no, &be);

	if (err) {
		fprintf(stderr, "dcfs: %s: %s\n", o->url, strerror(-err));
		return -1;
	}
	be.ops->destroy(be.ctx);
	return 0;
}

/* The cache over the export, and the root node. */
static int open_cache(const struct ropts *o)
{
	struct dcnfs_options no = backend_options(o);
	struct dc_options co = { .mode = DC_MODE_RCU };
	struct dc_inode in;
	struct stat st;
	int err = dcnfs_open(o->url, &no, &rs.be);

	if (err) {
		fprintf(stderr, "dcfs: %s: %s\n", o->url, strerror(-err));
		return -1;
	}
	co.backend = rs.be;
	/* as NFS's lookupcache: answers of that kind expire at once */
	co.ttl_ms = o->lookupcache == LC_NONE ? 1 : o->ttl_ms;
	co.neg_ttl_ms = o->lookupcache != LC_ALL ? 1 : o->neg_ttl_ms;
	err = dc_cache_create(&co, &rs.cache);
	if (err) {	/* the cache destroyed the backend */
		fprintf(stderr, "dcfs: cache: %s\n", strerror(-err));
		return -1;
	}
	rs.root.dentry = dc_root(rs.cache);
	err = dc_dentry_stat(rs.root.dentry, &in);
	if (!err)
		err = dcnfs_inode_fh(&in, &rs.root.fh);
	if (!err)
		err = dcnfs_getattr(&rs.be, NULL, &rs.root.fh, &st);
	if (err) {
		fprintf(stderr, "dcfs: %s: its root: %s\n", o->url, strerror(-err));
		return -1;
	}
	rs.root.dev = (uint64_t)st.st_dev;
	rs.root.ino = st.st_ino;
	rs.root.type = S_IFDIR;
	return 0;
}

static void write_stats(const char *path)
{
	struct dcnfs_stats ns;
	struct dc_stats cs;
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "dcfs: --stats %s: %s\n", path, strerror(errno));
		return;
	}
	dcnfs_stats(&rs.be, &ns);
	dc_get_stats(rs.cache, &cs);
	fprintf(f, "rpc LOOKUP=%" PRIu64 " GETATTR=%" PRIu64 " READDIR=%" PRIu64
		" READLINK=%" PRIu64 " READ=%" PRIu64 " WRITE=%" PRIu64
		" COMMIT=%" PRIu64 " updates=%" PRIu64 " SETATTR=%" PRIu64
		" connects=%" PRIu64 " retries=%" PRIu64 " revalidations=%" PRIu64
		" later=%" PRIu64 "\n",
		ns.lookups, ns.getattrs, ns.readdirs, ns.readlinks, ns.reads,
		ns.writes, ns.commits, ns.updates, ns.setattrs, ns.connects,
		ns.retries, ns.revalidations, ns.later);
	fprintf(f, "cache lookups=%" PRIu64 " hits=%" PRIu64 " misses=%" PRIu64 "\n",
		cs.lookups, cs.hits, cs.misses);
	if (fclose(f))
		fprintf(stderr, "dcfs: --stats %s: %s\n", path, strerror(errno));
}

/* libfuse's arguments: the options always given, then the user's. */
static int fuse_args_of(const struct ropts *o, char *argv0, struct fuse_args *a)
{
	char base[PATH_MAX + 96];

	snprintf(base, sizeof(base), "default_permissions%s,subtype=dcfs,fsname=%s",
		 geteuid() == 0 ? ",allow_other" : "", o->url);
	if (strchr(o->url, ',') || strchr(o->url, '\\'))
		return -EINVAL;
	if (fuse_opt_add_arg(a, argv0) || fuse_opt_add_arg(a, "-o") ||
	    fuse_opt_add_arg(a, base) ||
	    (o->fuse_opts && (fuse_opt_add_arg(a, "-o") ||
			      fuse_opt_add_arg(a, o->fuse_opts))) ||
	    (o->debug && fuse_opt_add_arg(a, "-d")))
		return -ENOMEM;
	return 0;
}

int remote_main(int argc, char **argv)
{
	struct ropts o = { .threads = 8, .ttl_ms = 1000, .neg_ttl_ms = 1000,
			   .acreg_min = 1000, .acreg_max = -1,
			   .acdir_min = 100, .acdir_max = -1 };
	struct fuse_args fa = FUSE_ARGS_INIT(0, NULL);
	struct fuse_loop_config *cfg;
	int ret = 1;

	rs.entry_timeout = rs.attr_timeout = 1.0;
	parse(argc, argv, &o);
	if (o.lookupcache == LC_NONE)
		rs.entry_timeout = 0;
	rs.neg_timeout = o.lookupcache == LC_ALL ? rs.entry_timeout : 0;
	/* the cache's threads would not survive fuse_daemonize's fork: it is
	 * made after, and the export checked before, while errors still
	 * reach the terminal and the exit status */
	if (check_export(&o))
		goto out;
	if (fuse_args_of(&o, argv[0], &fa)) {
		fprintf(stderr, "dcfs: %s: a ',' or '\\' in the URL cannot be a "
			"mount option\n", o.url);
		goto out;
	}
	rs.se = fuse_session_new(&fa, &remote_ops, sizeof(remote_ops), NULL);
	if (!rs.se) {
		fprintf(stderr, "dcfs: libfuse refused the mount options (see above)\n");
		goto out;
	}
	if (fuse_set_signal_handlers(rs.se) ||
	    fuse_session_mount(rs.se, o.mountpoint)) {
		fprintf(stderr, "dcfs: could not mount on '%s'\n", o.mountpoint);
		goto destroy;
	}
	if (fuse_daemonize(o.foreground)) {
		fprintf(stderr, "dcfs: could not go into the background\n");
		goto unmount;
	}
	if (open_cache(&o)) {
		syslog(LOG_ERR, "dcfs: %s: the export failed at start (see above)",
		       o.url);
		goto unmount;
	}
	cfg = fuse_loop_cfg_create();
	if (!cfg) {
		fprintf(stderr, "dcfs: out of memory\n");
		goto unmount;
	}
	fuse_loop_cfg_set_max_threads(cfg, o.threads);
	ret = fuse_session_loop_mt(rs.se, cfg) ? 1 : 0;
	fuse_loop_cfg_destroy(cfg);
unmount:
	fuse_session_unmount(rs.se);
	fuse_remove_signal_handlers(rs.se);
destroy:
	fuse_session_destroy(rs.se);
out:
	fuse_opt_free_args(&fa);
	free(o.fuse_opts);
	if (rs.cache && o.stats)
		write_stats(o.stats);
	if (rs.cache) {
		rnodes_free_all();
		if (rs.root.dentry)
			dc_put(rs.cache, rs.root.dentry);
		dc_cache_destroy(rs.cache);
	}
	return ret;
}
