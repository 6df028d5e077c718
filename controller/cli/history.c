/* SPDX-License-Identifier: MIT */
/* benchtrap history: results kept over commits, and their change points
 * (docs/history.md). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "history/history.h"
#include "report/report.h"
#include "results/results.h"
#include "util/launch.h"
#include "util/strutil.h"
#include "cli/cli.h"

static const char usage[] =
	"usage: benchtrap history add [--db H.db] [--commit C] [--branch B] FILE...\n"
	"       benchtrap history import [--db H.db] [--commit-from name] FILE|DIR...\n"
	"       benchtrap history list [--db H.db] [--format text|json]\n"
	"       benchtrap history show BENCH [--db H.db] [--format text|json|csv]\n"
	"       benchtrap history check [--db H.db] [--bench GLOB] [--threshold PCT]\n"
	"       benchtrap history forget [--db H.db] --commit C | --before DATE | --run ID\n"
	"\n"
	"Keep every run's results (`benchtrap run --output FILE`) in one SQLite file,\n"
	"and find where each benchmark's figure changed over the commits.\n"
	"\n"
	"  add      record each results FILE as a run of a commit: every benchmark's\n"
	"           headline, interval, statistics and raw samples, with the run's\n"
	"           machine, kernel and binary. The commit and branch are --commit\n"
	"           and --branch, else the CI's (GITHUB_SHA, CI_COMMIT_SHA, ...), else\n"
	"           git's in the current directory; the runs of a series are in the\n"
	"           order of their commits' dates where git knows them, else of the\n"
	"           runs' dates. A file added before is not added again. Writers\n"
	"           wait for each other: adds at once all land\n"
	"  import   add many results files at once, a DIR's *.json in name order;\n"
	"           --commit-from name takes each file's commit from its name\n"
	"           (results/1a2b3c4.json)\n"
	"  list     the runs\n"
	"  show     the series of the benchmarks named BENCH (a glob: 'fib*'), one per\n"
	"           instrument and machine: a point per run\n"
	"  check    the change points of every series (benchmark x instrument x\n"
	"           machine): where its level steps, with the commits either side,\n"
	"           the size of the step and its significance. Timed series are\n"
	"           split where a permutation test finds a step (E-divisive means);\n"
	"           exact ones (callgrind, memory) change wherever their count does.\n"
	"           Exits 1 when a series' newest change point is a step up beyond\n"
	"           --threshold\n"
	"  forget   remove runs: a commit's (a prefix of 4 or more), those before a\n"
	"           date (2026-01-31, or a whole ISO 8601 time), or one by its id\n"
	"\n"
	"options:\n"
	"  --db PATH            the history (default: $BENCHTRAP_HISTORY, else\n"
	"                       ./benchtrap-history.db); add and import make it. A\n"
	"                       file that is not a benchtrap history is refused and\n"
	"                       left as it is\n"
	"  --commit C           add: the commit measured; forget: the commit forgotten\n"
	"  --branch B           add: its branch\n"
	"  --date DATE          add: the run's date instead of the file's\n"
	"  --machine NAME       add, import: the series' machine instead of the CPU\n"
	"                       model and cores\n"
	"  --commit-from name   import: each file's commit is its name without .json\n"
	"  --bench GLOB         check: only the benchmarks named so\n"
	"  --threshold PCT      check: a newest step up of more than PCT percent fails\n"
	"                       (5)\n"
	"  --before DATE        forget: the runs ordered before DATE\n"
	"  --run ID             forget: the run with this id (history list)\n"
	"  --format FMT         list, check: text or json; show: text, json or csv\n"
	"  -h, --help           show this help\n"
	"\n"
	"examples:\n"
	"  benchtrap run build/benches/examples --output results.json\n"
	"  benchtrap history add --db H.db --commit $(git rev-parse HEAD) results.json\n"
	"  benchtrap history show --db H.db 'fib[20]' --format json\n"
	"  benchtrap history check --db H.db --threshold 3\n"
	"  benchtrap report results.json --history H.db -o report.html\n"
	"\n"
	"exit status: 0 done (check: no newest regression), 1 check found a\n"
	"regression beyond the threshold, 2 bad usage or bad input\n";

enum {
	OPT_DB = 0x100,
	OPT_COMMIT,
	OPT_BRANCH,
	OPT_DATE,
	OPT_MACHINE,
	OPT_COMMIT_FROM,
	OPT_BENCH,
	OPT_THRESHOLD,
	OPT_BEFORE,
	OPT_RUN,
	OPT_FORMAT,
};

struct opts {
	const char *verb, *db, *bench, *format;
	struct history_context ctx;
	struct history_forget forget;
	bool commit_from_name;
	double threshold;
	const char **args;
	size_t nargs;
};

static const char *const verbs[] = { "add", "import", "list", "show", "check", "forget", NULL };

/* ---- the run's commit ------------------------------------------------- */

