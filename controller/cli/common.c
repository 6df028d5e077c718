/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "cli/cli.h"

int cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("benchtrap: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

void cli_note(const char *fmt, ...)
{
	va_list ap;

	fputs("benchtrap: note: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_open_binary(const char *path, struct elf_file **ret)
{
	const char *what = NULL;
	int r = elf_open(path, ret, &what);

	if (r == 0)
		return 0;
	switch (-r) {
	case ENOENT:
		return cli_error("%s: no such file (check the path, or build the binary first)",
				 path);
	case EISDIR:
		return cli_error("%s: is a directory, not a binary", path);
	case EACCES:
		return cli_error("%s: permission denied", path);
	case ELF_E_NOT_ELF:
		return cli_error("%s: not an ELF binary (a script or data file?)", path);
	case ELF_E_CLASS:
	case ELF_E_MACHINE:
		return cli_error("%s: %s; benchtrap drives 64-bit "
#if defined(__x86_64__)
				 "x86-64"
#else
				 "AArch64"
#endif
				 " binaries on this machine",
				 path, what ? what : elf_strerror(r));
	default:
		return cli_error("%s: %s", path, elf_strerror(r));
	}
}

