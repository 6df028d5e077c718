/* SPDX-License-Identifier: MIT */
/*
 * The SVG flamegraph (flamegraph.h). The folded paths become a tree
 * (children sorted by name, as flamegraphs conventionally are, so that
 * equal frames of one caller sit together); each node is drawn at depth d
 * from the bottom, at the x its preceding siblings and its parent's start
 * give it, as wide as its count over the total.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/atomic.h"
#include "report/flamegraph.h"

#define FRAME_H 16
#define MARGIN 10
#define TOP 34	  /* the title's band */
#define BOTTOM 24 /* the details line */
#define CHAR_W 7  /* a label character, at the font size used */
#define MIN_WIDTH 0.1

struct node {
	const char *name; /* into a path of the folded set */
	size_t len;
	uint64_t count;
	struct node *child;
	size_t nchild, cap;
};

static void node_free(struct node *n)
{
	for (size_t i = 0; i < n->nchild; i++)
		node_free(&n->child[i]);
	free(n->child);
}

static struct node *node_get(struct node *n, const char *name, size_t len)
{
	for (size_t i = 0; i < n->nchild; i++)
		if (n->child[i].len == len && memcmp(n->child[i].name, name, len) == 0)
			return &n->child[i];
	if (n->nchild == n->cap) {
		size_t nc = n->cap ? n->cap * 2 : 4;
		struct node *v = realloc(n->child, nc * sizeof(*v));

		if (!v)
			return NULL;
		n->child = v;
		n->cap = nc;
	}
	n->child[n->nchild] = (struct node){ .name = name, .len = len };
	return &n->child[n->nchild++];
}

static int cmp_node(const void *a, const void *b)
{
	const struct node *x = a, *y = b;
	size_t l = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, l);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static void node_sort(struct node *n, unsigned depth, unsigned *max_depth)
{
	if (depth > *max_depth)
		*max_depth = depth;
	if (n->nchild > 1)
		qsort(n->child, n->nchild, sizeof(*n->child), cmp_node);
	for (size_t i = 0; i < n->nchild; i++)
		node_sort(&n->child[i], depth + 1, max_depth);
}

/* s[0..len) with XML's special characters escaped; bytes below ' ' (XML
 * 1.0 has no way to write most of them) as '?'. */
static void put_escaped(FILE *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		default:
			fputc(c < ' ' || c == 0x7f ? '?' : c, out);
		}
	}
}

/* The label that fits 'width' pixels: the name, or its start and "..",
 * or nothing; never a UTF-8 sequence cut in two. */
static void put_label(FILE *out, const char *name, size_t len, double width)
{
	double fit = (width - 6) / CHAR_W;

	if (fit < 3)
		return;
	if ((double)len <= fit) {
		put_escaped(out, name, len);
		return;
	}
	size_t k = (size_t)fit - 2;

	while (k > 0 && ((unsigned char)name[k] & 0xc0) == 0x80)
		k--;
	put_escaped(out, name, k);
	fputs("..", out);
}

/* A warm colour from the name, the same for a name wherever it is. */
static void colour(const char *name, size_t len, unsigned *r, unsigned *g, unsigned *b)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	*r = 205 + h % 50;
	*g = 80 + (h >> 8) % 150;
	*b = 30 + (h >> 16) % 50;
}

struct ctx {
	FILE *out;
	uint64_t total;
	const char *unit;
	unsigned height;
};

static void draw(const struct ctx *c, const struct node *n, unsigned depth, uint64_t before)
{
	double w = (double)n->count / (double)c->total;
	double px = w * (FLAMEGRAPH_WIDTH - 2 * MARGIN);
	double x = MARGIN + (double)before / (double)c->total * (FLAMEGRAPH_WIDTH - 2 * MARGIN);
	double y = c->height - BOTTOM - (double)(depth + 1) * FRAME_H;
	unsigned r, g, b;

	if (px < MIN_WIDTH)
		return;
	colour(n->name, n->len, &r, &g, &b);
	fprintf(c->out, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\" data-n=\"",
		(double)before / (double)c->total, w, depth);
	put_escaped(c->out, n->name, n->len);
	fputs("\"><title>", c->out);
	put_escaped(c->out, n->name, n->len);
	fprintf(c->out, " (%" PRIu64 " %s, %.2f%%)</title>", n->count, c->unit, 100 * w);
	fprintf(c->out,
		"<rect x=\"%.2f\" y=\"%.1f\" width=\"%.4f\" height=\"%d\" rx=\"2\" "
		"fill=\"rgb(%u,%u,%u)\"/><text x=\"%.2f\" y=\"%.1f\">",
		x, y, px, FRAME_H - 1, r, g, b, x + 3, y + FRAME_H - 4.5);
	put_label(c->out, n->name, n->len, px);
	fputs("</text></g>\n", c->out);
	for (size_t i = 0; i < n->nchild; i++) {
		draw(c, &n->child[i], depth + 1, before);
		before += n->child[i].count;
	}
}

