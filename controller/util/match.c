/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "util/strutil.h"
#include "util/match.h"

bool match_glob(const char *pattern, const char *name)
{
	return strcmp(pattern, name) == 0 || fnmatch(pattern, name, 0) == 0;
}

static char *strip_glob(const char *pattern)
{
	char *s = malloc(strlen(pattern) + 1), *o = s;

	if (!s)
		return NULL;
	for (const char *p = pattern; *p; p++)
		if (!strchr("*?[]\\", *p))
			*o++ = *p;
	*o = '\0';
	return s;
}

bool match_suggest(const char *pattern, const char *const *names, size_t n, size_t max, char *buf,
		 size_t size)
{
	return match_suggest_in(pattern, names, NULL, n, max, 0, buf, size);
}

bool match_suggest_in(const char *pattern, const char *const *names, const char *const *where,
		      size_t n, size_t max, size_t max_edits, char *buf, size_t size)
{
	char *needle = strip_glob(pattern);
	size_t cap, found = 0;
	struct {
		const char *name, *where;
		size_t score;
	} best[8];

	if (!needle)
		return false;
	if (max > 8)
		max = 8;
	/* Accept up to a third of the needle's length in edits, at least 2. */
	cap = strlen(needle) / 3 + 1;
	if (cap < 3)
		cap = 3;
	if (max_edits && cap > max_edits + 1)
		cap = max_edits + 1;
	for (size_t i = 0; i < n; i++) {
		size_t score;

		/* A substring is close whatever its length, unless the
		 * distance is bounded (a stripped binary's look-alikes). */
		if (*needle && !max_edits && strcasestr(names[i], needle)) {
			score = 0;
		} else {
			/* Compare with the name and with its stem: "fib[10]"
			 * and "f(1,2)" are close to "fibb" and "g" by "fib"
			 * and "f". */
			size_t stem_len = strcspn(names[i], "[(");
			char *stem = strndup(names[i], stem_len);
			size_t d = str_distance(needle, names[i], cap);

			if (stem && names[i][stem_len]) {
				size_t ds = str_distance(needle, stem, cap);

				d = ds < d ? ds : d;
			}
			free(stem);
			score = d + 1;
			if (score > cap)
				continue;
		}
		/* Insert in order of score, then name order; skip duplicates. */
		bool dup = false;

		for (size_t j = 0; j < found; j++)
			dup |= strcmp(best[j].name, names[i]) == 0;
		if (dup)
			continue;
		size_t at = found;

		while (at > 0 && best[at - 1].score > score)
			at--;
		if (at >= max)
			continue;
		if (found < max)
			found++;
		memmove(&best[at + 1], &best[at], (found - 1 - at) * sizeof(best[0]));
		best[at].name = names[i];
		best[at].where = where ? where[i] : NULL;
		best[at].score = score;
	}
	free(needle);
	if (!found)
		return false;
	buf[0] = '\0';
	for (size_t i = 0; i < found; i++) {
		size_t len = strlen(buf);

		snprintf(buf + len, size - len, "%s'%s'%s%s%s",
			 i == 0		  ? ""
			 : i + 1 == found ? " or "
					  : ", ",
			 best[i].name, best[i].where ? " (" : "",
			 best[i].where ? best[i].where : "", best[i].where ? ")" : "");
	}
	return true;
}

char *match_strip_params(const char *demangled)
{
	size_t len = strlen(demangled);
	int depth = 0;

	if (len && demangled[len - 1] == ')')
		for (size_t i = len; i-- > 0;) {
			if (demangled[i] == ')')
				depth++;
			else if (demangled[i] == '(' && --depth == 0 && i > 0)
				return strndup(demangled, i);
		}
	return strdup(demangled);
}

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

