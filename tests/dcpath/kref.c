/* kref - kernel reference resolver for tests/test_dcpath.sh.
 *
 * Same command line and output as build/dcpath:
 *
 *   kref --root DIR [--cwd RELDIR] [--nofollow] [--mode M]
 *        [--as UID:GID[:G1,G2,...]] [--] PATH...
 *
 * Prints, for each PATH in order, "PATH<TAB>INODE" (st_ino of what the
 * kernel resolved PATH to) or "PATH<TAB>ENAME" (symbolic errno name).
 * Tab, newline and backslash inside PATH are printed as \t, \n and \\.
 * Exit status: 0 all resolved, 1 some did not, 2 usage error.
 *
 * Without --cwd each PATH is resolved with
 *   openat2(rootfd, PATH, {O_PATH [|O_NOFOLLOW], RESOLVE_IN_ROOT}) + fstat.
 * With --cwd a child process does chroot(DIR) + chdir(RELDIR) and resolves
 * each PATH with open(PATH, O_PATH [|O_NOFOLLOW]) + fstat.  This needs root.
 * With --as the resolving is done in a child that, after any chroot and
 * chdir, takes that credential (setgroups, setresgid, setresuid: the
 * kernel then checks search permission as for that user); needs root.
 *
 * --mode is accepted (rcu|global|rwlock) and ignored.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static const struct {
    int err;
    const char *name;
} errnames[] = {
    {ENOENT, "ENOENT"},   {ENOTDIR, "ENOTDIR"},         {ELOOP, "ELOOP"},
    {ENAMETOOLONG, "ENAMETOOLONG"},                     {EACCES, "EACCES"},
    {EINVAL, "EINVAL"},   {EXDEV, "EXDEV"},             {EPERM, "EPERM"},
    {EAGAIN, "EAGAIN"},   {EIO, "EIO"},                 {ENOMEM, "ENOMEM"},
    {EISDIR, "EISDIR"},   {EBADF, "EBADF"},             {EFAULT, "EFAULT"},
    {EMFILE, "EMFILE"},   {ENFILE, "ENFILE"},           {ENXIO, "ENXIO"},
    {ENODEV, "ENODEV"},   {EOVERFLOW, "EOVERFLOW"},     {ESTALE, "ESTALE"},
    {EEXIST, "EEXIST"},   {ENOSYS, "ENOSYS"},           {EBUSY, "EBUSY"},
};

static const char *errname(int e, char *buf, size_t n)
{
    for (size_t i = 0; i < sizeof errnames / sizeof errnames[0]; i++)
        if (errnames[i].err == e)
            return errnames[i].name;
    snprintf(buf, n, "E%d", e);
    return buf;
}

static void put_escaped(const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '\t': fputs("\\t", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        default: putchar(*s);
        }
    }
}

/* Print one result line; returns 0 on success, 1 on failure. */
static int report(const char *path, int fd, int err)
{
    char buf[32];
    struct stat st;

    if (fd >= 0) {
        if (fstat(fd, &st) < 0)
            err = errno;
        close(fd);
    }
    put_escaped(path);
    putchar('\t');
    if (fd >= 0 && err == 0) {
        printf("%llu\n", (unsigned long long)st.st_ino);
        return 0;
    }
    printf("%s\n", errname(err, buf, sizeof buf));
    return 1;
}

/* --as UID:GID[:G1,G2,...] */
struct cred {
    uid_t uid;
    gid_t gid;
    size_t ngroups;
    gid_t groups[64];
};