/* Click a frame: it fills the width, its callees scale with it, its
 * callers span the width, everything else is hidden. */
static const char script[] =
	"var X0=10,W=1180;\n"
	"function fs(){return document.querySelectorAll('g.f');}\n"
	"function at(g,a){return +g.getAttribute(a);}\n"
	"function lab(g,w){var t=g.querySelector('text'),n=g.getAttribute('data-n'),"
	"c=Math.floor((w-6)/7);\n"
	" t.textContent=c<3?'':(n.length>c?n.substring(0,c-2)+'..':n);}\n"
	"function zoom(z){var zx=z?at(z,'data-x'):0,zw=z?at(z,'data-w'):1,"
	"zd=z?at(z,'data-d'):0,e=1e-9;\n"
	" fs().forEach(function(g){var x=at(g,'data-x'),w=at(g,'data-w'),"
	"d=at(g,'data-d'),nx,nw;\n"
	"  if(d<zd&&x<=zx+e&&x+w>=zx+zw-e){nx=0;nw=1;}\n"
	"  else if(d>=zd&&x>=zx-e&&x+w<=zx+zw+e){nx=(x-zx)/zw;nw=w/zw;}\n"
	"  else{g.style.display='none';return;}\n"
	"  g.style.display='';var r=g.querySelector('rect');\n"
	"  r.setAttribute('x',X0+nx*W);r.setAttribute('width',nw*W);\n"
	"  g.querySelector('text').setAttribute('x',X0+nx*W+3);lab(g,nw*W);});\n"
	" document.getElementById('unzoom').style.display=z?'':'none';}\n"
	"function det(g){document.getElementById('details').textContent=\n"
	" g?g.querySelector('title').textContent:' ';}\n"
	"function init(){fs().forEach(function(g){g.onclick=function(){zoom(g);};\n"
	" g.onmouseover=function(){det(g);};g.onmouseout=function(){det(null);};});\n"
	" document.getElementById('unzoom').onclick=function(){zoom(null);};}\n";

int report_flamegraph_svg(struct folded *f, const char *title, const char *unit, FILE *out)
{
	struct node root = { .name = "all", .len = 3 };
	unsigned max_depth = 0;
	int r = 0;

	folded_merge(f);
	for (size_t i = 0; i < f->n; i++) {
		struct node *n = &root;
		const char *p = f->v[i].path;

		root.count += f->v[i].count;
		for (;;) {
			size_t len = strcspn(p, ";");

			n = node_get(n, p, len);
			if (!n) {
				r = -ENOMEM;
				goto out;
			}
			n->count += f->v[i].count;
			if (!p[len])
				break;
			p += len + 1;
		}
	}
	node_sort(&root, 0, &max_depth);

	struct ctx c = { .out = out, .total = root.count ? root.count : 1, .unit = unit };

	c.height = TOP + (max_depth + 1) * FRAME_H + BOTTOM;
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%u\" viewBox=\"0 0 %d %u\" onload=\"init()\">\n"
		"<style>text{font-family:monospace;font-size:12px;fill:#000}"
		"g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.5}"
		"#title{font-size:16px}#unzoom{cursor:pointer;fill:#06c}</style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"#fdfaf4\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">",
		FLAMEGRAPH_WIDTH, c.height, FLAMEGRAPH_WIDTH, c.height, script, FLAMEGRAPH_WIDTH,
		c.height, FLAMEGRAPH_WIDTH / 2);
	put_escaped(out, title, strlen(title));
	fprintf(out,
		"</text>\n<text id=\"unzoom\" x=\"%d\" y=\"22\" style=\"display:none\">Reset "
		"zoom</text>\n<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		MARGIN, MARGIN, c.height - 8);
	if (root.count)
		draw(&c, &root, 0, 0);
	fputs("</svg>\n", out);
	if (fflush(out) != 0 || ferror(out))
		r = -EIO;
out:
	node_free(&root);
	return r;
}

void report_profile_basename(const char *name, char *buf, size_t size)
{
	size_t k = 0;

	for (; name[k] && k + 1 < size; k++) {
		char ch = name[k];
		int keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			   (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
			   (ch == '.' && k > 0);

		buf[k] = keep ? ch : '_';
	}
	if (k == 0 && size > 1)
		buf[k++] = '_';
	buf[k] = '\0';
}

struct profile_doc {
	struct folded *f;
	const char *title, *unit;
};

static int fill_profile(FILE *out, void *ctx)
{
	struct profile_doc *d = ctx;

	return d->title ? report_flamegraph_svg(d->f, d->title, d->unit, out)
			: folded_write(d->f, out);
}

int report_profile_write(struct folded *f, const char *dir, const char *name, const char *title,
			 const char *unit)
{
	struct profile_doc d = { f, title, unit };

	return atomic_write_in(dir, name, fill_profile, &d);
}