int match_parse_call(const char *text, char **ret_name, int64_t *args, unsigned max,
		     unsigned *ret_nargs)
{
	size_t len = strlen(text), open = 0;
	int64_t parsed[16];
	unsigned n = 0;
	int depth = 0;
	char *name;

	if (!*text)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '(' && depth++ == 0)
			open = i;
		else if (text[i] == ')' && --depth < 0)
			return -EINVAL;
	}
	if (depth)
		return -EINVAL;
	/* The last top-level list: arguments when it starts with a digit or
	 * a sign, else a parameter-type list that is part of the name. */
	if (text[len - 1] == ')') {
		const char *p = text + open + 1, *end = text + len - 1;

		if (open == 0)
			return -EINVAL;
		p += strspn(p, " \t");
		if (p < end && (isdigit((unsigned char)*p) || *p == '-' || *p == '+')) {
			while (p < end) {
				char *stop;

				if (n == max || n == sizeof(parsed) / sizeof(parsed[0]))
					return -EINVAL;
				/* Decimal, or hex with 0x; never octal: "010" is ten. */
				const char *digits = p + (*p == '-' || *p == '+');
				int base = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ?
						   16 :
						   10;

				errno = 0;
				parsed[n++] = strtoll(p, &stop, base);
				if (errno == ERANGE)
					return -ERANGE;
				/* "x", "2.5", "7L": not an integer. */
				if (stop == p || *stop == '.' || is_ident(*stop))
					return stop == p && strchr(",)", *p) ? -EINVAL : -EDOM;
				p = stop + strspn(stop, " \t");
				if (p == end)
					break;
				if (*p++ != ',')
					return -EINVAL;
				p += strspn(p, " \t");
				if (p == end)
					return -EINVAL;
			}
			len = open;
		} else if (open > 0 && text[open - 1] == ')' && !strstr(text, "(*") &&
			   !strstr(text, "(&")) {
			/* A list after the parameter types, as in
			 * "f(long)(abc)", holds arguments that are not
			 * integers ("(*" or "(&": the declarator of a function
			 * that returns a pointer to a function). */
			return -EDOM;
		}
	}
	name = strndup(text, len);
	if (!name)
		return -ENOMEM;
	memcpy(args, parsed, n * sizeof(*args));
	*ret_name = name;
	*ret_nargs = n;
	return 0;
}

