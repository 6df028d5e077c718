/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/strutil.h"
#include "util/atomic.h"

/* How a path is written: replaced by rename, or written through an open fd. */
enum kind { KIND_REPLACE, KIND_THROUGH };

/*
 * The temporary file of the atomic_write() under way, for atomic_cleanup().
 * Both are changed only with the fatal signals blocked, so a handler sees
 * either no temporary file or a complete name of one that exists.
 */
static char tmp_path[PATH_MAX];
static volatile sig_atomic_t tmp_live;

/* Devices and FIFOs opened by atomic_check(), by the path string checked. */
static struct {
	char *path;
	int fd;
} held[4];

static void block_fatal_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void restore_signals(const sigset_t *old)
{
	int saved = errno;

	sigprocmask(SIG_SETMASK, old, NULL);
	errno = saved;
}

void atomic_cleanup(void)
{
	if (tmp_live)
		unlink(tmp_path);
}

/* Create "<file>.XXXXXX" and make it the one atomic_cleanup() removes. */
static int temp_create(const char *file, int *ret_fd)
{
	sigset_t old;
	int fd, r = 0;

	block_fatal_signals(&old);
	if (snprintf(tmp_path, sizeof(tmp_path), "%s.XXXXXX", file) >= (int)sizeof(tmp_path)) {
		r = -ENAMETOOLONG;
	} else {
		fd = mkostemp(tmp_path, O_CLOEXEC);
		if (fd < 0)
			r = -errno;
		else
			tmp_live = 1;
	}
	restore_signals(&old);
	if (r == 0)
		*ret_fd = fd;
	return r;
}

/* Rename the temporary file over 'file' (when 'keep'), or remove it. */
static int temp_finish(const char *file, bool keep)
{
	sigset_t old;
	int r = 0;

	block_fatal_signals(&old);
	if (keep && rename(tmp_path, file) < 0)
		r = -errno;
	if (!keep || r < 0)
		unlink(tmp_path);
	tmp_live = 0;
	restore_signals(&old);
	return r;
}

static void dir_of(const char *file, char *dir, size_t size)
{
	const char *slash = strrchr(file, '/');

	if (!slash)
		snprintf(dir, size, ".");
	else if (slash == file)
		snprintf(dir, size, "/");
	else
		snprintf(dir, size, "%.*s", (int)(slash - file), file);
}

