/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fd.h"
#include "util/array.h"
#include "arch/arch.h"
#include "util/strutil.h"
#include "elf/elf-internal.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif


const char *elf_strerror(int err)
{
	switch (-err) {
	case ELF_E_NOT_ELF:
		return "not an ELF file";
	case ELF_E_TRUNCATED:
		return "truncated ELF file (its headers point past the end of the file)";
	case ELF_E_CLASS:
		return "32-bit ELF; benchtrap runs 64-bit binaries";
	case ELF_E_MACHINE:
		return "ELF for another architecture";
	case ELF_E_TYPE:
		return "not an executable or shared library (an object file or core dump?)";
	case ELF_E_REGISTRY:
		return "malformed benchtrap_registry section (built with a different target-stub?)";
	default:
		return strerror(-err);
	}
}

static const char *machine_name(unsigned machine)
{
	switch (machine) {
	case EM_386:
		return "ELF for i386";
	case EM_X86_64:
		return "ELF for x86-64";
	case EM_ARM:
		return "ELF for 32-bit ARM";
	case EM_AARCH64:
		return "ELF for AArch64";
	case EM_RISCV:
		return "ELF for RISC-V";
	case EM_PPC64:
		return "ELF for PowerPC64";
	case EM_S390:
		return "ELF for s390";
	case EM_MIPS:
		return "ELF for MIPS";
	default:
		return "ELF for another architecture";
	}
}

/*
 * Check the identification bytes ourselves before libelf sees the file, so
 * that a 32-bit, foreign or truncated file gets a precise message rather
 * than whatever libelf makes of it.
 */
static int check_ident(const void *image, size_t avail, uint64_t size, const char **ret_what)
{
	const unsigned char *p = image;

	if (avail < SELFMAG || memcmp(p, ELFMAG, SELFMAG) != 0)
		return -ELF_E_NOT_ELF;
	if (avail < EI_NIDENT)
		return -ELF_E_TRUNCATED;
	if (p[EI_CLASS] == ELFCLASS32) {
		if (ret_what) {
			uint16_t m = 0;

			if (avail >= sizeof(Elf32_Ehdr))
				memcpy(&m, p + offsetof(Elf32_Ehdr, e_machine), sizeof(m));
			*ret_what = m == EM_386 ? "32-bit ELF for i386" :
				    m == EM_ARM ? "32-bit ELF for ARM" :
						  "32-bit ELF";
		}
		return -ELF_E_CLASS;
	}
	if (p[EI_CLASS] != ELFCLASS64 || (p[EI_DATA] != ELFDATA2LSB && p[EI_DATA] != ELFDATA2MSB))
		return -ELF_E_NOT_ELF;
	if (avail < sizeof(Elf64_Ehdr))
		return -ELF_E_TRUNCATED;
	if (p[EI_DATA] == ELFDATA2MSB) {
		if (ret_what)
			*ret_what = "big-endian ELF";
		return -ELF_E_MACHINE;
	}

	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;

	if (eh->e_machine != arch_elf_machine) {
		if (ret_what)
			*ret_what = machine_name(eh->e_machine);
		return -ELF_E_MACHINE;
	}
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return -ELF_E_TYPE;
	/* Program and section header tables must lie inside the file. */
	if (eh->e_phoff > size || (uint64_t)eh->e_phnum * eh->e_phentsize > size - eh->e_phoff)
		return -ELF_E_TRUNCATED;
	if (eh->e_shoff > size || (uint64_t)eh->e_shnum * eh->e_shentsize > size - eh->e_shoff)
		return -ELF_E_TRUNCATED;
	return 0;
}

Elf_Scn *elf_section_by_name(struct elf_file *ef, const char *name, GElf_Shdr *ret_shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(ef->elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(ef->elf, shstrndx, sh.sh_name);
		if (n && strcmp(n, name) == 0) {
			if (ret_shdr)
				*ret_shdr = sh;
			return scn;
		}
	}
	return NULL;
}

Elf_Data *elf_next_section_data(struct elf_file *ef, Elf_Scn **scn, GElf_Word type,
				GElf_Shdr *ret_shdr)
{
	while ((*scn = elf_nextscn(ef->elf, *scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(*scn, ret_shdr) || ret_shdr->sh_type != type)
			continue;
		data = elf_getdata(*scn, NULL);
		if (data)
			return data;
	}
	return NULL;
}

int elf_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr, uint64_t *ret_offset)
{
	for (size_t i = 0; i < ef->ehdr.e_phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ef->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
			*ret_offset = ph.p_offset + (vaddr - ph.p_vaddr);
			return 0;
		}
	}
	return -EFAULT;
}