/* The clone suffixes gcc gives a copy or a part of a function. */
static bool clone_word(const char *w, size_t len)
{
	static const char *const words[] = { "cold", "part", "constprop", "isra" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (len == strlen(words[i]) && !memcmp(w, words[i], len))
			return true;
	return false;
}

/* Where the clone suffixes at the end of s[0..len) start, or len. */
static size_t clone_tail(const char *s, size_t len)
{
	static const char mark[] = " [clone .";
	size_t end = len;

	/* Demangled: "f(long) [clone .isra.0] [clone .cold]". */
	while (end > 0 && s[end - 1] == ']') {
		size_t i = end;

		while (i-- > 0 && strncmp(s + i, mark, sizeof(mark) - 1) != 0)
			;
		if (i == (size_t)-1)
			break;
		end = i;
	}
	if (end != len)
		return end;
	/* Not mangled: "f.cold", "f.part.0", "f.constprop.0.isra.0". */
	const char *dot = memchr(s, '.', len);

	if (dot && !memchr(s, '(', len) && clone_word(dot + 1, strcspn(dot + 1, ".")))
		return (size_t)(dot - s);
	return len;
}

static char *squeeze_blanks(const char *s, size_t len, bool parens);

static bool ends_with_word(const char *s, size_t len, const char *word)
{
	size_t w = strlen(word);

	return len > w && !memcmp(s + len - w, word, w) && s[len - w - 1] == ' ';
}

void match_split(const char *d, struct match_sig *ret)
{
	static const char *const quals[] = { "const", "volatile", "&&", "&", "noexcept" };
	size_t len = strlen(d), end, open = 0, name_end;
	struct match_sig sg = { 0 };
	size_t space = 0;
	int depth = 0;

	sg.tail = clone_tail(d, len);
	end = sg.tail;
	while (end > 0 && d[end - 1] == ' ')
		end--;
	sg.quals_end = end;
	/* Qualifiers of a member function, after its parameter list. */
	for (bool more = true; more;) {
		more = false;
		for (size_t q = 0; q < sizeof(quals) / sizeof(quals[0]); q++)
			if (ends_with_word(d, end, quals[q])) {
				end -= strlen(quals[q]) + 1;
				more = true;
				break;
			}
	}
	if (end == 0 || d[end - 1] != ')')
		end = sg.quals_end;
	sg.quals_start = end;
	name_end = end;
	if (end > 0 && d[end - 1] == ')') {
		for (size_t i = end; i-- > 0;) {
			if (d[i] == ')') {
				depth++;
			} else if (d[i] == '(' && --depth == 0) {
				open = i;
				break;
			}
		}
		if (open > 0) {
			sg.has_params = true;
			sg.params_open = open;
			sg.params_close = end - 1;
			name_end = open;
		}
	}
	sg.name_end = name_end;
	/* A return type ends at the last blank outside brackets before the
	 * name, whose "operator new" or "operator int" has blanks of its own. */
	depth = 0;
	for (size_t i = 0; i < name_end; i++) {
		char c = d[i];

		if (depth == 0 && !strncmp(d + i, "operator", 8) && (i == 0 || !is_ident(d[i - 1])) &&
		    !is_ident(d[i + 8]))
			break;
		if (strchr("<([{", c))
			depth++;
		else if (strchr(">)]}", c) && depth > 0)
			depth--;
		else if (c == ' ' && depth == 0)
			space = i;
	}
	/* "non-virtual thunk to f()", "transaction clone for f()": not a
	 * return type. */
	if (space && !ends_with_word(d, space, "to") && !ends_with_word(d, space, "for")) {
		sg.ret_end = space;
		sg.name_start = space + 1;
	}
	*ret = sg;
}

/* The next token of s at *p: a run of name characters, or one other
 * character; blanks skipped. Its length, 0 at the end. */
static size_t next_token(const char *s, size_t *p, const char **ret)
{
	size_t i = *p, n;

	while (s[i] == ' ' || s[i] == '\t')
		i++;
	*ret = s + i;
	if (!s[i])
		return *p = i, 0;
	n = 1;
	if (is_ident(s[i]))
		while (is_ident(s[i + n]))
			n++;
	*p = i + n;
	return n;
}

/* Append token t[0..n) to o at *w, after a blank when both it and what
 * precedes are name characters. */
static void put_token(char *o, size_t *w, const char *t, size_t n)
{
	if (*w && is_ident(o[*w - 1]) && is_ident(t[0]))
		o[(*w)++] = ' ';
	memcpy(o + *w, t, n);
	*w += n;
}

static bool token_is(const char *t, size_t n, const char *word)
{
	return n == strlen(word) && !memcmp(t, word, n);
}

/* The words of a built-in integer type, in any order. */
static bool int_word(const char *t, size_t n)
{
	static const char *const words[] = { "unsigned", "signed", "short", "long", "int", "char" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (token_is(t, n, words[i]))
			return true;
	return false;
}

/* Built-in integer types as the demangler writes them: "long int" and
 * "int long" are "long", "unsigned" is "unsigned int", "short int" is
 * "short", "long long int" is "long long"; "signed char" stays. */
static size_t integer_types(const char *s, char *o)
{
	size_t p = 0, w = 0, n;
	const char *t;

	while ((n = next_token(s, &p, &t))) {
		bool u = false, sg = false, sh = false, ch = false;
		int longs = 0;
		size_t q = p;

		if (!int_word(t, n)) {
			put_token(o, &w, t, n);
			continue;
		}
		/* "unsigned __int128", "long double": as they are. */
		size_t r = p;
		const char *after = t;
		size_t an = n;

		while (an && int_word(after, an))
			an = next_token(s, &r, &after);
		if (an && is_ident(after[0])) {
			put_token(o, &w, t, n);
			while (p < r - an) {
				n = next_token(s, &p, &t);
				put_token(o, &w, t, n);
			}
			continue;
		}
		for (;;) {
			u |= token_is(t, n, "unsigned");
			sg |= token_is(t, n, "signed");
			sh |= token_is(t, n, "short");
			ch |= token_is(t, n, "char");
			longs += token_is(t, n, "long");
			p = q;
			if (!(n = next_token(s, &q, &t)) || !int_word(t, n))
				break;
		}
		const char *canon;

		if (ch)
			canon = sg ? "signed char" : u ? "unsigned char" : "char";
		else if (sh)
			canon = u ? "unsigned short" : "short";
		else if (longs >= 2)
			canon = u ? "unsigned long long" : "long long";
		else if (longs == 1)
			canon = u ? "unsigned long" : "long";
		else
			canon = u ? "unsigned int" : "int";
		put_token(o, &w, canon, strlen(canon));
	}
	o[w] = '\0';
	return w;
}

/*
 * One step of writing "const" after what it qualifies, as the demangler
 * does ("const char*" is "char const*"), and of dropping the "const" of a
 * parameter itself ("f(long const)" is "f(long)"), which is no part of a
 * function's type. true when it changed something.
 */
static bool const_step(const char *s, char *o)
{
	char stack[64];
	size_t p = 0, w = 0, n, depth = 0;
	const char *t;
	bool changed = false;
	char prev = '(';

	while ((n = next_token(s, &p, &t))) {
		if (strchr("(<[", t[0]) && depth < sizeof(stack))
			stack[depth++] = t[0];
		else if (strchr(")>]", t[0]) && depth)
			depth--;
		if (token_is(t, n, "const") && !changed) {
			size_t q = p, end = p, m;
			const char *u;
			int nest = 0;

			/* At the start of a type: move it after the name. */
			if (strchr("(,<", prev)) {
				while ((m = next_token(s, &q, &u))) {
					if (u[0] == '<' || u[0] == '(')
						nest++;
					else if ((u[0] == '>' || u[0] == ')') && nest)
						nest--;
					else if (!nest && !is_ident(u[0]) && u[0] != ':' &&
						 u[0] != '>')
						break;
					else if (!nest && u[0] == '>')
						break;
					end = q;
				}
				if (end > p) {
					for (size_t r = p; (m = next_token(s, &r, &u)) && r <= end;)
						put_token(o, &w, u, m);
					put_token(o, &w, "const", 5);
					prev = 't';
					p = end;
					changed = true;
					continue;
				}
			}
			/* Of a parameter itself: gone. */
			q = p;
			m = next_token(s, &q, &u);
			if (depth && stack[depth - 1] == '(' && m && (u[0] == ',' || u[0] == ')') &&
			    prev != '(' && prev != ',') {
				changed = true;
				continue;
			}
		}
		put_token(o, &w, t, n);
		prev = is_ident(t[0]) ? 't' : t[0];
	}
	o[w] = '\0';
	return changed;
}

/* Type names spelled as the demangler spells them; NULL when out of
 * memory. */
static char *normalise_types(const char *s)
{
	size_t cap = strlen(s) * 2 + 16;
	char *a = malloc(cap), *b = malloc(cap);

	if (!a || !b) {
		free(a);
		free(b);
		return NULL;
	}
	integer_types(s, a);
	for (int i = 0; i < 16 && const_step(a, b); i++) {
		char *x = a;

		a = b;
		b = x;
	}
	free(b);
	return a;
}

/* Pattern s without blanks but for one between two characters of names
 * ("unsigned long"), and its types spelled as the demangler spells them:
 * a demangled name is already, so it needs squeeze_blanks() alone. */
static char *squeeze_pattern(const char *s)
{
	char *raw = squeeze_blanks(s, strlen(s), false), *o;

	if (!raw)
		return NULL;
	o = normalise_types(raw);
	free(raw);
	return o;
}

static char *squeeze_blanks(const char *s, size_t len, bool parens)
{
	char *o = malloc(len + 3), *w = o;

	if (!o)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ' || s[i] == '\t') {
			if (w > o && is_ident(w[-1]) && i + 1 < len && is_ident(s[i + 1]))
				*w++ = ' ';
			continue;
		}
		*w++ = s[i];
	}
	if (parens) {
		*w++ = '(';
		*w++ = ')';
	}
	*w = '\0';
	return o;
}