static void sync_directory(const char *file)
{
	char dir[PATH_MAX];
	int fd;

	dir_of(file, dir, sizeof(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Can a file be created next to 'file'? Asks the file system itself (an
 * unnamed O_TMPFILE, else a named temporary file removed at once), so that a
 * read-only mount or /proc answer as they will at the end. */
static int probe_directory(const char *file)
{
	char dir[PATH_MAX];
	int fd, r;

	dir_of(file, dir, sizeof(dir));
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	r = temp_create(file, &fd);
	if (r == -ENOENT) {
		struct stat st;

		/* The directory is there, yet takes no new names (/proc). */
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			r = -EPERM;
	}
	if (r < 0)
		return r;
	close(fd);
	return temp_finish(file, false);
}

/*
 * May the link 'link' (lstat 'lst') be followed? Not when it lies in a sticky
 * world-writable directory and belongs neither to the user running benchtrap
 * nor to the directory's owner: anyone may plant a link in /tmp, and one
 * there to a file of the user running benchtrap (root's /etc/passwd) would
 * have benchtrap replace that file. The kernel's fs.protected_symlinks rule,
 * applied here because the links are resolved here.
 */
static int link_trusted(const char *link, const struct stat *lst)
{
	const mode_t open_sticky = S_ISVTX | S_IWOTH;
	char dir[PATH_MAX];
	struct stat dst;

	dir_of(link, dir, sizeof(dir));
	if (stat(dir, &dst) < 0)
		return -errno;
	if ((dst.st_mode & open_sticky) == open_sticky && lst->st_uid != geteuid() &&
	    lst->st_uid != dst.st_uid)
		return -ATOMIC_E_LINK;
	return 0;
}

/*
 * Follow symbolic links from 'path' to the name of the file they lead to,
 * which need not exist yet. A relative link is relative to its directory.
 * Every link on the way must pass link_trusted().
 */
static int resolve_links(const char *path, char *ret, size_t size)
{
	char cur[PATH_MAX], link[PATH_MAX];
	struct stat st;
	int hops = 0;

	if (strlen(path) >= sizeof(cur))
		return -ENAMETOOLONG;
	strcpy(cur, path);
	for (;;) {
		if (lstat(cur, &st) < 0) {
			if (errno != ENOENT)
				return -errno;
			break;
		}
		if (!S_ISLNK(st.st_mode))
			break;
		if (++hops > 40)
			return -ELOOP;
		int r = link_trusted(cur, &st);

		if (r < 0)
			return r;

		ssize_t n = readlink(cur, link, sizeof(link) - 1);

		if (n < 0)
			return -errno;
		link[n] = '\0';
		if (link[0] == '/') {
			memcpy(cur, link, (size_t)n + 1);
		} else {
			char *slash = strrchr(cur, '/');
			size_t dirlen = slash ? (size_t)(slash - cur) + 1 : 0;

			if (dirlen + (size_t)n >= sizeof(cur))
				return -ENAMETOOLONG;
			memcpy(cur + dirlen, link, (size_t)n + 1);
		}
	}
	if (strlen(cur) >= size)
		return -ENAMETOOLONG;
	strcpy(ret, cur);
	return 0;
}

/*
 * How to write 'path'; for KIND_REPLACE, 'file' (PATH_MAX) gets the name to
 * rename over, links resolved, and its directory has been probed.
 */
/* In a sticky directory only the file's owner, the directory's owner or a
 * privileged user may rename over a file (rename(2), EPERM). */
static bool sticky_foreign(const char *file, const struct stat *fst)
{
	char dir[PATH_MAX];
	struct stat dst;
	uid_t me = geteuid();

	dir_of(file, dir, sizeof(dir));
	return me != 0 && stat(dir, &dst) == 0 && (dst.st_mode & S_ISVTX) && me != fst->st_uid &&
	       me != dst.st_uid;
}

static int classify(const char *path, enum kind *ret_kind, char *file)
{
	struct stat st, fst;
	int r;

	if (!*path)
		return -ENOENT;
	/* Whatever the path leads to, a distrusted link is not followed. */
	r = resolve_links(path, file, PATH_MAX);
	if (r == -ATOMIC_E_LINK)
		return r;
	if (stat(path, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		/* Nothing there yet, or a link to nothing: create what it names. */
		r = resolve_links(path, file, PATH_MAX);
		if (r == 0)
			r = probe_directory(file);
		if (r == 0)
			*ret_kind = KIND_REPLACE;
		return r;
	}
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		*ret_kind = KIND_THROUGH;
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		return -EOPNOTSUPP;
	/* A regular file is replaced under the name the links lead to. A file
	 * reached through /proc/PID/fd with no name left (deleted) cannot be:
	 * it is written through. */
	r = resolve_links(path, file, PATH_MAX);
	if (r == 0 && stat(file, &fst) == 0 && fst.st_dev == st.st_dev && fst.st_ino == st.st_ino) {
		r = probe_directory(file);
		if (r == 0 && sticky_foreign(file, &fst))
			r = -ATOMIC_E_STICKY;
		if (r == 0)
			*ret_kind = KIND_REPLACE;
		return r;
	}
	*ret_kind = KIND_THROUGH;
	return 0;
}

/* Open a device, FIFO or pipe for writing; a FIFO without a reader gives
 * -ENXIO instead of blocking. */
static int open_through(const char *path, int *ret_fd)
{
	int fd, flags;

	fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

static int take_held(const char *path)
{
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		if (held[i].path && !strcmp(held[i].path, path)) {
			int fd = held[i].fd;

			free(held[i].path);
			held[i].path = NULL;
			return fd;
		}
	return -1;
}

static bool is_held(const char *path)
{
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		if (held[i].path && !strcmp(held[i].path, path))
			return true;
	return false;
}

static void hold(const char *path, int fd)
{
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		if (!held[i].path) {
			held[i].path = strdup(path);
			if (held[i].path) {
				held[i].fd = fd;
				return;
			}
			break;
		}
	close(fd); /* opened again when written */
}

int atomic_check(const char *path)
{
	char file[PATH_MAX];
	enum kind kind;
	int fd, r;

	if (is_held(path))
		return 0;
	r = classify(path, &kind, file);
	if (r < 0 || kind == KIND_REPLACE)
		return r;
	r = open_through(path, &fd);
	if (r == 0)
		hold(path, fd);
	return r;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static mode_t creation_mode(const char *file)
{
	struct stat st;
	mode_t mask;

	/* The file the links led to when checked; a link put in its place
	 * since is not followed (it is renamed over). */
	if (lstat(file, &st) == 0 && S_ISREG(st.st_mode))
		return st.st_mode & 07777;
	mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

static int replace(const char *file, const char *buf, size_t len)
{
	int fd, r;

	r = temp_create(file, &fd);
	if (r < 0)
		return r;
	r = fchmod(fd, creation_mode(file)) < 0 ? -errno : 0;
	if (r == 0)
		r = write_all(fd, buf, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	/* Kept or removed, the first error is the one to report. */
	int f = temp_finish(file, r == 0);

	if (r == 0)
		r = f;
	if (r == 0)
		sync_directory(file);
	return r;
}

/* A regular file written through (no name to rename over) is emptied
 * first; devices and pipes have nothing to empty. */
static int truncate_file(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode) && ftruncate(fd, 0) < 0)
		return -errno;
	return 0;
}

static int write_through(int fd, const char *buf, size_t len)
{
	int r = truncate_file(fd);

	if (r == 0)
		r = write_all(fd, buf, len);

	/* Devices and pipes cannot be synced (EINVAL); a file can. */
	if (r == 0 && fsync(fd) < 0 && errno != EINVAL && errno != EROFS)
		r = -errno;
	if (close(fd) < 0 && r == 0 && errno != EINTR)
		r = -errno;
	return r;
}

static int write_out(const char *path, const char *buf, size_t len)
{
	char file[PATH_MAX];
	enum kind kind;
	int fd, r;

	fd = take_held(path);
	if (fd >= 0)
		return write_through(fd, buf, len);
	r = classify(path, &kind, file);
	if (r < 0)
		return r;
	if (kind == KIND_REPLACE)
		return replace(file, buf, len);
	r = open_through(path, &fd);
	if (r < 0)
		return r;
	return write_through(fd, buf, len);
}

/*
 * replace() with the contents written by 'fill' straight into the temporary
 * file, so that a large document is never held in memory whole: a failed
 * fill removes the temporary file and leaves 'file' as it was.
 */
static int replace_filled(const char *file, int (*fill)(FILE *f, void *ctx), void *ctx)
{
	FILE *f = NULL;
	int fd, r;

	r = temp_create(file, &fd);
	if (r < 0)
		return r;
	r = fchmod(fd, creation_mode(file)) < 0 ? -errno : 0;
	if (r == 0 && !(f = fdopen(fd, "w")))
		r = -errno;
	if (r == 0) {
		setvbuf(f, NULL, _IOFBF, 1 << 16);
		r = fill(f, ctx);
		errno = 0;
		if (fflush(f) != 0 && r == 0)
			r = errno ? -errno : -EIO;
	}
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (f ? fclose(f) != 0 : close(fd) < 0) {
		if (r == 0)
			r = -errno;
	}
	/* Kept or removed, the first error is the one to report. */
	int fin = temp_finish(file, r == 0);

	if (r == 0)
		r = fin;
	if (r == 0)
		sync_directory(file);
	return r;
}

int atomic_write(const char *path, int (*fill)(FILE *f, void *ctx), void *ctx)
{
	char *buf = NULL, file[PATH_MAX];
	enum kind kind;
	size_t len = 0;
	FILE *m;
	int r;

	/* A regular file: made in its temporary file, as it is written. */
	if (!is_held(path)) {
		r = classify(path, &kind, file);
		if (r < 0)
			return r;
		if (kind == KIND_REPLACE)
			return replace_filled(file, fill, ctx);
	}
	/* A device or FIFO is written through: the document is made in memory
	 * first, so that a failed fill writes nothing, and the write's own
	 * error (ENOSPC, EPIPE) is what is reported. */
	m = open_memstream(&buf, &len);
	if (!m)
		return -errno;
	r = fill(m, ctx);
	if (fclose(m) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0)
		r = write_out(path, buf, len);
	free(buf);
	return r;
}

/* Open the regular file 'file' (links resolved and checked) for writing in
 * place: created if missing, emptied; a link put at its name since the check
 * is not followed (-ELOOP). */
static int open_in_place(const char *file, int *ret_fd)
{
	struct stat st;
	int fd, r = 0;

	fd = open(file, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -EOPNOTSUPP;
	else if (ftruncate(fd, 0) < 0)
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int atomic_open_stream(const char *path, FILE **ret_f)
{
	char file[PATH_MAX];
	enum kind kind;
	FILE *f;
	int fd, r;

	fd = take_held(path);
	if (fd >= 0) {
		r = truncate_file(fd);
	} else {
		r = classify(path, &kind, file);
		if (r < 0)
			return r;
		if (kind == KIND_REPLACE)
			r = open_in_place(file, &fd);
		else if ((r = open_through(path, &fd)) == 0)
			r = truncate_file(fd);
	}
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		return r;
	}
	*ret_f = f;
	return 0;
}

/* 'dir' without trailing slashes, so that lstat() sees a link as a link
 * ("/tmp/link/" would be the directory it leads to). */
static int strip_slashes(const char *dir, char *ret, size_t size)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(ret, dir, n);
	ret[n] = '\0';
	return 0;
}

/* Open the output directory 'dir' after the link rule (link_trusted). */
static int open_dir(const char *dir, int *ret_fd)
{
	char bare[PATH_MAX], target[PATH_MAX];
	int fd, r;

	if (!*dir)
		return -ENOENT;
	r = strip_slashes(dir, bare, sizeof(bare));
	if (r == 0)
		r = resolve_links(bare, target, sizeof(target));
	if (r < 0)
		return r;
	fd = open(bare, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

int atomic_check_dir(const char *dir)
{
	int dfd, fd, r;

	r = open_dir(dir, &dfd);
	if (r < 0)
		return r;
	/* Ask the file system itself, as probe_directory() does. */
	fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		r = -errno;
	else if (faccessat(dfd, ".", W_OK, AT_EACCESS) < 0)
		r = -errno;
	close(dfd);
	return r;
}

/* Create "<name>.XXXXXX" in 'dfd' ('dir' its path, for atomic_cleanup()),
 * with a name no file has: O_EXCL, never through a link. */
static int temp_create_at(int dfd, const char *dir, const char *name, char *ret_tmp, size_t size,
			  int *ret_fd)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned long counter;
	struct timespec ts;
	sigset_t old;
	int fd = -1, r = -EEXIST;

	for (int attempt = 0; attempt < 100 && r == -EEXIST; attempt++) {
		char tmp[NAME_MAX + 1];
		unsigned long v;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 20) ^
		    (++counter * 2654435761UL);
		if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", name) >= (int)sizeof(tmp) ||
		    strlen(tmp) >= size)
			return -ENAMETOOLONG;
		for (size_t i = strlen(tmp) - 6; tmp[i]; i++, v /= sizeof(set) - 1)
			tmp[i] = set[v % (sizeof(set) - 1)];
		block_fatal_signals(&old);
		if (snprintf(tmp_path, sizeof(tmp_path), "%s/%s", dir, tmp) >=
		    (int)sizeof(tmp_path)) {
			r = -ENAMETOOLONG;
		} else {
			fd = openat(dfd, tmp,
				    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
				    0666);
			r = fd < 0 ? -errno : 0;
			if (r == 0) {
				tmp_live = 1;
				strcpy(ret_tmp, tmp);
			}
		}
		restore_signals(&old);
	}
	if (r == 0)
		*ret_fd = fd;
	return r;
}

/* Rename the temporary file 'tmp' of 'dfd' over 'name' (when 'keep'), or
 * remove it. */
static int temp_finish_at(int dfd, const char *tmp, const char *name, bool keep)
{
	sigset_t old;
	int r = 0;

	block_fatal_signals(&old);
	if (keep && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (!keep || r < 0)
		unlinkat(dfd, tmp, 0);
	tmp_live = 0;
	restore_signals(&old);
	return r;
}

/* May 'name' of 'dfd' be replaced: nothing there, or a regular file that is
 * not another user's in a sticky world-writable directory. */
static int replaceable_at(int dfd, const char *name)
{
	const mode_t open_sticky = S_ISVTX | S_IWOTH;
	struct stat st, dst;
	uid_t me = geteuid();

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISREG(st.st_mode))
		return -ATOMIC_E_IN_WAY;
	if (fstat(dfd, &dst) < 0)
		return -errno;
	if ((dst.st_mode & open_sticky) == open_sticky && st.st_uid != me && dst.st_uid != me)
		return -ATOMIC_E_STICKY;
	return 0;
}

static int write_in(const char *dir, const char *name, const char *buf, size_t len)
{
	char tmp[NAME_MAX + 1];
	int dfd, fd = -1, r;

	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	r = open_dir(dir, &dfd);
	if (r < 0)
		return r;
	r = replaceable_at(dfd, name);
	if (r == 0)
		r = temp_create_at(dfd, dir, name, tmp, sizeof(tmp), &fd);
	if (r < 0)
		goto out;
	r = write_all(fd, buf, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0 && errno != EINTR)
		r = -errno;
	/* What is at the name is checked once more just before the rename:
	 * in a sticky directory another user may have put a link there. */
	if (r == 0)
		r = replaceable_at(dfd, name);
	int f = temp_finish_at(dfd, tmp, name, r == 0);

	if (r == 0)
		r = f;
	if (r == 0)
		fsync(dfd);
out:
	close(dfd);
	return r;
}

int atomic_write_in(const char *dir, const char *name, int (*fill)(FILE *f, void *ctx), void *ctx)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int r;

	m = open_memstream(&buf, &len);
	if (!m)
		return -errno;
	r = fill(m, ctx);
	if (fclose(m) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0)
		r = write_in(dir, name, buf, len);
	free(buf);
	return r;
}

const char *atomic_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case ATOMIC_E_LINK:
		return "a symbolic link of another user in a sticky directory is not followed "
		       "(name the file it leads to, or write elsewhere)";
	case ATOMIC_E_IN_WAY:
		return "something other than a regular file has that name (remove it)";
	case ATOMIC_E_STICKY:
		return "another user's file in a sticky directory cannot be replaced (remove it, "
		       "or write elsewhere)";
	case EISDIR:
		return "is a directory (name a file in it)";
	case ENOENT:
		return "no such directory (create it first)";
	case ENOTDIR:
		return "a part of the path is not a directory";
	case EACCES:
		return "permission denied (choose a place you may write to)";
	case EPERM:
		return "no file can be created there (choose another place)";
	case EROFS:
		return "read-only file system (choose a writable place)";
	case ENOSPC:
	case EDQUOT:
		return str_errno(err < 0 ? -err : err);
	case ENXIO:
		return "nothing reads from it (start the FIFO's reader first)";
	case EPIPE:
		return "its reader went away";
	case EOPNOTSUPP:
		return "neither a file, a FIFO nor a character device (name a file)";
	case ELOOP:
		return "too many levels of symbolic links";
	case ENAMETOOLONG:
		return "file name too long";
	case ENOMEM:
		return "out of memory";
	default:
		return strerror(err < 0 ? -err : err);
	}
}