int elf_read_vaddr(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t size)
{
	uint64_t off, last;
	int r;

	if (size == 0)
		return 0;
	r = elf_vaddr_to_offset(ef, vaddr, &off);
	if (r < 0)
		return r;
	/* The last byte must map too, and contiguously. */
	r = elf_vaddr_to_offset(ef, vaddr + size - 1, &last);
	if (r < 0 || last != off + size - 1 || last >= ef->image_size)
		return -EFAULT;
	memcpy(buf, ef->image + off, size);
	return 0;
}

/* Sections whose contents lie beyond the end of the file mean truncation. */
static int check_sections(struct elf_file *ef)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -ELF_E_TRUNCATED;
		if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
			continue;
		if (sh.sh_offset > ef->image_size || sh.sh_size > ef->image_size - sh.sh_offset)
			return -ELF_E_TRUNCATED;
	}
	for (size_t i = 0; i < ef->ehdr.e_phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ef->elf, (int)i, &ph))
			return -ELF_E_TRUNCATED;
		if (ph.p_offset > ef->image_size || ph.p_filesz > ef->image_size - ph.p_offset)
			return -ELF_E_TRUNCATED;
	}
	return 0;
}

static void read_program_headers(struct elf_file *ef)
{
	for (size_t i = 0; i < ef->ehdr.e_phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ef->elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_INTERP && ph.p_filesz > 1 &&
		    ef->image[ph.p_offset + ph.p_filesz - 1] == '\0')
			ef->interp = ef->image + ph.p_offset;
	}
}

static void read_build_id(struct elf_file *ef)
{
	Elf_Scn *scn = NULL;

	GElf_Shdr sh;
	Elf_Data *data;

	while ((data = elf_next_section_data(ef, &scn, SHT_NOTE, &sh))) {
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;

			/* An empty descriptor is no build-id. */
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || nh.n_descsz == 0 ||
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4) != 0)
				continue;
			ef->build_id = malloc(nh.n_descsz * 2 + 1);
			if (!ef->build_id)
				return;
			for (size_t i = 0; i < nh.n_descsz; i++)
				sprintf(ef->build_id + 2 * i, "%02x", desc[i]);
			return;
		}
	}
}

static void read_comment(struct elf_file *ef)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(ef, ".comment", &sh);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;

	/* A NOBITS section has a size but no bytes (d_buf is NULL). */
	if (!data || !data->d_buf || data->d_size == 0 || sh.sh_type == SHT_NOBITS)
		return;
	/* NUL-separated strings; the first is the compiler of the program's
	 * own objects in the common case (crt files carry none or the same). */
	const char *p = data->d_buf, *end = p + data->d_size;

	while (p < end && *p == '\0')
		p++;
	if (p < end && memchr(p, '\0', (size_t)(end - p))) {
		ef->compiler = str_escape(p);
		if (!ef->compiler)
			ef->compiler = strdup(p);
	}
}

static int read_dynamic(struct elf_file *ef)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || sh.sh_entsize == 0)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			return 0;
		n = sh.sh_size / sh.sh_entsize;
		ef->needed = calloc(n ? n : 1, sizeof(*ef->needed));
		if (!ef->needed)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(ef->elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED)
				ef->needed[ef->nneeded++] = s;
			else if (dyn.d_tag == DT_RPATH)
				ef->rpath = s;
			else
				ef->runpath = s;
		}
		return 0;
	}
	return 0;
}

static int load(struct elf_file *ef)
{
	int r;

	ef->image = elf_rawfile(ef->elf, &ef->image_size);
	if (!ef->image)
		return -EIO;
	if (elf_kind(ef->elf) != ELF_K_ELF || !gelf_getehdr(ef->elf, &ef->ehdr))
		return -ELF_E_TRUNCATED;
	r = check_sections(ef);
	if (r < 0)
		return r;
	read_program_headers(ef);
	read_build_id(ef);
	read_comment(ef);
	r = read_dynamic(ef);
	if (r < 0)
		return r;
	r = elf_read_symbols(ef);
	if (r < 0)
		return r;
	/* A corrupt registry costs the benchmarks, not the symbols: the file
	 * opens, and elf_registry_error() says so to whoever needs them. */
	r = elf_read_registry(ef);
	if (r == -ELF_E_REGISTRY) {
		for (size_t i = 0; i < ef->nbenches; i++) {
			free(ef->benches[i].name);
			free(ef->benches[i].base);
		}
		free(ef->benches);
		ef->benches = NULL;
		ef->nbenches = 0;
		ef->registry_error = r;
		r = 0;
	}
	return r;
}