static int parse_id(const char *s, char **end, unsigned *out)
{
    unsigned long v;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoul(s, end, 10);
    if (errno || v >= UINT32_MAX)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int parse_cred(const char *s, struct cred *cr)
{
    char *p;
    unsigned v;

    if (parse_id(s, &p, &v) || *p != ':')
        return -1;
    cr->uid = v;
    if (parse_id(p + 1, &p, &v))
        return -1;
    cr->gid = v;
    cr->ngroups = 0;
    if (*p == '\0')
        return 0;
    if (*p != ':')
        return -1;
    do {
        if (cr->ngroups == sizeof cr->groups / sizeof cr->groups[0] ||
            parse_id(p + 1, &p, &v))
            return -1;
        cr->groups[cr->ngroups++] = v;
    } while (*p == ',');
    return *p ? -1 : 0;
}

/* Become cr: groups first, then gid, then uid (which drops the
 * capabilities of a non-zero uid). */
static int become(const struct cred *cr)
{
    if (setgroups(cr->ngroups, cr->groups) < 0 ||
        setresgid(cr->gid, cr->gid, cr->gid) < 0 ||
        setresuid(cr->uid, cr->uid, cr->uid) < 0) {
        fprintf(stderr, "kref: --as: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

static void usage(const char *msg)
{
    if (msg)
        fprintf(stderr, "kref: %s\n", msg);
    fprintf(stderr, "usage: kref --root DIR [--cwd RELDIR] [--nofollow] "
                    "[--mode rcu|global|rwlock] [--as UID:GID[:G,...]] PATH...\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *root = NULL, *cwd = NULL;
    struct cred cred;
    int nofollow = 0, as = 0, i;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (strcmp(a, "--root") == 0 || strcmp(a, "--cwd") == 0 ||
                   strcmp(a, "--mode") == 0) {
            if (i + 1 >= argc)
                usage("option needs an argument");
            if (a[2] == 'r')
                root = argv[++i];
            else if (a[2] == 'c')
                cwd = argv[++i];
            else {
                const char *m = argv[++i];
                if (strcmp(m, "rcu") && strcmp(m, "global") && strcmp(m, "rwlock"))
                    usage("bad --mode");
            }
        } else if (strcmp(a, "--as") == 0) {
            if (i + 1 >= argc || parse_cred(argv[++i], &cred))
                usage("--as is UID:GID[:G1,G2,...]");
            as = 1;
        } else if (strcmp(a, "--nofollow") == 0) {
            nofollow = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            usage("unknown option");
        } else {
            break;
        }
    }
    if (!root)
        usage("--root is required");
    if (i >= argc)
        usage("no paths");

    int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        fprintf(stderr, "kref: %s: %s\n", root, strerror(errno));
        return 2;
    }

    int flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
    int failed = 0;

    if (!cwd && !as) {
        for (; i < argc; i++) {
            struct open_how how = {
                .flags = (unsigned long long)flags,
                .mode = 0,
                .resolve = RESOLVE_IN_ROOT,
            };
            int fd, tries = 0;

            /* EAGAIN: a rename or mount anywhere on the system raced a
             * ".." (openat2(2) says to ask again) */
            do
                fd = (int)syscall(SYS_openat2, rootfd, argv[i], &how, sizeof how);
            while (fd < 0 && errno == EAGAIN && ++tries < 1000);
            failed |= report(argv[i], fd, fd < 0 ? errno : 0);
        }
        fflush(stdout);
        return failed;
    }

    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("kref: fork");
        return 2;
    }
    if (pid == 0) {
        if (cwd && (fchdir(rootfd) < 0 || chroot(".") < 0)) {
            fprintf(stderr, "kref: chroot %s: %s\n", root, strerror(errno));
            _exit(2);
        }
        if (cwd && (chdir("/") < 0 || chdir(cwd) < 0)) {
            fprintf(stderr, "kref: --cwd %s: %s\n", cwd, strerror(errno));
            _exit(2);
        }
        if (as && become(&cred) < 0)
            _exit(2);
        for (; i < argc; i++) {
            struct open_how how = {
                .flags = (unsigned long long)flags,
                .resolve = RESOLVE_IN_ROOT,
            };
            int fd = cwd ? open(argv[i], flags) :
                     (int)syscall(SYS_openat2, rootfd, argv[i], &how, sizeof how);
            failed |= report(argv[i], fd, fd < 0 ? errno : 0);
        }
        fflush(stdout);
        _exit(failed);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            perror("kref: waitpid");
            return 2;
        }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    fprintf(stderr, "kref: child died (status %d)\n", status);
    return 2;
}
