/* SPDX-License-Identifier: MIT */
/* Output files (util/atomic.h): what is at a path decides how it is written. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/atomic.h"

static char dir[] = "/tmp/benchtrap-atomic-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *at(const char *name)
{
	static char paths[4][256];
	static int next;
	char *p = paths[next++ % 4];

	snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
	return p;
}

static int fill_text(FILE *f, void *ctx)
{
	fputs(ctx, f);
	return 0;
}

static int fill_fails(FILE *f, void *ctx)
{
	(void)ctx;
	fputs("half", f);
	return -EIO;
}

static void read_back(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	buf[fread(buf, 1, size - 1, f)] = '\0';
	fclose(f);
}

/* No "<name>.XXXXXX" temporary file in the directory. */
static void assert_no_temp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ls %s | grep -q '\\.[A-Za-z0-9]\\{6\\}$'", dir);
	assert_int_not_equal(system(cmd), 0);
}

static void test_check(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s;

	(void)state;
	assert_int_equal(atomic_check(at("new.json")), 0);
	assert_int_equal(access(at("new.json"), F_OK), -1); /* checking creates nothing */
	assert_int_equal(atomic_check(at("missing/new.json")), -ENOENT);
	assert_int_equal(atomic_check(dir), -EISDIR);
	assert_int_equal(atomic_check(""), -ENOENT);
	assert_int_equal(mkdir(at("sub"), 0755), 0);
	assert_int_equal(atomic_check(at("sub")), -EISDIR);
	assert_int_equal(atomic_check(at("sub/")), -EISDIR);
	/* A socket is neither replaced nor written. */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", at("sock"));
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(atomic_check(at("sock")), -EOPNOTSUPP);
	close(s);
	/* /proc takes no new names. */
	assert_int_equal(atomic_check("/proc/benchtrap-test.json"), -EPERM);
	/* A FIFO nobody reads: an error, never a blocked open. */
	assert_int_equal(mkfifo(at("fifo"), 0644), 0);
	assert_int_equal(atomic_check(at("fifo")), -ENXIO);
	assert_int_equal(atomic_write(at("fifo"), fill_text, "x"), -ENXIO);
	assert_no_temp();
}

