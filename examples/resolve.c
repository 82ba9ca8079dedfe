/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * resolve DIR PATH... - resolve each PATH below DIR through libdcache
 * (a hostfs backend over DIR), twice: the first time misses go to DIR,
 * the second time every component is answered from the cache.
 *
 *   cc resolve.c $(pkg-config --cflags --libs dcache) -o resolve
 */
#include <dcache.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct dc_options o = { .mode = DC_MODE_RCU };
	struct dc_stats st;
	struct dc_cache *c;
	int err, bad = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DIR PATH...\n", argv[0]);
		return 2;
	}
	err = dc_hostfs_backend(argv[1], &o.backend);
	if (!err)
		err = dc_cache_create(&o, &c);
	if (err) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	for (int round = 0; round < 2; round++) {
		for (int i = 2; i < argc; i++) {
			struct dc_inode in;

			err = dc_resolve(c, NULL, argv[i], 0, &in);
			if (round == 1)
				continue;
			if (err) {
				printf("%s\t%s\n", argv[i], strerror(-err));
				bad = 1;
			} else {
				printf("%s\tinode %llu mode %o owner %u:%u\n", argv[i],
				       (unsigned long long)in.ino, in.mode,
				       in.uid, in.gid);
			}
		}
	}
	dc_get_stats(c, &st);
	printf("lookups %llu, hits %llu, misses %llu\n",
	       (unsigned long long)st.lookups, (unsigned long long)st.hits,
	       (unsigned long long)st.misses);
	dc_cache_destroy(c);
	return bad;
}
