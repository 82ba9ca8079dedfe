/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * watch DIR SECONDS - a cache over DIR kept true by a watcher while
 * another program changes DIR: each change the watcher tells the cache
 * of is printed, and every second the cache's answer for each name given
 * on stdin (one a line) is shown again.
 *
 *   cc watch.c $(pkg-config --cflags --libs dcache) -o watch
 */
#include <dcache.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void changed(void *arg, const struct dc_change_event *ev)
{
	(void)arg;
	if (ev->what == DC_CHANGE_NAME)
		printf("changed: %.*s in directory %llu\n", (int)ev->len, ev->name,
		       (unsigned long long)ev->dir_ino);
	else
		printf("changed: %s\n", ev->what == DC_CHANGE_ALL ? "everything" : "an inode");
	fflush(stdout);
}

static void log_line(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "watch: %s\n", msg);
}

int main(int argc, char **argv)
{
	struct dc_options o = { .mode = DC_MODE_RCU };
	struct dc_watch_options wo = { .mode = DC_WATCH_AUTO, .changed = changed,
				       .log = log_line };
	char names[64][256];
	struct dc_watch *w;
	struct dc_cache *c;
	int n = 0, seconds, err;

	if (argc != 3 || (seconds = atoi(argv[2])) < 0) {
		fprintf(stderr, "usage: %s DIR SECONDS < NAMES\n", argv[0]);
		return 2;
	}
	while (n < 64 && fgets(names[n], sizeof(names[n]), stdin))
		if ((names[n][strcspn(names[n], "\n")] = '\0', names[n][0]))
			n++;
	err = dc_hostfs_backend(argv[1], &o.backend);
	if (!err)
		err = dc_cache_create(&o, &c);
	if (!err) {
		err = dc_watch_start(c, argv[1], &wo, &w);
		if (err)
			dc_cache_destroy(c);
	}
	if (err) {
		fprintf(stderr, "watch: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	printf("watching %s with %s\n", argv[1], dc_watch_mode_name(dc_watch_mode_of(w)));
	for (int s = 0; s <= seconds; s++) {
		for (int i = 0; i < n; i++) {
			struct dc_inode in;

			err = dc_resolve(c, NULL, names[i], 0, &in);
			printf("%s: %s\n", names[i], err ? strerror(-err) : "exists");
		}
		fflush(stdout);
		if (s < seconds)
			sleep(1);
	}
	dc_watch_stop(w);
	dc_cache_destroy(c);
	return 0;
}