static bool form_matches(const char *pattern, const char *s, size_t len, bool parens)
{
	char *f = squeeze_blanks(s, len, parens);
	bool hit = f && match_glob(pattern, f);

	free(f);
	return hit;
}

/* Where the template arguments that end d[from..end) start (its '<'), or
 * end when it has none; an operator's name ("operator<") has none. */
static size_t template_args(const char *d, size_t from, size_t end)
{
	int depth = 0;

	if (end <= from || d[end - 1] != '>')
		return end;
	for (size_t i = end; i-- > from;) {
		if (d[i] == '>')
			depth++;
		else if (d[i] == '<' && --depth == 0) {
			/* "operator<<", "operator< <int>": not arguments to
			 * strip, the name would be gone. */
			if (i == from || memmem(d + from, i - from, "operator", 8))
				return end;
			return i;
		}
	}
	return end;
}

size_t match_rust_hash(const char *demangled)
{
	size_t len = strlen(demangled);
	const char *h;

	if (len <= 19 || strncmp(demangled + len - 19, "::h", 3) != 0)
		return len;
	h = demangled + len - 19;
	for (size_t i = 3; i < 19; i++)
		if (!strchr("0123456789abcdef", h[i]))
			return len;
	return len - 19;
}

size_t match_name_end(const char *demangled, bool template_name)
{
	struct match_sig sg;

	match_split(demangled, &sg);
	return template_name ? template_args(demangled, sg.name_start, sg.name_end) : sg.name_end;
}

