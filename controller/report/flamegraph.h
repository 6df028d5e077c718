/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_REPORT_FLAMEGRAPH_H
#define BENCHTRAP_REPORT_FLAMEGRAPH_H

/*
 * A flamegraph of folded stacks (util/folded.h) as one self-contained SVG
 * document: no network, no external script. Each frame is a <g> with a
 * <title> (hover: "name (count unit, percent)"), a <rect> as wide as its
 * share of the total and a label; the outermost frames stand on a bar
 * "all" at the bottom. A small inline script zooms into a frame on click
 * and back on "Reset zoom". Frames narrower than a tenth of a pixel are
 * left out (their counts stay in their callers' widths).
 */

#include <stdio.h>

#include "util/folded.h"

#define FLAMEGRAPH_WIDTH 1200 /* the document's width in pixels */

/* Write f (merged here) as an SVG flamegraph titled 'title', its counts
 * called 'unit' ("samples", "instructions"). 0, -ENOMEM or -EIO. */
int report_flamegraph_svg(struct folded *f, const char *title, const char *unit, FILE *out);

/* A file name for benchmark 'name' in buf (size >= 2): letters, digits,
 * '.', '-' and '_' are kept, any other byte becomes '_', a leading '.'
 * too, and the result is cut at size - 1 bytes; "fib[20]" -> "fib_20_". */
void report_profile_basename(const char *name, char *buf, size_t size);

/*
 * Write f into the file 'name' of the output directory 'dir' the way
 * atomic_write_in() (util/atomic.h) does: folded stacks when 'title' is
 * NULL, else the SVG flamegraph. A file that cannot be written completely
 * (a full file system: -ENOSPC) is not left behind, empty or cut. 0 or a
 * negative errno for atomic_strerror().
 */
int report_profile_write(struct folded *f, const char *dir, const char *name, const char *title,
			 const char *unit);

#endif
