// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "support.h"

static Elf *open_elf(const char *path, int *ret_fd)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;

	if (fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e) {
		close(fd);
		return NULL;
	}
	*ret_fd = fd;
	return e;
}

uint64_t support_symbol(const char *path, const char *name)
{
	return support_symbol_sized(path, name, NULL);
}

uint64_t support_symbol_sized(const char *path, const char *name, uint64_t *ret_size)
{
	Elf_Scn *scn = NULL;
	uint64_t addr = 0;
	int fd;
	Elf *e = open_elf(path, &fd);

	if (!e)
		return 0;
	while ((scn = elf_nextscn(e, scn)) != NULL && addr == 0) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0 && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
				addr = sym.st_value;
				if (ret_size)
					*ret_size = sym.st_size;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return addr;
}

uint64_t support_entry(const char *path)
{
	GElf_Ehdr eh;
	uint64_t entry = 0;
	int fd;
	Elf *e = open_elf(path, &fd);

	if (!e)
		return 0;
	if (gelf_getehdr(e, &eh))
		entry = eh.e_entry;
	elf_end(e);
	close(fd);
	return entry;
}

static int children(bool kill_them)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;
	pid_t self = getpid();

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL) {
		char path[300], buf[512], *p;
		int ppid;
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(buf, sizeof(buf), f)) {
			fclose(f);
			continue;
		}
		fclose(f);
		p = strrchr(buf, ')');
		if (p && sscanf(p + 2, "%*c %d", &ppid) == 1 && ppid == self) {
			n++;
			if (kill_them)
				kill(atoi(de->d_name), SIGKILL);
		}
	}
	closedir(d);
	return n;
}

void support_subreaper(void)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

int support_children(void)
{
	return children(false);
}

void support_kill_children(void)
{
	pid_t pid;
	int status;

	children(true);
	/* A killed tracee may still stop at its exit event: let it go on. */
	while ((pid = waitpid(-1, &status, __WALL)) > 0)
		if (WIFSTOPPED(status))
			ptrace(PTRACE_CONT, pid, NULL, NULL);
}
