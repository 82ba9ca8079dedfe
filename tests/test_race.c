/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_race.c - the torture of test_torture, in rcu mode, on the library
 * built again with its race windows open (DC_RACE_WINDOWS, src/internal.h):
 * at each point where a race matters (a lock-free reader between its
 * snapshot and its check, a writer inside its odd seq, a one-probe node
 * between its walk and its add, between the halves of a Dekker
 * handshake) a thread yields the CPU one time in RACE_ODDS.  On a machine
 * with few cores another thread then often runs inside a window, as it
 * does on many cores.
 *
 * Three runs of DC_TEST_SECONDS: a cap of 48 entries (eviction all the
 * time); one of 5,000, where entries and their one-probe nodes live long
 * (its one-probe answers are counted, and must be there); one of 300 with
 * answers that expire after a few milliseconds.  The torture turns TTLs
 * on for one seed in three (seed + mode divisible by 3), so the seeds are
 * chosen for that.  Then one race staged by hand (put_beside_unlink),
 * too rare in the torture to be met in seconds: the thread that puts an
 * entry back on a list sleeps in half its windows.
 *
 * A window here is a call, which the compiler moves no load or store
 * across, and when it yields a system call, which the CPU does not
 * either: this build hides an ordering fault near a window.
 * test_torture, on the library as built, does not.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <time.h>

#include "common/rng.h"
#include "dcache-debug.h"
#include "harness.h"
#include "torture/torture.h"

#define RACE_ODDS	16

/* This thread's windows are all wide open: it sleeps in each. */
static _Thread_local bool wide;

void dc__race_window(void);

void dc__race_window(void)
{
	/* seeded by the thread's own address: threads differ */
	static _Thread_local uint64_t s;

	if (!s)
		s = (uint64_t)(uintptr_t)&s;
	if (wide) {
		if (rng_below(&s, 2))
			nanosleep(&(struct timespec){ .tv_nsec = 50000 }, NULL);
		return;
	}
	if (rng_below(&s, RACE_ODDS) == 0)
		sched_yield();
}

/*
 * One name, "f": a thread takes it, holds it while a second keeps the
 * cache over its cap (so that the shrinker passes "f" held and takes it
 * off the lists), and puts it back with its windows wide open, half of
 * them a sleep: its last dc_put puts "f" back on a list as a third thread
 * turns it negative in place (dc_unlink, then dc_create again).  The entry
 * must end on the list its accounting says (dc_debug_check).
 */
struct put_beside_unlink {
	struct dc_cache *c;
	struct dc_memfs *fs;
	struct dc_dentry *root;
	int stop, putting;
	uint64_t puts, unlinks;
};

static void *holder(void *arg)
{
	struct put_beside_unlink *p = arg;
	struct dc_dentry *d;

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&p->putting, __ATOMIC_ACQUIRE) ||
		    dc_lookup(p->c, p->root, "f", 1, &d)) {
			sched_yield();
			continue;
		}
		h_sleep_ms(1);	/* held while the shrinker passes */
		__atomic_store_n(&p->putting, 1, __ATOMIC_RELEASE);
		wide = true;
		dc_put(p->c, d);
		wide = false;
		p->puts++;
	}
	return NULL;
}

static void *churn(void *arg)
{
	struct put_beside_unlink *p = arg;
	struct dc_dentry *d;
	char name[16];

	for (unsigned i = 0; !__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE); i++) {
		snprintf(name, sizeof(name), "n%u", i % 256);
		if (dc_lookup(p->c, p->root, name, strlen(name), &d) == 0)
			dc_put(p->c, d);
	}
	return NULL;
}