enum match_how match_function_how(const char *pattern, const char *raw, const char *demangled)
{
	struct match_sig sg;
	enum match_how how = MATCH_NONE;
	char *pat;

	if (match_glob(pattern, raw) || match_glob(pattern, demangled))
		return MATCH_FULL;
	/* A versioned name ("memcpy@GLIBC_2.2.5") is whole or nothing. */
	if (strchr(demangled, '@'))
		return MATCH_NONE;
	pat = squeeze_pattern(pattern);
	if (!pat)
		return MATCH_NONE;
	match_split(demangled, &sg);
	if (form_matches(pat, demangled, strlen(demangled), false)) {
		how = MATCH_FULL;
		goto out;
	}
	/* From the name, and from the return type when there is one: the
	 * name alone, with its parameters, with its qualifiers. */
	size_t froms[2] = { sg.name_start, 0 };

	for (size_t k = 0; k < (sg.name_start ? 2u : 1u) && how == MATCH_NONE; k++) {
		const char *s = demangled + froms[k];
		size_t from = froms[k];

		if (form_matches(pat, s, sg.name_end - from, false) ||
		    form_matches(pat, s, sg.quals_end - from, false) ||
		    (sg.has_params && form_matches(pat, s, sg.params_close + 1 - from, false)) ||
		    (!sg.has_params && form_matches(pat, s, sg.name_end - from, true)))
			how = MATCH_BASE;
	}
	/* The name of a function template without its arguments: every
	 * instance of it, as overloads ("twice" finds "int twice<int>(int)"). */
	size_t lt = template_args(demangled, sg.name_start, sg.name_end);

	if (how == MATCH_NONE && lt < sg.name_end &&
	    form_matches(pat, demangled + sg.name_start, lt - sg.name_start, false))
		how = MATCH_BASE;
	/* Rust v0: "crate::f::<u32>" is an instance of "crate::f". */
	if (how == MATCH_NONE && lt < sg.name_end && lt >= sg.name_start + 2 &&
	    !memcmp(demangled + lt - 2, "::", 2) &&
	    form_matches(pat, demangled + sg.name_start, lt - 2 - sg.name_start, false))
		how = MATCH_BASE;
	/* Rust legacy: "crate::f::h0123456789abcdef" is an instance of
	 * "crate::f" that keeps its hash (elf_demangle_disambiguate). */
	size_t hash = match_rust_hash(demangled);

	if (how == MATCH_NONE && hash < strlen(demangled) &&
	    (form_matches(pat, demangled, hash, false) || form_matches(pat, demangled, hash, true)))
		how = MATCH_BASE;
out:
	free(pat);
	return how;
}

bool match_function(const char *pattern, const char *raw, const char *demangled)
{
	return match_function_how(pattern, raw, demangled) != MATCH_NONE;
}

int match_floating_param(const char *demangled, unsigned n)
{
	static const char *const floating[] = { "float",     "double",	 "long double",
						"_Float16",  "_Float32", "_Float64",
						"_Float128", "__float128", "__bf16" };
	struct match_sig sg;
	const char *p, *end;
	int depth = 0, k = 0;

	match_split(demangled, &sg);
	if (!sg.has_params)
		return -1;
	p = demangled + sg.params_open + 1;
	end = demangled + sg.params_close;
	for (const char *q = p; q <= end && (unsigned)k < n; q++) {
		if (q < end && strchr("<([", *q))
			depth++;
		else if (q < end && strchr(">)]", *q))
			depth--;
		if (q < end && (*q != ',' || depth))
			continue;
		/* One parameter, p..q, blanks trimmed. */
		while (p < q && *p == ' ')
			p++;
		size_t len = (size_t)(q - p);

		while (len && p[len - 1] == ' ')
			len--;
		for (size_t i = 0; i < sizeof(floating) / sizeof(floating[0]); i++)
			if (len == strlen(floating[i]) && !memcmp(p, floating[i], len))
				return k;
		k++;
		p = q + 1;
	}
	return -1;
}