/* What `git ARGS...` printed on its first line, or NULL. */
static char *git_line(char *const *args)
{
	char path[PATH_MAX], *out = NULL, *argv[8] = { "git" };
	size_t n = 1;

	if (str_find_in_path("git", path, sizeof(path)) < 0)
		return NULL;
	for (; args[n - 1] && n < 7; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	if (launch_capture(path, argv, NULL, 10000, &out) < 0)
		return NULL;
	out[strcspn(out, "\n")] = '\0';
	if (!*out) {
		free(out);
		return NULL;
	}
	return out;
}

/* The first of the environment variables names[] that is set. */
static const char *ci_env(const char *const *names)
{
	for (; *names; names++) {
		const char *v = getenv(*names);

		if (v && *v)
			return v;
	}
	return NULL;
}

/* The commit's date from git, as UTC ISO 8601: the series' order. */
static char *commit_date(const char *commit)
{
	char *t = git_line((char *[]){ "show", "-s", "--format=%ct", (char *)commit, "--", NULL });
	char buf[32];
	time_t s;
	struct tm tm;

	if (!t)
		return NULL;
	s = (time_t)strtoll(t, NULL, 10);
	free(t);
	if (!s || !gmtime_r(&s, &tm))
		return NULL;
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return strdup(buf);
}

/* Fill what the options left of ctx from the CI's variables and git; the
 * strings made are kept in owned[] to free. */
static void context_fill(struct history_context *ctx, char *owned[3])
{
	static const char *const shas[] = { "GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT",
					    "GIT_COMMIT", NULL };
	static const char *const branches[] = { "GITHUB_HEAD_REF",    "GITHUB_REF_NAME",
						"CI_COMMIT_REF_NAME", "BUILDKITE_BRANCH",
						"GIT_BRANCH",	      NULL };

	if (!ctx->commit && !(ctx->commit = ci_env(shas)))
		ctx->commit = owned[0] = git_line((char *[]){ "rev-parse", "HEAD", NULL });
	if (!ctx->branch && !(ctx->branch = ci_env(branches))) {
		owned[1] = git_line((char *[]){ "rev-parse", "--abbrev-ref", "HEAD", NULL });
		/* A detached HEAD has no branch. */
		if (owned[1] && !strcmp(owned[1], "HEAD")) {
			free(owned[1]);
			owned[1] = NULL;
		}
		ctx->branch = owned[1];
	}
	if (!ctx->commit_date && ctx->commit)
		ctx->commit_date = owned[2] = commit_date(ctx->commit);
}

/* ---- add, import ------------------------------------------------------ */

/* Every results file of args (a directory's *.json, in name order), loaded
 * before anything is added: a bad one adds none. */
static int load_all(const struct opts *o, struct results_file ***ret, size_t *ret_n)
{
	struct results_file **v = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	for (size_t i = 0; i < o->nargs && r == 0; i++) {
		struct stat st;
		struct dirent **names = NULL;
		int k = 1;
		bool dir = !strcmp(o->verb, "import") && stat(o->args[i], &st) == 0 &&
			   S_ISDIR(st.st_mode);

		if (dir && (k = scandir(o->args[i], &names, NULL, alphasort)) < 0) {
			r = cli_error("history: %s: cannot read the directory: %s", o->args[i],
				      str_errno(errno));
			break;
		}
		for (int j = 0; j < k && r == 0; j++) {
			char *path = NULL;
			const char *name = dir ? names[j]->d_name : NULL;
			size_t l = name ? strlen(name) : 0;

			if (dir && (l < 6 || strcmp(name + l - 5, ".json") || name[0] == '.'))
				continue;
			path = dir ? str_fmt("%s/%s", o->args[i], name) : strdup(o->args[i]);
			if (!path ||
			    (n == cap && !(v = reallocarray(v, cap = 2 * cap + 8, sizeof(*v))))) {
				free(path);
				r = cli_error("history: out of memory");
				break;
			}
			/* The digest of what was read is needed: the document
			 * stays. */
			r = cli_load_results(path, true, &v[n]);
			n += r == 0;
			free(path);
		}
		for (int j = 0; dir && j < k; j++)
			free(names[j]);
		free(names);
	}
	if (r == 0 && n == 0)
		r = cli_error("history: %s: no results file (*.json) to import", o->args[0]);
	*ret = v;
	*ret_n = n;
	return r;
}

/* The commit a file's name gives: results/1a2b3c4.json is 1a2b3c4. */
static char *commit_of_name(const char *path)
{
	const char *b = strrchr(path, '/');
	size_t l;

	b = b ? b + 1 : path;
	l = strlen(b);
	if (l > 5 && !strcmp(b + l - 5, ".json"))
		l -= 5;
	return strndup(b, l);
}

static int cmd_add(const struct opts *o)
{
	struct results_file **files = NULL;
	struct history *h = NULL;
	char *owned[3] = { 0 }, *msg = NULL;
	size_t n = 0, added = 0;
	int r = load_all(o, &files, &n);

	if (r == 0 && history_open(o->db, true, &h, &msg) < 0) {
		r = cli_error("%s", msg ? msg : "out of memory");
		free(msg);
		msg = NULL;
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct history_context ctx = o->ctx;
		char *own[3] = { 0 }, c[16];
		bool fresh;

		if (o->commit_from_name)
			ctx.commit = own[0] = commit_of_name(files[i]->path);
		if (!strcmp(o->verb, "add"))
			context_fill(&ctx, owned);
		else if (ctx.commit)
			ctx.commit_date = own[2] = commit_date(ctx.commit);
		if (history_add(h, files[i], &ctx, &fresh, &msg) < 0) {
			r = cli_error("%s", msg ? msg : "out of memory");
			free(msg);
			msg = NULL;
		} else if (!strcmp(o->verb, "add")) {
			snprintf(c, sizeof(c), "%.12s", ctx.commit ? ctx.commit : "");
			printf(fresh ? "%s: added, %zu benchmark(s)%s%s\n"
				     : "%s: in the history already, not added again\n",
			       files[i]->path, files[i]->n, ctx.commit ? ", commit " : "", c);
		}
		added += fresh;
		free(own[0]);
		free(own[2]);
	}
	if (r == 0 && !strcmp(o->verb, "import"))
		printf("imported %zu of %zu results file(s) into %s (%zu in it already)\n", added,
		       n, o->db, n - added);
	for (size_t i = 0; i < n; i++)
		results_free(files[i]);
	free(files);
	for (int k = 0; k < 3; k++)
		free(owned[k]);
	history_close(h);
	return r;
}

/* ---- list, show, check, forget ---------------------------------------- */

static int open_read(const struct opts *o, struct history **h)
{
	char *msg = NULL;

	if (history_open(o->db, false, h, &msg) == 0)
		return 0;
	cli_error("%s", msg ? msg : "out of memory");
	free(msg);
	return EXIT_USAGE;
}

static int format_of(const struct opts *o, bool csv, enum report_history_format *ret)
{
	static const char *const text_json[] = { "text", "json", NULL };
	static const char *const all[] = { "text", "json", "csv", NULL };
	int i = 0, r;

	if (!o->format) {
		*ret = REPORT_HISTORY_TEXT;
		return 0;
	}
	r = cli_parse_choice(o->verb, "--format", o->format, csv ? all : text_json, false, &i);
	*ret = (enum report_history_format)i;
	return r;
}

/* What printing gave: 0, or the line for a failed write. */
static int printed(int r)
{
	return r < 0 ? cli_error("history: cannot write the output: %s", str_errno(-r)) : 0;
}

static int cmd_list(const struct opts *o, struct history *h, enum report_history_format fmt)
{
	struct history_run *v = NULL;
	size_t n = 0;
	char *msg = NULL;
	int r;

	if (history_runs(h, &v, &n, &msg) < 0) {
		cli_error("%s", msg ? msg : "out of memory");
		free(msg);
		return EXIT_USAGE;
	}
	(void)o;
	r = printed(report_history_runs(stdout, v, n, fmt));
	history_runs_free(v, n);
	return r;
}

static int series_of(const struct opts *o, struct history *h, const char *name,
		     struct history_series **v, size_t *n)
{
	char *msg = NULL;

	if (history_series(h, name, v, n, &msg) == 0)
		return 0;
	cli_error("%s", msg ? msg : "out of memory");
	free(msg);
	(void)o;
	return EXIT_USAGE;
}

static int cmd_show(const struct opts *o, struct history *h, enum report_history_format fmt)
{
	struct history_series *v = NULL;
	size_t n = 0;
	int r = series_of(o, h, o->args[0], &v, &n);

	if (r)
		return r;
	if (!n)
		r = cli_error("history show: no benchmark named '%s' in %s ('history list' shows "
			      "the runs; a glob, 'fib*', names several)",
			      o->args[0], o->db);
	else
		r = printed(report_history_series(stdout, v, n, fmt));
	history_series_free(v, n);
	return r;
}

static int cmd_check(const struct opts *o, struct history *h, enum report_history_format fmt)
{
	struct history_series *v = NULL;
	struct history_finding *f = NULL;
	size_t n = 0;
	bool regressed = false;
	int r = series_of(o, h, o->bench, &v, &n);

	if (r)
		return r;
	if (o->bench && !n) {
		history_series_free(v, n);
		return cli_error("history check: no benchmark named '%s' in %s", o->bench, o->db);
	}
	if (history_check(v, n, o->threshold, &f) < 0) {
		history_series_free(v, n);
		return cli_error("history check: out of memory");
	}
	r = printed(report_history_findings(stdout, f, n, o->threshold, fmt));
	for (size_t i = 0; i < n; i++)
		regressed |= f[i].regressed;
	history_findings_free(f, n);
	history_series_free(v, n);
	return r ? r : regressed ? EXIT_FAILED : EXIT_OK;
}

static int cmd_forget(const struct opts *o)
{
	struct history *h = NULL;
	char *msg = NULL;
	size_t n = 0;
	struct stat st;

	if (!o->forget.commit && !o->forget.before && !o->forget.run)
		return cli_error("history forget: which runs? give --commit C, --before DATE or "
				 "--run ID ('history list' shows them)");
	if (o->forget.commit && strlen(o->forget.commit) < 4)
		return cli_error("history forget: --commit wants 4 characters or more of the "
				 "commit, not '%s'",
				 o->forget.commit);
	/* Forgetting makes no history where there was none. */
	if (stat(o->db, &st) < 0 || history_open(o->db, true, &h, &msg) < 0) {
		if (!msg)
			return cli_error("%s: no history here (--db names another)", o->db);
		cli_error("%s", msg);
		free(msg);
		return EXIT_USAGE;
	}
	if (history_forget(h, &o->forget, &n, &msg) < 0) {
		cli_error("%s", msg ? msg : "out of memory");
		free(msg);
		history_close(h);
		return EXIT_USAGE;
	}
	printf("forgot %zu run(s)\n", n);
	history_close(h);
	return EXIT_OK;
}

/* ---- the command line ------------------------------------------------- */

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "commit", required_argument, NULL, OPT_COMMIT },
		{ "branch", required_argument, NULL, OPT_BRANCH },
		{ "date", required_argument, NULL, OPT_DATE },
		{ "machine", required_argument, NULL, OPT_MACHINE },
		{ "commit-from", required_argument, NULL, OPT_COMMIT_FROM },
		{ "bench", required_argument, NULL, OPT_BENCH },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "before", required_argument, NULL, OPT_BEFORE },
		{ "run", required_argument, NULL, OPT_RUN },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	long id;
	int c, r;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-h", longopts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (!o->verb) {
				int i;

				r = cli_parse_choice("history", "the command", optarg, verbs, true,
						     &i);
				if (r)
					return r;
				o->verb = verbs[i];
			} else {
				o->args[o->nargs++] = optarg;
			}
			break;
		case OPT_DB:
			o->db = optarg;
			break;
		case OPT_COMMIT:
			o->ctx.commit = o->forget.commit = optarg;
			break;
		case OPT_BRANCH:
			o->ctx.branch = optarg;
			break;
		case OPT_DATE:
			o->ctx.date = optarg;
			break;
		case OPT_MACHINE:
			o->ctx.machine = optarg;
			break;
		case OPT_COMMIT_FROM:
			if (strcmp(optarg, "name"))
				return cli_error(
					"history import: --commit-from is 'name', not '%s'",
					optarg);
			o->commit_from_name = true;
			break;
		case OPT_BENCH:
			o->bench = optarg;
			break;
		case OPT_THRESHOLD:
			r = cli_parse_percent("history check", "--threshold", optarg,
					      &o->threshold);
			if (r)
				return r;
			break;
		case OPT_BEFORE:
			o->forget.before = optarg;
			break;
		case OPT_RUN:
			r = cli_parse_count("history forget", "--run", optarg, 1, LONG_MAX, &id);
			if (r)
				return r;
			o->forget.run = id;
			break;
		case OPT_FORMAT:
			o->format = optarg;
			break;
		default:
			/* After --help: done, -1. */
			r = cli_help_or_bad_option("history", usage, "-h", c, EXIT_OK, argc, argv);
			return c == 'h' && r == EXIT_OK ? -1 : r;
		}
	}
	return 0;
}