static void put_beside_unlink(void)
{
	struct dc_options o = { .mode = DC_MODE_RCU, .max_entries = 32 };
	struct put_beside_unlink p = { 0 };
	struct dc_inode in;
	pthread_t th, tc;
	char name[16], why[256] = "";
	double end;
	int err = 0;

	if (dc_memfs_new(&p.fs)) {
		CHECK(!"memfs");
		return;
	}
	for (unsigned i = 0; i < 256; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		CHECK_EQ(dc_memfs_add(p.fs, DC_MEMFS_ROOT, name, S_IFREG | 0644, NULL, &in), 0);
	}
	o.backend = dc_memfs_backend(p.fs);
	if (dc_cache_create(&o, &p.c)) {
		CHECK(!"cache");
		dc_memfs_free(p.fs);
		return;
	}
	p.root = dc_root(p.c);
	err = dc_memfs_add(p.fs, DC_MEMFS_ROOT, "f", S_IFREG | 0644, NULL, &in);
	if (pthread_create(&th, NULL, holder, &p)) {
		CHECK(!"holder thread");
		goto out;
	}
	if (pthread_create(&tc, NULL, churn, &p)) {
		CHECK(!"churn thread");
		__atomic_store_n(&p.stop, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		goto out;
	}
	end = h_mono_s() + h_seconds();
	while (h_mono_s() < end && !err) {
		if (!__atomic_load_n(&p.putting, __ATOMIC_ACQUIRE)) {
			sched_yield();
			continue;
		}
		err = dc_memfs_remove(p.fs, DC_MEMFS_ROOT, "f", 0);
		if (!err)
			err = dc_unlink(p.c, p.root, "f");
		if (!err)
			err = dc_memfs_add(p.fs, DC_MEMFS_ROOT, "f", S_IFREG | 0644, NULL, &in);
		if (!err)
			err = dc_create(p.c, p.root, "f", &in);
		p.unlinks++;
		__atomic_store_n(&p.putting, 0, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&p.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	pthread_join(tc, NULL);
	printf("put beside unlink: %llu puts, %llu unlinks\n",
	       (unsigned long long)p.puts, (unsigned long long)p.unlinks);
	CHECK_EQ(err, 0);
	CHECK(p.puts > 10 && p.unlinks > 10);
	CHECK_EQ(dc_debug_check_why(p.c, why, sizeof(why)), 0);
	if (why[0])
		fprintf(stderr, "put beside unlink: %s\n", why);
out:
	dc_put(p.c, p.root);
	dc_cache_destroy(p.c);
	dc_memfs_free(p.fs);
}

int main(void)
{
	static const struct {
		uint64_t cap, seed;
		bool ttl, paths;	/* TTLs on; one-probe answers required */
	} runs[] = {
		{ 48, 20021102, false, false },
		{ 5000, 20021104, false, true },
		{ 300, 20021103, true, false },
	};

	for (unsigned i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct torture_opts o = { .mode = DC_MODE_RCU, .seconds = h_seconds(),
					  .threads = 8, .seed = runs[i].seed,
					  .max_entries = runs[i].cap,
					  .max_negative = runs[i].cap / 4, .log = stderr };
		struct torture_result r;

		memset(&r, 0, sizeof(r));
		CHECK_EQ(torture_run(&o, &r), 0);
		printf("cap %llu, TTLs %u/%u ms: %llu answers checked, %llu violations; "
		       "%llu one-probe answers, %llu rcu-walk restarts\n",
		       (unsigned long long)runs[i].cap, r.ttl_ms, r.neg_ttl_ms,
		       (unsigned long long)r.checks, (unsigned long long)r.violations,
		       (unsigned long long)r.path_hits, (unsigned long long)r.restarts);
		CHECK_EQ(r.violations, 0);
		CHECK(r.checks > 100);
		CHECK(r.ops[TOP_RENAME] && r.ops[TOP_MOVEDIR] && r.ops[TOP_LOOKUP]);
		CHECK_EQ(r.ttl_ms != 0, runs[i].ttl);
		/* the windows of the one-probe table were passed */
		if (runs[i].paths)
			CHECK(r.path_hits > 0);
	}
	put_beside_unlink();
	return h_done("test_race");
}