static void test_regular(void **state)
{
	mode_t old = umask(022);
	char buf[64];
	struct stat st;

	(void)state;
	assert_int_equal(atomic_write(at("r.json"), fill_text, "one"), 0);
	assert_int_equal(stat(at("r.json"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644); /* 0666 less the umask */
	/* A failed fill writes nothing. */
	assert_int_equal(atomic_write(at("r.json"), fill_fails, NULL), -EIO);
	read_back(at("r.json"), buf, sizeof(buf));
	assert_string_equal(buf, "one");
	/* A replaced file keeps its mode. */
	assert_int_equal(chmod(at("r.json"), 0600), 0);
	assert_int_equal(atomic_write(at("r.json"), fill_text, "two"), 0);
	assert_int_equal(stat(at("r.json"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	read_back(at("r.json"), buf, sizeof(buf));
	assert_string_equal(buf, "two");
	assert_no_temp();
	umask(old);
}

static void test_symlinks(void **state)
{
	char buf[64], link[64];
	struct stat st;
	ssize_t n;

	(void)state;
	/* A link to a file: the link stays, the file is replaced, in its own
	 * directory, through a chain of relative links. */
	assert_int_equal(mkdir(at("d"), 0755), 0);
	assert_int_equal(atomic_write(at("d/target"), fill_text, "old"), 0);
	assert_int_equal(chmod(at("d/target"), 0640), 0);
	assert_int_equal(symlink("target", at("d/inner")), 0);
	assert_int_equal(symlink("d/inner", at("outer")), 0);
	assert_int_equal(atomic_check(at("outer")), 0);
	assert_int_equal(atomic_write(at("outer"), fill_text, "new"), 0);
	assert_int_equal(lstat(at("outer"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(at("d/inner"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	n = readlink(at("outer"), link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, "d/inner");
	read_back(at("d/target"), buf, sizeof(buf));
	assert_string_equal(buf, "new");
	assert_int_equal(stat(at("d/target"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	/* A link to nothing, in an existing directory: the file is made. */
	assert_int_equal(symlink("d/made.json", at("dangling")), 0);
	assert_int_equal(atomic_check(at("dangling")), 0);
	assert_int_equal(atomic_write(at("dangling"), fill_text, "made"), 0);
	assert_int_equal(lstat(at("dangling"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	read_back(at("d/made.json"), buf, sizeof(buf));
	assert_string_equal(buf, "made");
	/* A link to nothing in a missing directory, and a loop. */
	assert_int_equal(symlink("nowhere/x.json", at("lost")), 0);
	assert_int_equal(atomic_check(at("lost")), -ENOENT);
	assert_int_equal(symlink("loop", at("loop")), 0);
	assert_int_equal(atomic_check(at("loop")), -ELOOP);
	assert_no_temp();
}

/* Links in a sticky world-writable directory: followed only when they
 * belong to the user running the test or to the directory's owner (the
 * rule of fs.protected_symlinks). Other owners are given with lchown(),
 * which needs root. */
static void test_sticky_links(void **state)
{
	const uid_t other = 65534, third = 65533;
	char buf[64];
	FILE *f;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(mkdir(at("st"), 0755), 0);
	assert_int_equal(chmod(at("st"), 01777), 0);
	assert_int_equal(atomic_write(at("precious"), fill_text, "precious"), 0);
	assert_int_equal(mkdir(at("precious-dir"), 0755), 0);

	/* Another user's links to a file, to nothing, to a directory. */
	assert_int_equal(symlink(at("precious"), at("st/r.json")), 0);
	assert_int_equal(lchown(at("st/r.json"), other, other), 0);
	assert_int_equal(symlink(at("created"), at("st/dangling")), 0);
	assert_int_equal(lchown(at("st/dangling"), other, other), 0);
	assert_int_equal(symlink(at("precious-dir"), at("st/dir")), 0);
	assert_int_equal(lchown(at("st/dir"), other, other), 0);
	assert_int_equal(atomic_check(at("st/r.json")), -ATOMIC_E_LINK);
	assert_int_equal(atomic_write(at("st/r.json"), fill_text, "x"), -ATOMIC_E_LINK);
	assert_int_equal(atomic_open_stream(at("st/r.json"), &f), -ATOMIC_E_LINK);
	assert_int_equal(atomic_check(at("st/dangling")), -ATOMIC_E_LINK);
	assert_int_equal(atomic_write(at("st/dangling"), fill_text, "x"), -ATOMIC_E_LINK);
	assert_int_equal(atomic_open_stream(at("st/dangling"), &f), -ATOMIC_E_LINK);
	assert_int_equal(atomic_check_dir(at("st/dir")), -ATOMIC_E_LINK);
	assert_int_equal(atomic_check_dir(at("st/dir/")), -ATOMIC_E_LINK);
	assert_int_equal(atomic_write_in(at("st/dir"), "p.folded", fill_text, "x"), -ATOMIC_E_LINK);
	/* Reached through a link of one's own: refused all the same. */
	assert_int_equal(symlink(at("st/r.json"), at("chain")), 0);
	assert_int_equal(atomic_check(at("chain")), -ATOMIC_E_LINK);
	read_back(at("precious"), buf, sizeof(buf));
	assert_string_equal(buf, "precious");
	assert_int_equal(access(at("created"), F_OK), -1);
	assert_int_equal(access(at("precious-dir/p.folded"), F_OK), -1);

	/* One's own link there is followed. */
	assert_int_equal(symlink(at("mine"), at("st/mine")), 0);
	assert_int_equal(atomic_write(at("st/mine"), fill_text, "mine"), 0);
	read_back(at("mine"), buf, sizeof(buf));
	assert_string_equal(buf, "mine");

	/* In a sticky directory of another user, that user's links are
	 * followed and a third user's are not. */
	assert_int_equal(mkdir(at("theirs"), 01777), 0);
	assert_int_equal(chmod(at("theirs"), 01777), 0);
	assert_int_equal(chown(at("theirs"), other, other), 0);
	assert_int_equal(symlink(at("owner.json"), at("theirs/owner")), 0);
	assert_int_equal(lchown(at("theirs/owner"), other, other), 0);
	assert_int_equal(symlink(at("precious"), at("theirs/third")), 0);
	assert_int_equal(lchown(at("theirs/third"), third, third), 0);
	assert_int_equal(atomic_write(at("theirs/owner"), fill_text, "owner"), 0);
	read_back(at("owner.json"), buf, sizeof(buf));
	assert_string_equal(buf, "owner");
	assert_int_equal(atomic_write(at("theirs/third"), fill_text, "x"), -ATOMIC_E_LINK);

	/* A sticky directory nobody else may write to: links are followed. */
	assert_int_equal(mkdir(at("closed"), 0755), 0);
	assert_int_equal(chmod(at("closed"), 01755), 0);
	assert_int_equal(symlink(at("closed.json"), at("closed/l")), 0);
	assert_int_equal(lchown(at("closed/l"), other, other), 0);
	assert_int_equal(atomic_check(at("closed/l")), 0);
	assert_no_temp();
}

/* Files in an output directory (--profile DIR). */
static void test_write_in(void **state)
{
	char buf[64];
	struct stat st;

	(void)state;
	assert_int_equal(mkdir(at("out"), 0755), 0);
	assert_int_equal(atomic_check_dir(at("out")), 0);
	assert_int_equal(atomic_check_dir(at("out/")), 0);
	assert_int_equal(atomic_check_dir(at("nothing")), -ENOENT);
	assert_int_equal(atomic_write(at("plain"), fill_text, "plain"), 0);
	assert_int_equal(atomic_check_dir(at("plain")), -ENOTDIR);

	/* Made, then replaced; a failed fill leaves the earlier file. */
	assert_int_equal(atomic_write_in(at("out"), "000-a.folded", fill_text, "one"), 0);
	read_back(at("out/000-a.folded"), buf, sizeof(buf));
	assert_string_equal(buf, "one");
	assert_int_equal(atomic_write_in(at("out"), "000-a.folded", fill_fails, NULL), -EIO);
	assert_int_equal(atomic_write_in(at("out"), "000-b.folded", fill_fails, NULL), -EIO);
	assert_int_equal(access(at("out/000-b.folded"), F_OK), -1);
	assert_int_equal(atomic_write_in(at("out/"), "000-a.folded", fill_text, "two"), 0);
	read_back(at("out/000-a.folded"), buf, sizeof(buf));
	assert_string_equal(buf, "two");

	/* A link under the name, even one's own, is neither followed nor
	 * replaced; nor is a directory. */
	assert_int_equal(symlink(at("plain"), at("out/000-l.folded")), 0);
	assert_int_equal(atomic_write_in(at("out"), "000-l.folded", fill_text, "x"),
			 -ATOMIC_E_IN_WAY);
	assert_int_equal(lstat(at("out/000-l.folded"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	read_back(at("plain"), buf, sizeof(buf));
	assert_string_equal(buf, "plain");
	assert_int_equal(symlink(at("out/gone"), at("out/000-d.folded")), 0);
	assert_int_equal(atomic_write_in(at("out"), "000-d.folded", fill_text, "x"),
			 -ATOMIC_E_IN_WAY);
	assert_int_equal(access(at("out/gone"), F_OK), -1);
	assert_int_equal(mkdir(at("out/000-s.svg"), 0755), 0);
	assert_int_equal(atomic_write_in(at("out"), "000-s.svg", fill_text, "x"), -ATOMIC_E_IN_WAY);
	/* One name, never a path. */
	assert_int_equal(atomic_write_in(dir, "out/000-a.folded", fill_text, "x"), -EINVAL);
	assert_int_equal(atomic_write_in(dir, "..", fill_text, "x"), -EINVAL);
	assert_int_equal(atomic_write_in(at("nothing"), "a", fill_text, "x"), -ENOENT);
	assert_no_temp();

	/* Another user's file in a sticky world-writable directory of a third
	 * user is not replaced, whoever runs. */
	if (geteuid() == 0) {
		assert_int_equal(mkdir(at("shared"), 01777), 0);
		assert_int_equal(chmod(at("shared"), 01777), 0);
		assert_int_equal(atomic_write_in(at("shared"), "theirs", fill_text, "theirs"), 0);
		assert_int_equal(chown(at("shared/theirs"), 65534, 65534), 0);
		assert_int_equal(chown(at("shared"), 65533, 65533), 0);
		assert_int_equal(atomic_write_in(at("shared"), "theirs", fill_text, "x"),
				 -ATOMIC_E_STICKY);
		read_back(at("shared/theirs"), buf, sizeof(buf));
		assert_string_equal(buf, "theirs");
	}
}

static void test_devices(void **state)
{
	struct stat st;

	(void)state;
	/* Copies of /dev/null and /dev/full: the system's are never at stake. */
	if (mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) < 0 ||
	    mknod(at("full"), S_IFCHR | 0666, makedev(1, 7)) < 0)
		skip();
	assert_int_equal(atomic_check(at("null")), 0);
	assert_int_equal(atomic_write(at("null"), fill_text, "gone"), 0);
	assert_int_equal(stat(at("null"), &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(st.st_rdev, makedev(1, 3));
	/* Unchecked, the same. */
	assert_int_equal(atomic_write(at("null"), fill_text, "gone"), 0);
	assert_int_equal(atomic_write(at("full"), fill_text, "lost"), -ENOSPC);
	assert_int_equal(stat(at("full"), &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(st.st_rdev, makedev(1, 7));
	assert_no_temp();
}

static void test_fifo(void **state)
{
	char buf[64] = "";
	FILE *f;
	int rd;

	(void)state;
	assert_int_equal(mkfifo(at("pipe"), 0644), 0);
	/* A reader (non-blocking, so that this test needs no second process). */
	rd = open(at("pipe"), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rd >= 0);
	assert_int_equal(atomic_check(at("pipe")), 0);
	assert_int_equal(atomic_write(at("pipe"), fill_text, "{\"doc\":1}"), 0);
	assert_int_equal(read(rd, buf, sizeof(buf) - 1), 9);
	assert_string_equal(buf, "{\"doc\":1}");
	/* The document is followed by end-of-file: the fd kept open since the
	 * check is closed. */
	assert_int_equal(read(rd, buf, sizeof(buf)), 0);
	/* A stream (markers) on the FIFO. */
	assert_int_equal(atomic_open_stream(at("pipe"), &f), 0);
	fputs("line\n", f);
	assert_int_equal(fclose(f), 0);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(read(rd, buf, sizeof(buf) - 1), 5);
	assert_string_equal(buf, "line\n");
	close(rd);
	assert_int_equal(atomic_open_stream(at("pipe"), &f), -ENXIO);
	/* A stream on a regular file truncates it in place. */
	assert_int_equal(atomic_write(at("m.jsonl"), fill_text, "long old contents"), 0);
	assert_int_equal(atomic_open_stream(at("m.jsonl"), &f), 0);
	fputs("new", f);
	assert_int_equal(fclose(f), 0);
	read_back(at("m.jsonl"), buf, sizeof(buf));
	assert_string_equal(buf, "new");
	assert_int_equal(atomic_open_stream(at("none/m.jsonl"), &f), -ENOENT);
}

static void test_strerror(void **state)
{
	static const int errs[] = {
		EISDIR, ENOENT, ENOSPC,	       ENXIO,		EOPNOTSUPP,
		EROFS,	EACCES, ATOMIC_E_LINK, ATOMIC_E_IN_WAY, ATOMIC_E_STICKY
	};

	(void)state;
	assert_string_equal(atomic_strerror(-ENOSPC),
			    "no space left on the device (free some space, or write elsewhere)");
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		const char *m = atomic_strerror(-errs[i]);

		assert_true(m[0] >= 'a' && m[0] <= 'z');
		assert_true(m[strlen(m) - 1] != '.');
	}
	/* Nothing under way: nothing to remove. */
	atomic_cleanup();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),	 cmocka_unit_test(test_regular),
		cmocka_unit_test(test_symlinks), cmocka_unit_test(test_devices),
		cmocka_unit_test(test_fifo),	 cmocka_unit_test(test_sticky_links),
		cmocka_unit_test(test_write_in), cmocka_unit_test(test_strerror),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