int cli_history(int argc, char **argv)
{
	struct opts o = { .threshold = RESULTS_DEFAULT_THRESHOLD };
	struct history *h = NULL;
	enum report_history_format fmt;
	int r;

	o.args = calloc((size_t)argc + 1, sizeof(*o.args));
	if (!o.args)
		return cli_error("history: out of memory");
	r = parse(argc, argv, &o);
	if (r) {
		r = r < 0 ? EXIT_OK : r;
		goto out;
	}
	o.db = o.db					     ? o.db
	       : getenv(HISTORY_ENV) && *getenv(HISTORY_ENV) ? getenv(HISTORY_ENV)
							     : HISTORY_DEFAULT_PATH;
	if (!o.verb) {
		r = cli_error("history: which command? add, import, list, show, check or forget "
			      "(see 'benchtrap history --help')");
		goto out;
	}
	if ((!strcmp(o.verb, "add") || !strcmp(o.verb, "import")) && !o.nargs) {
		r = cli_error("history %s: which results files? usage: benchtrap history %s "
			      "[--db H.db] FILE...",
			      o.verb, o.verb);
		goto out;
	}
	if (!strcmp(o.verb, "show") && o.nargs != 1) {
		r = cli_error("history show: %s (usage: benchtrap history show BENCH)",
			      o.nargs ? "one benchmark, or a glob of names, not several"
				      : "which benchmark?");
		goto out;
	}
	if (strcmp(o.verb, "add") && strcmp(o.verb, "import") && strcmp(o.verb, "show") &&
	    o.nargs) {
		r = cli_error("history %s: unexpected argument '%s'", o.verb, o.args[0]);
		goto out;
	}
	r = format_of(&o, !strcmp(o.verb, "show"), &fmt);
	if (r)
		goto out;
	if (!strcmp(o.verb, "add") || !strcmp(o.verb, "import")) {
		r = cmd_add(&o);
		goto out;
	}
	if (!strcmp(o.verb, "forget")) {
		r = cmd_forget(&o);
		goto out;
	}
	r = open_read(&o, &h);
	if (r)
		goto out;
	if (!strcmp(o.verb, "list"))
		r = cmd_list(&o, h, fmt);
	else if (!strcmp(o.verb, "show"))
		r = cmd_show(&o, h, fmt);
	else
		r = cmd_check(&o, h, fmt);
out:
	history_close(h);
	free(o.args);
	return r;
}
