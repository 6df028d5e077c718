/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/strutil.h"

size_t str_distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la > lb ? la - lb >= cap : lb - la >= cap)
		return cap;

	/* Two rows of the Wagner-Fischer table. */
	size_t *prev = malloc((lb + 1) * sizeof(*prev));
	size_t *cur = malloc((lb + 1) * sizeof(*cur));
	size_t d = cap;

	if (!prev || !cur)
		goto out;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t row_min;

		cur[0] = row_min = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			size_t m = sub < del ? sub : del;

			cur[j] = m < ins ? m : ins;
			if (cur[j] < row_min)
				row_min = cur[j];
		}
		if (row_min >= cap)
			goto out;
		size_t *t = prev;
		prev = cur;
		cur = t;
	}
	d = prev[lb] < cap ? prev[lb] : cap;
out:
	free(prev);
	free(cur);
	return d;
}

bool str_has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/*
 * Length of the well-formed UTF-8 sequence at 'p', or 0: no overlong forms,
 * no surrogates (U+D800..U+DFFF), nothing above U+10FFFF (RFC 3629), which
 * is what JSON libraries accept.
 */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		if (p[0] == 0xe0)
			lo = 0xa0; /* overlong */
		else if (p[0] == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		if (p[0] == 0xf0)
			lo = 0x90; /* overlong */
		else if (p[0] == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return 0;
	}
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static bool needs_escape(const unsigned char *p, size_t *ret_len)
{
	size_t n = utf8_len(p);

	*ret_len = n ? n : 1;
	return n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f));
}

bool str_is_printable(const char *s)
{
	size_t len;

	for (const unsigned char *p = (const unsigned char *)s; *p; p += len)
		if (needs_escape(p, &len))
			return false;
	return true;
}

char *str_escape(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len, extra = 0;
	char *out, *o;

	for (const unsigned char *q = p; *q; q += len)
		if (needs_escape(q, &len))
			extra += 4;
	if (!extra)
		return NULL;
	out = o = malloc(strlen(s) + extra + 1);
	if (!out)
		return NULL;
	for (; *p; p += len) {
		if (needs_escape(p, &len)) {
			o += sprintf(o, "\\x%02x", *p);
		} else {
			memcpy(o, p, len);
			o += len;
		}
	}
	*o = '\0';
	return out;
}

bool str_is_executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int str_find_in_path(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		snprintf(buf, size, "%s", name);
		return 0;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *s = path;;) {
		size_t len = strcspn(s, ":");
		int n = snprintf(buf, size, "%.*s%s%s", (int)len, s, len ? "/" : "", name);

		if (n >= 0 && (size_t)n < size && str_is_executable_file(buf))
			return 0;
		if (!s[len])
			break;
		s += len + 1;
	}
	return -ENOENT;
}

const char *str_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int strv_push(struct strv *sv, char *s)
{
	if (sv->n + 2 > sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 8;
		char **v = realloc(sv->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sv->v = v;
		sv->cap = cap;
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
	return 0;
}

bool strv_contains(const struct strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return true;
	return false;
}

int str_list_lines(const char *text, size_t len, const char *suffix, char ***ret_names,
		   size_t *ret_n)
{
	const size_t sl = suffix ? strlen(suffix) : 0;
	const char *p = text, *end = text + len;
	struct strv sv = { 0 };

	for (; p < end; p++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		size_t l = (size_t)(e - p);
		char *s;

		if (l && p[l - 1] == '\r')
			l--;
		if (l <= sl || (sl && memcmp(p + l - sl, suffix, sl))) {
			p = e;
			continue;
		}
		l -= sl;
		if (memchr(p, '\0', l))
			goto bad;
		/* Not strndup: it may look for the end of all the text after
		 * p (ASan's strict_string_checks does), once a name. */
		s = malloc(l + 1);
		if (!s)
			goto nomem;
		memcpy(s, p, l);
		s[l] = '\0';
		if (str_has_control(s)) {
			free(s);
			goto bad;
		}
		if (strv_push(&sv, s) < 0) {
			free(s);
			goto nomem;
		}
		p = e;
	}
	if (!sv.v && !(sv.v = calloc(1, sizeof(*sv.v))))
		return -ENOMEM;
	*ret_names = sv.v;
	*ret_n = sv.n;
	return 0;
bad:
	str_free_n(sv.v, sv.n);
	return -EINVAL;
nomem:
	str_free_n(sv.v, sv.n);
	return -ENOMEM;
}

char *str_regex_exact(const char *s, const char *meta)
{
	char *re = malloc(2 * strlen(s) + 3), *q = re;

	if (!re)
		return NULL;
	*q++ = '^';
	for (const char *p = s; *p; p++) {
		if (strchr(meta, *p))
			*q++ = '\\';
		*q++ = *p;
	}
	*q++ = '$';
	*q = '\0';
	return re;
}

void str_free_n(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void strv_clear(struct strv *sv)
{
	str_free_n(sv->v, sv->n);
	*sv = (struct strv){ 0 };
}

const char *str_errno(int errnum)
{
	switch (errnum) {
	case ENOSPC:
		return "no space left on the device (free some space, or write elsewhere)";
	case EDQUOT:
		return "disk quota exceeded (free some space, or write elsewhere)";
	default:
		return strerror(errnum);
	}
}

char *str_fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

const char *str_signal_abbrev(int sig)
{
	const char *s = sigabbrev_np(sig);

	return s ? s : "?";
}

char *str_read_file(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	buf = malloc(1);
	while (buf) {
		char chunk[8192];
		size_t k = fread(chunk, 1, sizeof(chunk), f);
		char *nb;

		if (k == 0)
			break;
		nb = realloc(buf, len + k + 1);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		memcpy(buf + len, chunk, k);
		len += k;
	}
	if (buf)
		buf[len] = '\0';
	fclose(f);
	if (ret_len)
		*ret_len = len;
	return buf;
}

/* The last 'max' non-empty lines of file 'path', each on a line of its own
 * after "\n  " (malloc'ed), or NULL when there are none. */
char *str_tail_lines(const char *path, size_t max)
{
	char *text = str_read_file(path, NULL), *out = NULL;
	const char *starts[16];
	size_t n = 0;

	if (!text)
		return NULL;
	if (max > 16)
		max = 16;
	for (char *line = text, *end; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = '\0';
		if (!*line || str_has_control(line))
			continue;
		if (n == max) {
			memmove(starts, starts + 1, (max - 1) * sizeof(*starts));
			n--;
		}
		starts[n++] = line;
	}
	for (size_t i = 0; i < n; i++) {
		char *next = str_fmt("%s\n  %s", out ? out : "", starts[i]);

		free(out);
		out = next;
		if (!out)
			break;
	}
	free(text);
	return out;
}
