/* lib/out/flame.c - the flame-graph / flame-chart SVG writer (flame.h).
 *
 * Stacks go into a tree of nodes (node 0: the root, "all"); a graph finds
 * a child by (parent, name) in a hash table, a chart looks only at the
 * parent's last child.  Names are interned once.  hwt_flame_write sums
 * the tree bottom up (children are always created after their parent, so
 * one pass over the nodes from the last to the first does it), sorts a
 * graph's siblings by name, lays frames out depth first (iteratively: stacks
 * may be deep) and writes one <g> per frame that is at least 0.1 pixel
 * wide.  The script at the end re-lays the frames out on zoom from their
 * data-x/data-n/data-d attributes (counts, not pixels).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "out/flame.h"

struct fnode {
	const char *name;
	uint32_t parent, first, last, next; /* 0: none (node 0 is never a child) */
	uint64_t self, total, tself, ttotal, x, pruned;
	uint32_t depth;
};

struct hwt_flame {
	struct hwt_flame_config cfg;
	struct fnode *n;
	size_t nn, capn;
	/* (parent, name) -> node, graphs only */
	uint32_t *slot;
	size_t capslot, nslot;
	/* interned names */
	char **names;
	size_t capnames, nnames;
	uint64_t total;
};

void hwt_flame_config_init(struct hwt_flame_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static uint64_t hash2(uint64_t a, uint64_t b)
{
	uint64_t h = (a + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull ^ b;
	h ^= h >> 31;
	return h * 0x94d049bb133111ebull;
}

static const char *intern(struct hwt_flame *f, const char *s)
{
	if ((f->nnames + 1) * 2 > f->capnames) {
		size_t nc = f->capnames ? 2 * f->capnames : 1024;
		char **nv = calloc(nc, sizeof(*nv));
		if (!nv)
			return NULL;
		for (size_t i = 0; i < f->capnames; i++) {
			if (!f->names[i])
				continue;
			size_t j = hash_str(f->names[i]) & (nc - 1);
			while (nv[j])
				j = (j + 1) & (nc - 1);
			nv[j] = f->names[i];
		}
		free(f->names);
		f->names = nv;
		f->capnames = nc;
	}
	size_t j = hash_str(s) & (f->capnames - 1);
	while (f->names[j]) {
		if (!strcmp(f->names[j], s))
			return f->names[j];
		j = (j + 1) & (f->capnames - 1);
	}
	f->names[j] = strdup(s);
	if (f->names[j])
		f->nnames++;
	return f->names[j];
}

struct hwt_flame *hwt_flame_alloc(const struct hwt_flame_config *cfg)
{
	struct hwt_flame *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	hwt_flame_config_init(&f->cfg);
	if (cfg)
		memcpy(&f->cfg, cfg, cfg->size < sizeof(f->cfg) ? cfg->size : sizeof(f->cfg));
	f->cfg.size = sizeof(f->cfg);
	if (!f->cfg.width)
		f->cfg.width = 1200;
	if (f->cfg.width < 200)
		f->cfg.width = 200;
	f->n = calloc(256, sizeof(*f->n));
	if (!f->n) {
		free(f);
		return NULL;
	}
	f->capn = 256;
	f->nn = 1;
	f->n[0].name = "all";
	return f;
}

void hwt_flame_free(struct hwt_flame *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->capnames; i++)
		free(f->names[i]);
	free(f->names);
	free(f->slot);
	free(f->n);
	free(f);
}

static int slot_grow(struct hwt_flame *f)
{
	size_t nc = f->capslot ? 2 * f->capslot : 1024;
	uint32_t *ns = calloc(nc, sizeof(*ns));
	if (!ns)
		return HWT_ERR_NOMEM;
	for (size_t i = 0; i < f->capslot; i++) {
		uint32_t v = f->slot[i];
		if (!v)
			continue;
		size_t j = hash2(f->n[v].parent, (uint64_t)(uintptr_t)f->n[v].name) & (nc - 1);
		while (ns[j])
			j = (j + 1) & (nc - 1);
		ns[j] = v;
	}
	free(f->slot);
	f->slot = ns;
	f->capslot = nc;
	return 0;
}

static uint32_t new_node(struct hwt_flame *f, uint32_t parent, const char *name)
{
	if (f->nn == f->capn) {
		if (f->capn >= UINT32_MAX / 2)
			return 0;
		struct fnode *nv = realloc(f->n, 2 * f->capn * sizeof(*nv));
		if (!nv)
			return 0;
		f->n = nv;
		f->capn *= 2;
	}
	uint32_t i = (uint32_t)f->nn++;
	memset(&f->n[i], 0, sizeof(f->n[i]));
	f->n[i].name = name;
	f->n[i].parent = parent;
	struct fnode *p = &f->n[parent];
	if (p->last)
		f->n[p->last].next = i;
	else
		p->first = i;
	p->last = i;
	return i;
}

static uint32_t child(struct hwt_flame *f, uint32_t parent, const char *name)
{
	if (f->cfg.chart) {
		uint32_t l = f->n[parent].last;
		if (l && f->n[l].name == name)
			return l;
		return new_node(f, parent, name);
	}
	if ((f->nslot + 1) * 2 > f->capslot && slot_grow(f))
		return 0;
	size_t j = hash2(parent, (uint64_t)(uintptr_t)name) & (f->capslot - 1);
	while (f->slot[j]) {
		uint32_t v = f->slot[j];
		if (f->n[v].parent == parent && f->n[v].name == name)
			return v;
		j = (j + 1) & (f->capslot - 1);
	}
	uint32_t v = new_node(f, parent, name);
	if (v) {
		f->slot[j] = v;
		f->nslot++;
	}
	return v;
}

int hwt_flame_add(struct hwt_flame *f, const char *const *frames, size_t n, uint64_t count,
		  uint64_t time_ns)
{
	if (!f || !frames || !n)
		return HWT_ERR_INVALID;
	uint32_t cur = 0;
	for (size_t i = 0; i < n; i++) {
		const char *name = intern(f, frames[i] ? frames[i] : "[unknown]");
		if (!name)
			return HWT_ERR_NOMEM;
		cur = child(f, cur, name);
		if (!cur)
			return HWT_ERR_NOMEM;
	}
	f->n[cur].self += count;
	f->n[cur].tself += time_ns;
	f->total += count;
	return 0;
}

uint32_t hwt_flame_child(struct hwt_flame *f, uint32_t node, const char *name)
{
	if (node >= f->nn)
		return 0;
	const char *in = intern(f, name ? name : "[unknown]");
	return in ? child(f, node, in) : 0;
}

uint32_t hwt_flame_parent(const struct hwt_flame *f, uint32_t node)
{
	return node < f->nn ? f->n[node].parent : 0;
}

void hwt_flame_count(struct hwt_flame *f, uint32_t node, uint64_t count, uint64_t time_ns)
{
	if (node >= f->nn)
		return;
	f->n[node].self += count;
	f->n[node].tself += time_ns;
	f->total += count;
}

uint64_t hwt_flame_total(const struct hwt_flame *f)
{
	return f ? f->total : 0;
}

/* ---------------- writing ---------------- */

void hwt_out_xml(struct hwt_outbuf *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned c = *p;
		if (c == '&')
			hwt_out_mem(o, "&amp;", 5);
		else if (c == '<')
			hwt_out_mem(o, "&lt;", 4);
		else if (c == '>')
			hwt_out_mem(o, "&gt;", 4);
		else if (c == '"')
			hwt_out_mem(o, "&quot;", 6);
		else if (c == '\'')
			hwt_out_mem(o, "&apos;", 6);
		else if (c < 0x20 || c == 0x7f)
			hwt_out_char(o, '?');
		else if (c < 0x80)
			hwt_out_char(o, (char)c);
		else {
			/* a whole, valid UTF-8 sequence, else '?' for this byte */
			int len = c >= 0xf0 && c < 0xf5	  ? 4
				  : c >= 0xe0		  ? 3
				  : c >= 0xc2 && c < 0xe0 ? 2
							  : 0;
			int ok = len > 0;
			for (int i = 1; ok && i < len; i++)
				ok = (p[i] & 0xc0) == 0x80;
			if (ok && len == 3 && c == 0xe0 && p[1] < 0xa0)
				ok = 0; /* overlong */
			if (ok && len == 3 && c == 0xed && p[1] >= 0xa0)
				ok = 0; /* surrogate */
			if (ok && len == 4 &&
			    ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
				ok = 0;
			if (!ok) {
				hwt_out_char(o, '?');
			} else {
				hwt_out_mem(o, (const char *)p, (size_t)len);
				p += len;
				continue;
			}
		}
		p++;
	}
}

static void outf(struct hwt_outbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outf(struct hwt_outbuf *o, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	hwt_out_mem(o, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static int by_name(const void *a, const void *b, void *arg)
{
	const struct fnode *n = arg;
	return strcmp(n[*(const uint32_t *)a].name, n[*(const uint32_t *)b].name);
}

/* Sort every node's children by name (graphs). */
static int sort_children(struct hwt_flame *f)
{
	uint32_t *tmp = malloc(f->nn * sizeof(*tmp));
	if (!tmp)
		return HWT_ERR_NOMEM;
	for (size_t i = 0; i < f->nn; i++) {
		size_t k = 0;
		for (uint32_t c = f->n[i].first; c; c = f->n[c].next)
			tmp[k++] = c;
		if (k < 2)
			continue;
		qsort_r(tmp, k, sizeof(*tmp), by_name, f->n);
		f->n[i].first = tmp[0];
		for (size_t j = 0; j + 1 < k; j++)
			f->n[tmp[j]].next = tmp[j + 1];
		f->n[tmp[k - 1]].next = 0;
		f->n[i].last = tmp[k - 1];
	}
	free(tmp);
	return 0;
}

/* Frame colours: warm, from the name (stable across runs). */
static void colour(const char *name, unsigned *r, unsigned *g, unsigned *b)
{
	uint64_t h = hash_str(name);
	*r = 205 + (unsigned)(h % 50);
	*g = 80 + (unsigned)((h >> 8) % 150);
	*b = (unsigned)((h >> 16) % 60);
}

static const char script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "'use strict';\n"
    "var svg=document.documentElement,W=+svg.getAttribute('width'),P=10,FH=16;\n"
    "var H=+svg.getAttribute('height'),TOTAL=+svg.getAttribute('data-total');\n"
    "var CHART=svg.getAttribute('data-chart')==='1',UNIT=svg.getAttribute('data-unit');\n"
    "var frames=Array.prototype.slice.call(svg.querySelectorAll('g.f'));\n"
    "var details=document.getElementById('details'),matched=document.getElementById('matched');\n"
    "var zoom=null;\n"
    "function num(g,a){return +g.getAttribute(a);}\n"
    "function fit(g,w){var t=g.querySelector('text'),n=g.getAttribute('data-name');\n"
    " var c=Math.floor((w-6)/7);t.textContent=c<3?'':(n.length<=c?n:n.slice(0,c-2)+'..');}\n"
    "function place(z){var "
    "zx=z?num(z,'data-x'):0,zn=z?num(z,'data-n'):TOTAL,zd=z?num(z,'data-d'):0;\n"
    " var s=(W-2*P)/(zn||1);\n"
    " frames.forEach(function(g){var x=num(g,'data-x'),n=num(g,'data-n'),d=num(g,'data-d');\n"
    "  var r=g.querySelector('rect'),t=g.querySelector('text'),px,pw;\n"
    "  if(d<zd&&x<=zx&&x+n>=zx+zn){px=P;pw=W-2*P;g.style.opacity=0.6;}\n"
    "  else if(d>=zd&&x>=zx&&x+n<=zx+zn&&n*s>=0.1){px=P+(x-zx)*s;pw=n*s;g.style.opacity='';}\n"
    "  else{g.style.display='none';return;}\n"
    "  "
    "g.style.display='';r.setAttribute('x',px.toFixed(2));r.setAttribute('width',pw.toFixed(2));\n"
    "  t.setAttribute('x',(px+3).toFixed(2));fit(g,pw);});\n"
    " document.getElementById('unzoom').style.opacity=z?1:0.3;}\n"
    "frames.forEach(function(g){\n"
    " g.addEventListener('click',function(){zoom=num(g,'data-d')===0?null:g;place(zoom);});\n"
    " g.addEventListener('mouseover',function(){details.textContent=g.querySelector('title')."
    "textContent;});\n"
    " g.addEventListener('mouseout',function(){details.textContent=' ';});});\n"
    "document.getElementById('unzoom').addEventListener('click',function(){zoom=null;place(null);})"
    ";\n"
    "function search(re){var sum=0,ends=[];\n"
    " frames.forEach(function(g){var r=g.querySelector('rect');\n"
    "  if(!r.getAttribute('data-fill'))r.setAttribute('data-fill',r.getAttribute('fill'));\n"
    "  r.setAttribute('fill',r.getAttribute('data-fill'));});\n"
    " if(!re){matched.textContent=' ';return;}\n"
    " frames.forEach(function(g){if(!re.test(g.getAttribute('data-name')))return;\n"
    "  g.querySelector('rect').setAttribute('fill','rgb(230,0,230)');\n"
    "  var x=num(g,'data-x'),n=num(g,'data-n');\n"
    "  if(!ends.some(function(e){return x>=e[0]&&x<e[1];})){ends.push([x,x+n]);sum+=n;}});\n"
    " matched.textContent='Matched: '+(TOTAL?(100*sum/TOTAL).toFixed(2):'0')+'% ('+sum+' "
    "'+UNIT+')';}\n"
    "document.getElementById('search').addEventListener('click',function(){\n"
    " var s=window.prompt('Search (regular expression):','');\n"
    " if(s===null)return;try{search(s?new RegExp(s):null);}catch(e){matched.textContent='bad "
    "expression';}});\n"
    "window.hwtFlameSearch=function(s){search(s?new RegExp(s):null);return matched.textContent;};\n"
    "window.hwtFlameZoom=function(i){zoom=frames[i]||null;place(zoom);};\n"
    "place(null);\n"
    "]]></script>\n";

int hwt_flame_write(struct hwt_flame *f, struct hwt_outbuf *o)
{
	if (!f || !o)
		return HWT_ERR_INVALID;
	/* totals, bottom up */
	for (size_t i = 0; i < f->nn; i++) {
		f->n[i].total = f->n[i].self;
		f->n[i].ttotal = f->n[i].tself;
		f->n[i].pruned = 0;
	}
	for (size_t i = f->nn; i-- > 1;) {
		f->n[f->n[i].parent].total += f->n[i].total;
		f->n[f->n[i].parent].ttotal += f->n[i].ttotal;
	}
	if (!f->cfg.chart && sort_children(f))
		return HWT_ERR_NOMEM;
	/* layout: x (in counts) and depth, depth first; prune narrow frames */
	const double W = f->cfg.width, P = 10, FH = 16;
	double scale = f->n[0].total ? (W - 2 * P) / (double)f->n[0].total : 0;
	uint32_t maxd = 0;
	uint32_t *draw = malloc(f->nn * sizeof(*draw)); /* drawn nodes, in order */
	uint32_t *stack = malloc(f->nn * sizeof(*stack));
	if (!draw || !stack) {
		free(draw);
		free(stack);
		return HWT_ERR_NOMEM;
	}
	size_t nd = 0, sp = 0;
	stack[sp++] = 0;
	f->n[0].x = 0;
	f->n[0].depth = 0;
	while (sp) {
		uint32_t i = stack[--sp];
		struct fnode *n = &f->n[i];
		draw[nd++] = i;
		if (n->depth > maxd)
			maxd = n->depth;
		/* children: x positions left to right; push in reverse so
		 * they are drawn in order */
		uint64_t x = n->x;
		size_t base = sp;
		for (uint32_t c = n->first; c; c = f->n[c].next) {
			struct fnode *cn = &f->n[c];
			cn->x = x;
			cn->depth = n->depth + 1;
			x += cn->total;
			if (!cn->total)
				continue;
			if ((double)cn->total * scale < 0.1) {
				n->pruned += cn->total;
				continue;
			}
			stack[sp++] = c;
		}
		for (size_t a = base, b = sp; a + 1 < b; a++, b--) {
			uint32_t t = stack[a];
			stack[a] = stack[b - 1];
			stack[b - 1] = t;
		}
	}
	free(stack);
	const char *unit = f->cfg.unit ? f->cfg.unit : "instructions";
	const char *title = f->cfg.title   ? f->cfg.title
			    : f->cfg.chart ? "Flame Chart"
					   : "Flame Graph";
	double H = (maxd + 1) * FH + 90;
	outf(o,
	     "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	     "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
	     "height=\"%.0f\" viewBox=\"0 0 %u %.0f\" data-total=\"%llu\" data-chart=\"%d\" "
	     "data-unit=\"",
	     f->cfg.width, H, f->cfg.width, H, (unsigned long long)f->n[0].total,
	     f->cfg.chart ? 1 : 0);
	hwt_out_xml(o, unit);
	outf(o,
	     "\" font-family=\"Verdana, sans-serif\" font-size=\"12\">\n"
	     "<style>g.f:hover rect{stroke:black;stroke-width:0.5;cursor:pointer}"
	     " text{pointer-events:none} .b{cursor:pointer}</style>\n"
	     "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
	     "<text id=\"title\" x=\"%.0f\" y=\"24\" font-size=\"17\" text-anchor=\"middle\">",
	     W / 2);
	hwt_out_xml(o, title);
	outf(o,
	     "</text>\n"
	     "<text id=\"unzoom\" class=\"b\" x=\"%.0f\" y=\"24\" opacity=\"0.3\">Reset "
	     "zoom</text>\n"
	     "<text id=\"search\" class=\"b\" x=\"%.0f\" y=\"24\" "
	     "text-anchor=\"end\">Search</text>\n"
	     "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n"
	     "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"> </text>\n",
	     P, W - P, P, H - 10, W - P, H - 10);
	for (size_t k = 0; k < nd; k++) {
		const struct fnode *n = &f->n[draw[k]];
		double px = P + (double)n->x * scale, pw = (double)n->total * scale;
		double py = f->cfg.chart ? 40 + n->depth * FH : H - 40 - (n->depth + 1) * FH;
		unsigned r, g, b;
		colour(n->name, &r, &g, &b);
		if (draw[k] == 0)
			r = 230, g = 230, b = 230;
		outf(o,
		     "<g class=\"f\" data-x=\"%llu\" data-n=\"%llu\" data-self=\"%llu\" "
		     "data-pruned=\"%llu\" data-d=\"%u\" data-t=\"%llu\" data-name=\"",
		     (unsigned long long)n->x, (unsigned long long)n->total,
		     (unsigned long long)n->self, (unsigned long long)n->pruned, n->depth,
		     (unsigned long long)n->ttotal);
		hwt_out_xml(o, n->name);
		hwt_out_str(o, "\"><title>");
		hwt_out_xml(o, n->name);
		outf(o, " (%llu %s, %.2f%%", (unsigned long long)n->total, unit,
		     f->n[0].total ? 100.0 * (double)n->total / (double)f->n[0].total : 0.0);
		if (n->ttotal)
			outf(o, ", %llu ns", (unsigned long long)n->ttotal);
		if (n->self != n->total)
			outf(o, "; self %llu", (unsigned long long)n->self);
		outf(o,
		     ")</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" "
		     "fill=\"rgb(%u,%u,%u)\" rx=\"2\"/><text x=\"%.2f\" y=\"%.0f\">",
		     px, py, pw, FH - 1, r, g, b, px + 3, py + 11.5);
		/* the label, cut to fit (the script re-fits it on zoom) */
		size_t fitc = pw > 6 ? (size_t)((pw - 6) / 7) : 0, len = strlen(n->name);
		if (fitc >= 3 && len <= fitc) {
			hwt_out_xml(o, n->name);
		} else if (fitc >= 3) {
			char cut[512];
			size_t c = fitc - 2 < sizeof(cut) - 3 ? fitc - 2 : sizeof(cut) - 3;
			memcpy(cut, n->name, c);
			/* do not cut a UTF-8 sequence */
			while (c && ((unsigned char)n->name[c] & 0xc0) == 0x80)
				c--;
			cut[c] = 0;
			hwt_out_xml(o, cut);
			hwt_out_str(o, "..");
		}
		hwt_out_str(o, "</text></g>\n");
	}
	free(draw);
	hwt_out_str(o, script);
	hwt_out_str(o, "</svg>\n");
	hwt_outbuf_flush(o);
	return o->err ? HWT_ERR_IO : 0;
}
