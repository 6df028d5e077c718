/* SPDX-License-Identifier: MIT */
/*
 * Recognizing a criterion binary by its symbols, and finding the functions
 * that run one batch of a benchmark: the instances of Bencher<M>::iter*.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "criterion/criterion.h"

/* Bencher's batch functions, each #[inline(never)] in criterion 0.3. */
static const char *const batch_fns[] = {
	"iter", "iter_custom", "iter_batched", "iter_batched_ref", NULL,
};

/* The length of "::h<16 hex digits>" at the end of s (legacy mangling's
 * hash), or 0. */
static size_t hash_len(const char *s, size_t l)
{
	if (l < 19 || memcmp(s + l - 19, "::h", 3))
		return 0;
	for (size_t i = l - 16; i < l; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 19;
}

/* Whether s[0..l) is one of batch_fns[]. */
static bool is_batch_word(const char *s, size_t l)
{
	for (size_t k = 0; batch_fns[k]; k++)
		if (strlen(batch_fns[k]) == l && !memcmp(s, batch_fns[k], l))
			return true;
	return false;
}

bool criterion_is_batch_fn(const char *d)
{
	static const char legacy[] = "criterion::bencher::Bencher<M>::";
	static const char v0[] = "<criterion::bencher::Bencher";
	size_t l = strlen(d);

	if (!strncmp(d, legacy, sizeof(legacy) - 1)) {
		const char *w = d + sizeof(legacy) - 1;

		return is_batch_word(w, l - hash_len(d, l) - (size_t)(w - d));
	}
	if (!strncmp(d, v0, sizeof(v0) - 1)) {
		/* "<criterion::bencher::Bencher<...>>::iter::<...>": the word
		 * after the type's closing ">>::". */
		const char *w = strstr(d, ">>::");

		if (!w)
			return false;
		w += 4;
		return is_batch_word(w, strcspn(w, ":"));
	}
	return false;
}

bool criterion_detect(struct elf_file *ef)
{
	for (size_t i = 0; i < elf_symbol_count(ef); i++) {
		const char *name = elf_symbol(ef, i)->name;

		/* Mangled, the crate's name comes first: a cheap test before
		 * the demangled name's. */
		if (!strstr(name, "9criterion7bencher"))
			continue;
		if (criterion_is_batch_fn(elf_symbol(ef, i)->demangled))
			return true;
	}
	return false;
}

void criterion_fns_free(struct criterion_fn *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].name);
	free(v);
}

int criterion_batch_fns(const struct elf_file *ef, struct criterion_fn **ret, size_t *ret_n)
{
	struct criterion_fn *v = NULL;
	size_t n = 0;

	for (size_t i = 0; i < elf_symbol_count(ef); i++) {
		const struct elf_symbol *s = elf_symbol(ef, i);
		size_t l = strlen(s->demangled);
		struct criterion_fn *nv;

		/* A part the compiler split off ("iter.cold") is no entry. */
		if (!s->addr || strchr(s->name, '.') || !criterion_is_batch_fn(s->demangled))
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			goto nomem;
		v = nv;
		v[n].link_addr = s->addr;
		v[n].name = strndup(s->demangled, l - hash_len(s->demangled, l));
		if (!v[n].name)
			goto nomem;
		n++;
	}
	*ret = v;
	*ret_n = n;
	return 0;
nomem:
	criterion_fns_free(v, n);
	return -ENOMEM;
}

/* Whether demangled name d (its legacy hash cut) is Instant's method m. */
static bool is_instant(const char *d, const char *m)
{
	size_t l = strlen(d), ml = strlen(m);
	static const char *const types[] = { "std::time::Instant::", "<std::time::Instant>::" };

	l -= hash_len(d, l);
	for (size_t k = 0; k < 2; k++) {
		size_t tl = strlen(types[k]);

		if (l == tl + ml && !strncmp(d, types[k], tl) && !strncmp(d + tl, m, ml))
			return true;
	}
	return false;
}

int criterion_clock_fns(const struct elf_file *ef, struct criterion_clock *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < elf_symbol_count(ef); i++) {
		const struct elf_symbol *s = elf_symbol(ef, i);

		if (!s->addr || !s->size || strchr(s->name, '.'))
			continue;
		if (is_instant(s->demangled, "now")) {
			ret->now = s->addr;
			ret->now_size = s->size;
		} else if (is_instant(s->demangled, "elapsed")) {
			ret->elapsed = s->addr;
			ret->elapsed_size = s->size;
		}
	}
	return ret->now && ret->elapsed ? 0 : -ENOENT;
}

int criterion_spec(const struct suite_ctx *c, const char *name, struct bench_spec *ret)
{
	struct criterion_fn *fns = NULL;
	size_t n = 0;
	int r = criterion_batch_fns(c->ef, &fns, &n);
	char *fn = r == 0 && n ? strdup(fns[0].name) : NULL;

	if (r == 0 && (!n || fn))
		r = own_spec(c, name, fn, n ? fns[0].link_addr : 0, ret);
	else if (r == 0)
		r = -ENOMEM;
	criterion_fns_free(fns, n);
	return r;
}