int elf_registry_error(const struct elf_file *ef)
{
	return ef->registry_error;
}

/* Read what benchtrap needs from 'ef' once libelf has it (ef->elf NULL: it
 * could not): *ret is 'ef' on success, else 'ef' is closed. */
static int load_or_close(struct elf_file *ef, struct elf_file **ret)
{
	int r = ef->elf ? load(ef) : -EIO;

	if (r < 0) {
		elf_close(ef);
		return r;
	}
	*ret = ef;
	return 0;
}

int elf_open(const char *path, struct elf_file **ret, const char **ret_what)
{
	unsigned char ident[sizeof(Elf64_Ehdr)];
	struct elf_file *ef;
	struct stat st;
	ssize_t got;
	int r;

	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return -ENOMEM;
	/* O_NONBLOCK: a FIFO must not hang us; it is refused below. */
	ef->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (ef->fd < 0 || fstat(ef->fd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		r = -EISDIR;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -ELF_E_NOT_ELF;
		goto fail;
	}
	ef->path = strdup(path);
	if (!ef->path) {
		r = -ENOMEM;
		goto fail;
	}
	/* Check the header ourselves first: libelf fails a file shorter than
	 * its header without saying why. */
	got = pread(ef->fd, ident, sizeof(ident), 0);
	if (got < 0) {
		r = -errno;
		goto fail;
	}
	r = check_ident(ident, (size_t)got, (uint64_t)st.st_size, ret_what);
	if (r < 0)
		goto fail;

	elf_version(EV_CURRENT);
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	return load_or_close(ef, ret);
fail:
	elf_close(ef);
	return r;
}

int elf_open_memory(const char *name, const void *image, size_t size, struct elf_file **ret)
{
	struct elf_file *ef;
	int r;

	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return -ENOMEM;
	ef->fd = -1;
	ef->path = strdup(name);
	ef->copy = malloc(size ? size : 1);
	if (!ef->path || !ef->copy) {
		r = -ENOMEM;
		goto fail;
	}
	memcpy(ef->copy, image, size);
	r = check_ident(ef->copy, size, size, NULL);
	if (r < 0)
		goto fail;
	elf_version(EV_CURRENT);
	ef->elf = elf_memory(ef->copy, size);
	return load_or_close(ef, ret);
fail:
	elf_close(ef);
	return r;
}

void elf_close(struct elf_file *ef)
{
	if (!ef)
		return;
	for (size_t i = 0; i < ef->nbenches; i++) {
		free(ef->benches[i].name);
		free(ef->benches[i].base);
	}
	free(ef->benches);
	if (ef->demangled)
		for (size_t i = 0; i < ef->nsyms; i++)
			free(ef->demangled[i]);
	free(ef->demangled);
	if (ef->escaped)
		for (size_t i = 0; i < ef->nsyms; i++)
			free(ef->escaped[i]);
	free(ef->escaped);
	free(ef->compiler);
	strv_clear(&ef->owned);
	free(ef->syms);
	free(ef->needed);
	free(ef->build_id);
	if (ef->elf)
		elf_end(ef->elf);
	fd_close(ef->fd);
	free(ef->path);
	free(ef->copy);
	free(ef);
}

const char *elf_path(const struct elf_file *ef)
{
	return ef->path;
}

bool elf_is_pic(const struct elf_file *ef)
{
	return ef->ehdr.e_type == ET_DYN;
}

bool elf_is_stripped(const struct elf_file *ef)
{
	return ef->stripped;
}

bool elf_calls_dlopen(const struct elf_file *ef)
{
	return ef->calls_dlopen;
}

bool elf_is_dynamic(const struct elf_file *ef)
{
	return ef->interp != NULL;
}

uint64_t elf_entry(const struct elf_file *ef)
{
	return ef->ehdr.e_entry;
}

const char *elf_build_id(const struct elf_file *ef)
{
	return ef->build_id;
}

const char *elf_interp(const struct elf_file *ef)
{
	return ef->interp;
}

const char *elf_compiler(const struct elf_file *ef)
{
	return ef->compiler;
}

size_t elf_bench_count(const struct elf_file *ef)
{
	return ef->nbenches;
}

const struct elf_bench *elf_bench(const struct elf_file *ef, size_t i)
{
	return i < ef->nbenches ? &ef->benches[i] : NULL;
}

size_t elf_needed_count(const struct elf_file *ef)
{
	return ef->nneeded;
}

const char *elf_needed(const struct elf_file *ef, size_t i)
{
	return i < ef->nneeded ? ef->needed[i] : NULL;
}
