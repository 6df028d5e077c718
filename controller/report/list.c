/* SPDX-License-Identifier: MIT */
/* What benchtrap list --json prints (report.h, docs/list.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <jansson.h>

#include "results/json.h"
#include "report/report.h"

#define LIST_SCHEMA "benchtrap-list/1"

static json_t *hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}

static json_t *binary_json(const struct elf_file *ef)
{
	return json_pack("{s:s, s:o, s:b, s:b, s:b, s:o}", "path", elf_path(ef), "build_id",
			 results_json_str(elf_build_id(ef)), "pie", elf_is_pic(ef), "static",
			 !elf_is_dynamic(ef), "stripped", elf_is_stripped(ef), "interpreter",
			 results_json_str(elf_interp(ef)));
}

static json_t *bench_json(const struct elf_bench *b)
{
	json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o}", "name", b->name, "base", b->base, "args",
			      b->has_arg ? json_pack("[I]", (json_int_t)b->arg) : json_array(),
			      "symbol", results_json_str(b->symbol ? b->symbol->name : NULL),
			      "address", hex(b->addr));

	/* BENCHTRAP_THREADS: the thread count of this one. */
	if (o && b->threads && json_object_set_new(o, "threads", json_integer(b->threads)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static const char *binding_name(enum elf_binding b)
{
	return b == ELF_BIND_LOCAL ? "local" : b == ELF_BIND_WEAK ? "weak" : "global";
}

static const char *kind_name(enum elf_fn_kind k)
{
	return k == ELF_FN_FRAGMENT ? "fragment" : k == ELF_FN_CLONE ? "clone" : "function";
}

static json_t *symbol_json(const struct report_list_symbol *ls)
{
	const struct elf_symbol *s = ls->symbol;

	return json_pack("{s:s, s:s, s:s, s:o, s:I, s:s, s:b, s:b, s:s, s:b, s:b}", "name",
			 s->demangled, "raw", s->name, "object", elf_path(ls->object), "address",
			 hex(s->addr), "size", (json_int_t)s->size, "binding",
			 binding_name(s->binding), "exported", s->dynamic, "ifunc", s->ifunc, "kind",
			 kind_name(s->kind), "member", s->member == ELF_MEMBER_YES, "callable",
			 s->kind != ELF_FN_FRAGMENT && s->member != ELF_MEMBER_YES);
}

static json_t *benches_doc(const struct report_list *l)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < l->nbenches; i++)
		if (json_array_append_new(arr, bench_json(l->benches[i])) < 0) {
			json_decref(arr);
			return NULL;
		}
	for (size_t i = 0; arr && i < l->nnames; i++)
		if (json_array_append_new(arr, json_pack("{s:s}", "name", l->names[i])) < 0) {
			json_decref(arr);
			return NULL;
		}
	return json_pack("{s:s, s:o, s:s, s:o}", "schema", LIST_SCHEMA, "binary",
			 binary_json(l->binary), "framework", l->framework, "benchmarks", arr);
}

static json_t *symbols_doc(const struct report_list *l)
{
	const struct elf_scope *scope = l->scope;
	json_t *libs = json_array(), *miss = json_array(), *arr = json_array();
	const char *registry = elf_registry_error(l->binary) < 0 ? "corrupt"
			       : elf_bench_count(l->binary)	 ? "ok"
								 : "none";

	/* The scope's first object is the binary itself. */
	for (size_t i = 1; libs && i < scope->n; i++)
		json_array_append_new(
			libs, json_pack("{s:s, s:o}", "path", elf_path(scope->objs[i]), "build_id",
					results_json_str(elf_build_id(scope->objs[i]))));
	for (char **m = scope->missing; miss && *m; m++)
		json_array_append_new(miss, json_string(*m));
	for (size_t i = 0; arr && i < l->nsymbols; i++)
		json_array_append_new(arr, symbol_json(&l->symbols[i]));
	return json_pack("{s:s, s:o, s:s, s:o, s:o, s:s, s:o}", "schema", LIST_SCHEMA, "binary",
			 binary_json(l->binary), "framework", l->framework, "libraries", libs,
			 "missing_libraries", miss, "registry", registry, "symbols", arr);
}

int report_list_json(const struct report_list *l, FILE *f)
{
	return results_json_dump(l->scope ? symbols_doc(l) : benches_doc(l), f);
}
