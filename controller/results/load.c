/* SPDX-License-Identifier: MIT */
/* Loading a results file (results.h, results_load): what may be read, and
 * how, before results_parse() reads it. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/strutil.h"
#include "results/instrument.h"
#include "results/internal.h"
#include "results/results.h"

/*
 * Whether 'fd' is the process's stdin ("-", /dev/stdin, /dev/fd/0): what the
 * user chose to pipe in is read whatever it is, blocking, up to the limit.
 */
static bool is_stdin(int fd)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && fstat(STDIN_FILENO, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino && a.st_rdev == b.st_rdev;
}

/* Wait until a non-blocking pipe has data or its last writer is gone. */
static int wait_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (poll(&pfd, 1, -1) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/*
 * Read all of 'fd' into a buffer of at most RESULTS_MAX_SIZE bytes (-EFBIG
 * beyond). On a pipe opened with O_NONBLOCK, EOF comes at once when nobody
 * writes, and EAGAIN means a writer holds it open: wait for its data.
 */
static int read_all(int fd, char **ret, size_t *ret_len)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int r;

	for (;;) {
		ssize_t got;

		if (len == cap) {
			char *nb;

			if (cap > RESULTS_MAX_SIZE) {
				r = -EFBIG;
				goto fail;
			}
			cap = cap ? cap * 2 : 65536;
			if (cap > (size_t)RESULTS_MAX_SIZE + 1)
				cap = (size_t)RESULTS_MAX_SIZE + 1;
			nb = realloc(buf, cap);
			if (!nb) {
				r = -ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == EAGAIN) {
			r = wait_readable(fd);
			if (r < 0)
				goto fail;
			continue;
		}
		if (got < 0) {
			r = -errno;
			goto fail;
		}
		if (got == 0)
			break;
		len += (size_t)got;
		if (len > RESULTS_MAX_SIZE) {
			r = -EFBIG;
			goto fail;
		}
	}
	*ret = buf;
	*ret_len = len;
	return 0;
fail:
	free(buf);
	return r;
}

/*
 * Open 'path' for results_load without ever blocking: O_NONBLOCK so that
 * opening a FIFO with no writer returns at once, then fstat decides. A
 * regular file is read; so is stdin, whatever it is; a pipe or FIFO is read
 * only while a writer holds it (process substitution, `<(...)`); anything
 * else (a device, a socket) is refused with -ENODEV, -ESOCKTNOSUPPORT.
 */
static int open_input(const char *path, int *ret_fd, bool *ret_pipe)
{
	struct stat st;
	int fd, r;

	if (!strcmp(path, "-")) {
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return -errno;
		*ret_fd = fd;
		*ret_pipe = false;
		return 0;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		r = -EISDIR;
		goto fail;
	}
	if (S_ISREG(st.st_mode) && st.st_size > RESULTS_MAX_SIZE) {
		r = -EFBIG;
		goto fail;
	}
	if (S_ISREG(st.st_mode) || is_stdin(fd)) {
		/* Blocking again: stdin is the user's to feed. */
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
			r = -errno;
			goto fail;
		}
		*ret_pipe = false;
	} else if (S_ISFIFO(st.st_mode)) {
		*ret_pipe = true;
	} else {
		r = S_ISSOCK(st.st_mode) ? -ESOCKTNOSUPPORT : -ENODEV;
		goto fail;
	}
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	return r;
}

static const char *load_error(int r)
{
	switch (-r) {
	case ENOENT:
		return "no such file (check the path, or write it with `benchtrap run --output "
		       "FILE`)";
	case EISDIR:
		return "is a directory, not a results file";
	case EFBIG:
		return "larger than 1 GiB, the most a results file may hold (is it the right "
		       "file?)";
	case EPIPE:
		return "a FIFO that nothing writes to (start its writer first, or give a regular "
		       "file)";
	case ENODEV:
		return "a device, not a results file (give a regular file, or '-' for stdin)";
	case ESOCKTNOSUPPORT:
		return "a socket, not a results file (give a regular file, or '-' for stdin)";
	case ENOMEM:
		return "out of memory";
	default:
		return NULL;
	}
}

int results_load(const char *path, struct results_file **ret, char **ret_error)
{
	char *buf = NULL;
	size_t len = 0;
	bool pipe = false;
	int fd = -1, r;

	r = open_input(path, &fd, &pipe);
	if (r == 0) {
		r = read_all(fd, &buf, &len);
		close(fd);
	}
	/* A FIFO whose writer never came: EOF before the first byte. */
	if (r == 0 && pipe && len == 0) {
		free(buf);
		r = -EPIPE;
	}
	if (r < 0)
		goto fail_errno;
	/* The buffer is the document's from now on. */
	return results_parse_owned(buf, len, path, ret, ret_error);

fail_errno:
	if (ret_error) {
		const char *why = load_error(r);

		if (asprintf(ret_error, "%s: %s", path, why ? why : strerror(-r)) < 0)
			*ret_error = NULL;
	}
	return r;
}

/* Observed calls are timed, with the stops removed: noisy, as walltime. */
bool results_instrument_exact(const char *instrument)
{
	return instrument && !results_instrument_has(instrument, RESULTS_INSTRUMENT_TIMED);
}

bool results_file_observed(const struct results_file *f)
{
	if (f->instrument)
		return results_instrument_has(f->instrument, RESULTS_INSTRUMENT_OBSERVED);
	for (size_t i = 0; i < f->n; i++)
		if (results_instrument_has(f->benches[i].instrument, RESULTS_INSTRUMENT_OBSERVED))
			return true;
	return false;
}

static bool fresh(const char *isolation)
{
	return !strcmp(isolation, "benchmark") || !strcmp(isolation, "process");
}

bool results_isolation_alike(const char *a, const char *b)
{
	return !a || !b || !strcmp(a, b) || (fresh(a) && fresh(b));
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* FNV-1a over the bytes, and a second hash of 8-byte words through a
 * finalizer, so that the two halves fail independently. */
int results_digest(const struct results_file *f, char ret[33])
{
	const unsigned char *p;
	uint64_t a = 0xcbf29ce484222325ULL, b = 0x9e3779b97f4a7c15ULL;
	size_t len;

	if (!f->doc || !f->doc->text)
		return -EINVAL;
	p = (const unsigned char *)f->doc->text;
	len = f->doc->len;
	for (size_t i = 0; i < len; i++)
		a = (a ^ p[i]) * 0x100000001b3ULL;
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = 0;

		memcpy(&w, p + i, len - i < 8 ? len - i : 8);
		b = mix64(b ^ w) + i;
	}
	b = mix64(b ^ len);
	snprintf(ret, 33, "%016" PRIx64 "%016" PRIx64, a, b);
	return 0;
}
