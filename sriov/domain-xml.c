/* SPDX-License-Identifier: MIT */
/*
 * The domain XML reader of amdsmi-libvirt-hook: libxml2 parses, this file walks the tree.
 *
 * Safety: the size, NUL bytes, DTDs and entity declarations are checked on the raw bytes before
 * libxml2 sees them; the input is read as UTF-8 whatever it declares (no UTF-7 or EBCDIC
 * spelling of "<!DOCTYPE" gets past the raw check), never from the network, never with entity
 * substitution or DTD loading; libxml2's errors go to a handler of this parser context only, so
 * nothing is printed and no process-wide handler is changed.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlversion.h>

#include "domain-xml.h"
#include "macro.h"
#include "parse-util.h"

/* never NOENT (entity substitution), DTDLOAD, DTDATTR or HUGE; BIG_LINES: line numbers past
 * 65535 in messages */
#define PARSE_OPTIONS                                                                       \
        (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_IGNORE_ENC | \
         XML_PARSE_BIG_LINES)

/* the longest piece of a document's own text quoted in a message */
#define QUOTE_MAX 40

/* the first error of a level libxml2 reported */
struct xml_error {
        bool set;
        int code;
        int line;
        char message[256];
};

struct parser {
        char *error;
        size_t error_size;
        struct xml_error fatal;     /* not well-formed: the document is refused */
        struct xml_error error_any; /* also namespace errors, which libvirt accepts */
};

static inline void xml_freep(xmlChar **p) {
        if (*p)
                xmlFree(*p);
}
#define _cleanup_xml_free_ _cleanup_(xml_freep)

static inline void xml_free_docp(xmlDoc **p) {
        if (*p)
                xmlFreeDoc(*p);
}
#define _cleanup_xml_free_doc_ _cleanup_(xml_free_docp)

static inline void xml_free_parser_ctxtp(xmlParserCtxt **p) {
        if (*p)
                xmlFreeParserCtxt(*p);
}
#define _cleanup_xml_free_parser_ctxt_ _cleanup_(xml_free_parser_ctxtp)

/* ---- messages ---------------------------------------------------------------------------- */

/* Drops an incomplete UTF-8 sequence at the end of @s (left by a cut). */
static void trim_partial_utf8(char *s) {
        size_t n = strlen(s), start = n, need;
        unsigned char lead;

        while (start > 0 && n - start < 4 && ((unsigned char) s[start - 1] & 0xc0) == 0x80)
                start--;
        if (start == 0)
                return;
        lead = (unsigned char) s[start - 1];
        if (lead < 0xc0)
                return; /* ASCII last, or stray continuation bytes: nothing to complete */
        need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
        if (n - (start - 1) < need)
                s[start - 1] = '\0';
}

/* Copies @s into @buf (QUOTE_MAX + 4 bytes) for a message: control characters become '?', and a
 * longer text is cut at a character boundary and ends in "...". */
static const char *quote(const char *s, char *buf) {
        size_t n = 0;

        for (; s[n] != '\0' && n < QUOTE_MAX; n++)
                buf[n] = (unsigned char) s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
        if (s[n] != '\0') {
                /* do not end inside a UTF-8 sequence */
                while (n > 0 && ((unsigned char) s[n] & 0xc0) == 0x80)
                        n--;
                memcpy(buf + n, "...", 3);
                n += 3;
        }
        buf[n] = '\0';
        return buf;
}

_printf_(3, 4) static int fail(struct parser *p, int r, const char *fmt, ...) {
        va_list ap;
        int n;

        if (!p->error || p->error_size == 0)
                return r;

        n = snprintf(p->error, p->error_size, "domain XML: ");
        if (n >= 0 && (size_t) n < p->error_size) {
                va_start(ap, fmt);
                (void) vsnprintf(p->error + n, p->error_size - (size_t) n, fmt, ap);
                va_end(ap);
        }
        trim_partial_utf8(p->error);
        /* one line, whatever went into it */
        for (char *c = p->error; *c; c++)
                if (*c == '\n' || *c == '\r' || *c == '\t')
                        *c = ' ';
        return r;
}

#define fail_at(p, node, r, fmt, ...) \
        fail(p, r, "line %ld: " fmt, xmlGetLineNo(node), ##__VA_ARGS__)

/* "<amdsmi:gpu>" as the document spells it (the prefix it chose, if any) */
static const char *element_name(const xmlNode *n, char *buf, size_t size) {
        char qp[QUOTE_MAX + 4], qn[QUOTE_MAX + 4];

        if (n->ns && n->ns->prefix)
                snprintf(buf, size, "<%s:%s>", quote((const char *) n->ns->prefix, qp),
                         quote((const char *) n->name, qn));
        else
                snprintf(buf, size, "<%s>", quote((const char *) n->name, qn));
        return buf;
}

static void keep_error(struct xml_error *x, const xmlError *e) {
        size_t n;

        if (x->set)
                return;
        x->set = true;
        x->code = e->code;
        x->line = e->line;
        snprintf(x->message, sizeof(x->message), "%s", e->message ? e->message : "not well-formed");
        trim_partial_utf8(x->message);
        /* libxml2 ends its messages with a newline and some span two lines */
        n = strlen(x->message);
        while (n > 0 && (x->message[n - 1] == '\n' || x->message[n - 1] == ' '))
                x->message[--n] = '\0';
        for (char *c = x->message; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        *c = ' ';
}

/* libxml2's structured error handler, set on our parser context only; @data is the context. */
#if LIBXML_VERSION >= 21200
static void on_xml_error(void *data, const xmlError *e) {
#else
static void on_xml_error(void *data, xmlErrorPtr e) {
#endif
        xmlParserCtxt *ctxt = data;
        struct parser *p = ctxt ? ctxt->_private : NULL;

        if (!p || !e || e->level < XML_ERR_ERROR)
                return;
        keep_error(&p->error_any, e);
        if (e->level == XML_ERR_FATAL)
                keep_error(&p->fatal, e);
}

/* ---- small parsers ------------------------------------------------------------------------- */

static bool is_element(const xmlNode *n, const char *name) {
        return n->type == XML_ELEMENT_NODE && !n->ns && strcmp((const char *) n->name, name) == 0;
}

static bool in_our_namespace(const xmlNode *n) {
        return n->ns && n->ns->href && strcmp((const char *) n->ns->href, VM_METADATA_NS) == 0;
}

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A UUID as libvirt accepts it: 8-4-4-4-12 or 32 hex digits, any case, surrounding blanks
 * allowed; written lower-case with dashes. */
static int parse_uuid(const char *s, char ret[static 37]) {
        char hex[32];
        size_t len, k = 0;

        while (is_space(*s))
                s++;
        len = strlen(s);
        while (len > 0 && is_space(s[len - 1]))
                len--;
        if (len != 32 && len != 36)
                return -EINVAL;

        for (size_t i = 0; i < len; i++) {
                if (len == 36 && (i == 8 || i == 13 || i == 18 || i == 23)) {
                        if (s[i] != '-')
                                return -EINVAL;
                        continue;
                }
                if (unhexchar(s[i]) < 0)
                        return -EINVAL;
                hex[k++] = "0123456789abcdef"[unhexchar(s[i])];
        }
        assert(k == 32);

        snprintf(ret, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
        return 0;
}

/* A PCI address in our metadata: "dddd:bb:ss.f" (a domain of 4 to 7 hex digits) or "bb:ss.f"
 * (domain 0), any case; written as the kernel names the device. */
static int parse_bdf(const char *s, char ret[static 16]) {
        const char *colon = strchr(s, ':');
        uint32_t domain = 0;
        int bus, slot, fn;
        size_t nd = 0;

        if (!colon)
                return -EINVAL;
        if (strchr(colon + 1, ':')) {
                /* the full form: the domain first */
                for (; s + nd < colon; nd++)
                        if (unhexchar(s[nd]) < 0)
                                return -EINVAL;
                if (nd < 4 || nd > 7)
                        return -EINVAL;
                for (size_t i = 0; i < nd; i++)
                        domain = domain << 4 | (uint32_t) unhexchar(s[i]);
                s = colon + 1;
        }
        if (strlen(s) != 7 || s[2] != ':' || s[5] != '.')
                return -EINVAL;
        if (unhexchar(s[0]) < 0 || unhexchar(s[1]) < 0 || unhexchar(s[3]) < 0 || unhexchar(s[4]) < 0)
                return -EINVAL;
        bus = unhexchar(s[0]) << 4 | unhexchar(s[1]);
        slot = unhexchar(s[3]) << 4 | unhexchar(s[4]);
        fn = s[6] - '0';
        if (slot > 0x1f || fn < 0 || fn > 7)
                return -EINVAL;

        snprintf(ret, 16, "%04x:%02x:%02x.%x", domain, bus, slot, fn);
        return 0;
}

/* power-cap-watts: a whole number of watts, 1..VM_CAP_WATTS_MAX, as microwatts */
static int parse_watts(const char *s, uint64_t *ret_uw) {
        uint64_t w;

        for (const char *c = s; *c; c++)
                if (*c < '0' || *c > '9')
                        return -EINVAL;
        if (parse_u64(s, 10, &w) < 0 || w < 1 || w > VM_CAP_WATTS_MAX)
                return -EINVAL;
        *ret_uw = w * 1000000;
        return 0;
}

/* The text of an element (all its text, as XPath's string() has it). */
static int element_text(struct parser *p, const xmlNode *n, xmlChar **ret) {
        xmlChar *s = xmlNodeGetContent(n);

        if (!s)
                return fail(p, -ENOMEM, "out of memory");
        *ret = s;
        return 0;
}

/* The only child element called @name (no namespace) of @n: 0 and *ret, -ENOENT if none, or
 * -EINVAL if several. */
static int only_child(const xmlNode *n, const char *name, xmlNode **ret) {
        xmlNode *found = NULL;

        for (xmlNode *c = n->children; c; c = c->next) {
                if (!is_element(c, name))
                        continue;
                if (found)
                        return -EINVAL;
                found = c;
        }
        if (!found)
                return -ENOENT;
        *ret = found;
        return 0;
}

/* The value of the attribute @name without namespace, or NULL. Not a copy. */
static const char *attr_value(const xmlNode *n, const char *name) {
        for (const xmlAttr *a = n->properties; a; a = a->next) {
                if (a->ns || strcmp((const char *) a->name, name) != 0)
                        continue;
                /* a parsed attribute holds one text node (none when empty); more only with
                 * references to declared entities, and a DTD is refused */
                if (!a->children)
                        return "";
                if (a->children->type != XML_TEXT_NODE || a->children->next ||
                    !a->children->content)
                        return NULL;
                return (const char *) a->children->content;
        }
        return NULL;
}

/* Strictness in our namespace: every attribute of @n is one of @allowed (NULL-terminated). */
static int check_attributes(struct parser *p, const xmlNode *n, const char *const *allowed) {
        char el[128], q[QUOTE_MAX + 4];

        for (const xmlAttr *a = n->properties; a; a = a->next) {
                bool known = false;

                for (size_t i = 0; !a->ns && allowed[i]; i++)
                        if (strcmp((const char *) a->name, allowed[i]) == 0)
                                known = true;
                if (known)
                        continue;
                if (a->ns && a->ns->prefix)
                        return fail_at(
                                p, (xmlNode *) n, -EINVAL, "%s has an unknown attribute %s:%s",
                                element_name(n, el, sizeof(el)),
                                quote((const char *) a->ns->prefix, q), (const char *) a->name);
                return fail_at(p, (xmlNode *) n, -EINVAL, "%s has an unknown attribute %s",
                               element_name(n, el, sizeof(el)), quote((const char *) a->name, q));
        }
        return 0;
}

/* ---- name and uuid ------------------------------------------------------------------------- */

static int parse_name(struct parser *p, const xmlNode *n, char ret[static VM_NAME_MAX]) {
        _cleanup_xml_free_ xmlChar *text = NULL;
        const unsigned char *s;
        size_t len;
        int r;

        r = element_text(p, n, &text);
        if (r < 0)
                return r;
        s = text;
        len = strlen((const char *) s);
        if (len == 0)
                return fail_at(p, (xmlNode *) n, -EINVAL, "<name> is empty");
        if (len >= VM_NAME_MAX)
                return fail_at(p, (xmlNode *) n, -EINVAL, "<name> is longer than %d bytes",
                               VM_NAME_MAX - 1);
        for (size_t i = 0; i < len; i++)
                /* C0, DEL, and C1 (U+0080..U+009F, 0xc2 0x80..0x9f in UTF-8) */
                if (s[i] < 0x20 || s[i] == 0x7f ||
                    (s[i] == 0xc2 && i + 1 < len && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f))
                        return fail_at(p, (xmlNode *) n, -EINVAL,
                                       "<name> contains a control character");
        memcpy(ret, s, len + 1);
        return 0;
}

static int parse_uuid_element(struct parser *p, const xmlNode *n, char ret[static 37]) {
        _cleanup_xml_free_ xmlChar *text = NULL;
        char q[QUOTE_MAX + 4];
        int r;

        r = element_text(p, n, &text);
        if (r < 0)
                return r;
        if (parse_uuid((const char *) text, ret) < 0)
                return fail_at(p, (xmlNode *) n, -EINVAL, "<uuid> '%s' is not a UUID",
                               quote((const char *) text, q));
        return 0;
}

/* ---- hostdevs -------------------------------------------------------------------------------- */

static bool is_pci_hostdev(const xmlNode *n) {
        const char *mode, *type;

        if (!is_element(n, "hostdev"))
                return false;
        mode = attr_value(n, "mode");
        type = attr_value(n, "type");
        return mode && type && strcmp(mode, "subsystem") == 0 && strcmp(type, "pci") == 0;
}

static int address_field(struct parser *p, const xmlNode *addr, size_t idx, const char *name,
                         uint32_t max, uint32_t *ret) {
        char q[QUOTE_MAX + 4];
        const char *s = attr_value(addr, name);
        uint32_t v;
        int r;

        if (!s)
                return fail_at(p, (xmlNode *) addr, -EINVAL, "<hostdev> %zu: <address> lacks %s",
                               idx, name);
        /* as libvirt reads it: strtoul() with base 0 ("0x05", "5") */
        r = parse_u32(s, 0, &v);
        if (r == -EINVAL)
                return fail_at(p, (xmlNode *) addr, -EINVAL,
                               "<hostdev> %zu: <address> %s='%s' is not a number", idx, name,
                               quote(s, q));
        if (r < 0 || v > max)
                return fail_at(p, (xmlNode *) addr, -EINVAL,
                               "<hostdev> %zu: <address> %s='%s' is out of range (at most 0x%x)",
                               idx, name, quote(s, q), max);
        *ret = v;
        return 0;
}

static int parse_hostdev(struct parser *p, const xmlNode *h, size_t idx, struct vm_hostdev *ret) {
        char q[QUOTE_MAX + 4];
        xmlNode *source, *addr;
        uint32_t domain, bus, slot, fn;
        const char *managed;
        int r;

        managed = attr_value(h, "managed");
        if (!managed || strcmp(managed, "no") == 0)
                ret->managed = false;
        else if (strcmp(managed, "yes") == 0)
                ret->managed = true;
        else
                return fail_at(p, (xmlNode *) h, -EINVAL,
                               "<hostdev> %zu: managed='%s' is neither 'yes' nor 'no'", idx,
                               quote(managed, q));

        r = only_child(h, "source", &source);
        if (r == -ENOENT)
                return fail_at(p, (xmlNode *) h, -EINVAL, "<hostdev> %zu lacks <source>", idx);
        if (r < 0)
                return fail_at(p, (xmlNode *) h, -EINVAL,
                               "<hostdev> %zu has more than one <source>", idx);
        r = only_child(source, "address", &addr);
        if (r == -ENOENT)
                return fail_at(p, source, -EINVAL, "<hostdev> %zu: <source> lacks <address>", idx);
        if (r < 0)
                return fail_at(p, source, -EINVAL,
                               "<hostdev> %zu: <source> has more than one <address>", idx);

        /* the most a 16-byte BDF holds: a domain of 7 hex digits (Linux uses 4, VMD 5) */
        r = address_field(p, addr, idx, "domain", 0xfffffff, &domain);
        if (r < 0)
                return r;
        r = address_field(p, addr, idx, "bus", 0xff, &bus);
        if (r < 0)
                return r;
        r = address_field(p, addr, idx, "slot", 0x1f, &slot);
        if (r < 0)
                return r;
        r = address_field(p, addr, idx, "function", 7, &fn);
        if (r < 0)
                return r;

        snprintf(ret->bdf, sizeof(ret->bdf), "%04x:%02x:%02x.%x", domain, bus, slot, fn);
        ret->cap_uw = UINT64_MAX;
        return 0;
}

/* Every <hostdev mode='subsystem' type='pci'> of every <devices>, in document order. */
static int parse_hostdevs(struct parser *p, const xmlNode *root, struct vm_domain *d) {
        size_t n = 0;

        for (const xmlNode *dev = root->children; dev; dev = dev->next) {
                if (!is_element(dev, "devices"))
                        continue;
                for (const xmlNode *h = dev->children; h; h = h->next)
                        if (is_pci_hostdev(h) && ++n > VM_HOSTDEVS_MAX)
                                return fail_at(p, (xmlNode *) h, -E2BIG,
                                               "more than %d PCI <hostdev> elements",
                                               VM_HOSTDEVS_MAX);
        }
        if (n == 0)
                return 0;

        d->hostdevs = calloc(n, sizeof(struct vm_hostdev));
        if (!d->hostdevs)
                return fail(p, -ENOMEM, "out of memory");

        for (const xmlNode *dev = root->children; dev; dev = dev->next) {
                if (!is_element(dev, "devices"))
                        continue;
                for (const xmlNode *h = dev->children; h; h = h->next) {
                        struct vm_hostdev *hd = &d->hostdevs[d->n_hostdevs];
                        int r;

                        if (!is_pci_hostdev(h))
                                continue;
                        r = parse_hostdev(p, h, d->n_hostdevs + 1, hd);
                        if (r < 0)
                                return r;
                        for (size_t i = 0; i < d->n_hostdevs; i++)
                                if (strcmp(d->hostdevs[i].bdf, hd->bdf) == 0)
                                        return fail_at(p, (xmlNode *) h, -EINVAL,
                                                       "<hostdev> %zu: %s is also <hostdev> %zu",
                                                       d->n_hostdevs + 1, hd->bdf, i + 1);
                        d->n_hostdevs++;
                }
        }
        return 0;
}

/* ---- metadata ------------------------------------------------------------------------------ */

/* Children of our elements: in our namespace they must be known (@name, or nothing when NULL);
 * without a namespace they are a forgotten prefix; in another namespace they are not ours. */
static int check_child(struct parser *p, const xmlNode *parent, const xmlNode *c,
                       const char *name) {
        char el[128], pel[128];

        if (c->type != XML_ELEMENT_NODE)
                return 0;
        if (in_our_namespace(c))
                return name && strcmp((const char *) c->name, name) == 0
                               ? 1
                               : fail_at(p, (xmlNode *) c, -EINVAL, "%s is unknown inside %s",
                                         element_name(c, el, sizeof(el)),
                                         element_name(parent, pel, sizeof(pel)));
        if (!c->ns)
                return fail_at(p, (xmlNode *) c, -EINVAL,
                               "%s inside %s is in no namespace (%s is the one of %s)",
                               element_name(c, el, sizeof(el)),
                               element_name(parent, pel, sizeof(pel)), VM_METADATA_NS, pel);
        return 0;
}

static int parse_vf(struct parser *p, const xmlNode *vf, struct vm_domain *d) {
        static const char *const allowed[] = { "address", "power-cap-watts", NULL };
        char el[128], q[QUOTE_MAX + 4], bdf[16];
        const char *address, *watts;
        struct vm_hostdev *hd = NULL;
        uint64_t uw;
        int r;

        element_name(vf, el, sizeof(el));
        r = check_attributes(p, vf, allowed);
        if (r < 0)
                return r;
        for (const xmlNode *c = vf->children; c; c = c->next) {
                r = check_child(p, vf, c, NULL);
                if (r < 0)
                        return r;
        }

        address = attr_value(vf, "address");
        if (!address)
                return fail_at(p, (xmlNode *) vf, -EINVAL, "%s lacks address", el);
        if (parse_bdf(address, bdf) < 0)
                return fail_at(p, (xmlNode *) vf, -EINVAL, "%s address='%s' is not a PCI address",
                               el, quote(address, q));
        for (size_t i = 0; i < d->n_hostdevs; i++)
                if (strcmp(d->hostdevs[i].bdf, bdf) == 0)
                        hd = &d->hostdevs[i];
        if (!hd)
                return fail_at(p, (xmlNode *) vf, -EINVAL,
                               "%s address='%s' names no <hostdev> of the domain", el,
                               quote(address, q));
        if (hd->cap_uw != UINT64_MAX)
                return fail_at(p, (xmlNode *) vf, -EINVAL, "%s: %s is named twice", el, bdf);

        watts = attr_value(vf, "power-cap-watts");
        if (!watts)
                return fail_at(p, (xmlNode *) vf, -EINVAL, "%s lacks power-cap-watts", el);
        if (parse_watts(watts, &uw) < 0)
                return fail_at(p, (xmlNode *) vf, -EINVAL,
                               "%s power-cap-watts='%s' is not a whole number of watts from 1 "
                               "to %u",
                               el, quote(watts, q), VM_CAP_WATTS_MAX);
        hd->cap_uw = uw;
        return 0;
}

static int parse_gpu(struct parser *p, const xmlNode *gpu, struct vm_domain *d) {
        static const char *const allowed[] = { "power-cap-watts", NULL };
        char el[128], q[QUOTE_MAX + 4];
        const char *watts;
        int r;

        element_name(gpu, el, sizeof(el));
        r = check_attributes(p, gpu, allowed);
        if (r < 0)
                return r;

        watts = attr_value(gpu, "power-cap-watts");
        d->cap_uw = UINT64_MAX;
        if (watts && parse_watts(watts, &d->cap_uw) < 0)
                return fail_at(p, (xmlNode *) gpu, -EINVAL,
                               "%s power-cap-watts='%s' is not a whole number of watts from 1 "
                               "to %u",
                               el, quote(watts, q), VM_CAP_WATTS_MAX);

        for (const xmlNode *c = gpu->children; c; c = c->next) {
                r = check_child(p, gpu, c, "vf");
                if (r <= 0) {
                        if (r < 0)
                                return r;
                        continue;
                }
                r = parse_vf(p, c, d);
                if (r < 0)
                        return r;
        }
        d->has_metadata = true;
        return 0;
}

/* Every child of every <metadata> in VM_METADATA_NS, matched by URI (the prefix is the
 * document's choice); libvirt allows one element per namespace, so does this. */
static int parse_metadata(struct parser *p, const xmlNode *root, struct vm_domain *d) {
        const xmlNode *gpu = NULL;
        char el[128];
        int r;

        for (const xmlNode *m = root->children; m; m = m->next) {
                if (!is_element(m, "metadata"))
                        continue;
                for (const xmlNode *e = m->children; e; e = e->next) {
                        if (e->type != XML_ELEMENT_NODE || !in_our_namespace(e))
                                continue;
                        if (strcmp((const char *) e->name, "gpu") != 0)
                                return fail_at(p, (xmlNode *) e, -EINVAL,
                                               "%s is unknown in %s (the element is <gpu>)",
                                               element_name(e, el, sizeof(el)), VM_METADATA_NS);
                        if (gpu)
                                return fail_at(p, (xmlNode *) e, -EINVAL,
                                               "a second %s (the first is on line %ld)",
                                               element_name(e, el, sizeof(el)), xmlGetLineNo(gpu));
                        gpu = e;
                        r = parse_gpu(p, e, d);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* ---- the document ---------------------------------------------------------------------------- */

static int parse_root(struct parser *p, const xmlNode *root, struct vm_domain *d) {
        const xmlNode *name = NULL, *uuid = NULL;
        char q[QUOTE_MAX + 4];
        int r;

        if (!is_element(root, "domain")) {
                if (root->ns && root->ns->href)
                        return fail_at(p, (xmlNode *) root, -EINVAL,
                                       "the root element is <%s> in namespace %s, not <domain>",
                                       quote((const char *) root->name, q),
                                       root->ns->href ? (const char *) root->ns->href : "");
                return fail_at(p, (xmlNode *) root, -EINVAL,
                               "the root element is <%s>, not <domain>",
                               quote((const char *) root->name, q));
        }

        for (const xmlNode *c = root->children; c; c = c->next) {
                if (is_element(c, "name")) {
                        if (name)
                                return fail_at(p, (xmlNode *) c, -EINVAL, "more than one <name>");
                        name = c;
                } else if (is_element(c, "uuid")) {
                        if (uuid)
                                return fail_at(p, (xmlNode *) c, -EINVAL, "more than one <uuid>");
                        uuid = c;
                }
        }
        if (!name)
                return fail_at(p, (xmlNode *) root, -EINVAL, "<domain> has no <name>");
        if (!uuid)
                return fail_at(p, (xmlNode *) root, -EINVAL, "<domain> has no <uuid>");
        r = parse_name(p, name, d->name);
        if (r < 0)
                return r;
        r = parse_uuid_element(p, uuid, d->uuid);
        if (r < 0)
                return r;

        r = parse_hostdevs(p, root, d);
        if (r < 0)
                return r;
        /* after the hostdevs: an <amdsmi:vf> must name one of them */
        return parse_metadata(p, root, d);
}

/* The checks on the raw bytes, before libxml2 sees them. */
static int check_raw(struct parser *p, const char *xml, size_t len) {
        const char *nul;
        size_t i = 0;

        if (len > VM_XML_MAX_BYTES)
                return fail(p, -EFBIG, "larger than %u bytes (%zu bytes)", VM_XML_MAX_BYTES, len);

        nul = memchr(xml, '\0', len);
        if (nul) {
                long line = 1;

                for (const char *c = xml; c < nul; c++)
                        line += *c == '\n';
                return fail(p, -EBADMSG, "line %ld: a NUL byte", line);
        }

        if (len >= 3 && memcmp(xml, "\xef\xbb\xbf", 3) == 0)
                i = 3; /* the UTF-8 byte order mark */
        while (i < len && is_space(xml[i]))
                i++;
        if (i == len)
                return fail(p, -EBADMSG, "empty document");

        if (memmem(xml, len, "<!DOCTYPE", 9) || memmem(xml, len, "<!ENTITY", 8))
                return fail(p, -EINVAL, "DTDs and entities are not accepted");

        /* libxml2 guesses UTF-16, UCS-4 and EBCDIC from the first bytes; a document in UTF-8
         * (what libvirt writes) starts with '<' */
        if (xml[i] != '<')
                return fail(p, -EBADMSG, "line 1: the document does not start with '<'");
        return 0;
}

int vm_domain_parse(const char *xml, size_t len, struct vm_domain **ret, char *error,
                    size_t error_size) {
        _cleanup_xml_free_parser_ctxt_ xmlParserCtxt *ctxt = NULL;
        _cleanup_xml_free_doc_ xmlDoc *doc = NULL;
        _cleanup_vm_domain_free_ struct vm_domain *d = NULL;
        struct parser p = { .error = error, .error_size = error_size };
        const xmlNode *root;
        int r;

        assert(xml || len == 0);
        assert(ret);

        if (error && error_size > 0)
                error[0] = '\0';

        r = check_raw(&p, xml ? xml : "", len);
        if (r < 0)
                return r;

        ctxt = xmlNewParserCtxt();
        if (!ctxt)
                return fail(&p, -ENOMEM, "out of memory");
        /* errors to us, for this context only (the data passed is the context itself) */
        ctxt->_private = &p;
        ctxt->sax->serror = on_xml_error;

        doc = xmlCtxtReadMemory(ctxt, xml, (int) len, NULL, "UTF-8", PARSE_OPTIONS);
        /* libxml2 also keeps a copy of the last error for the whole thread: drop it */
        xmlResetLastError();
        if ((p.fatal.set && p.fatal.code == XML_ERR_NO_MEMORY) ||
            (p.error_any.set && p.error_any.code == XML_ERR_NO_MEMORY))
                return fail(&p, -ENOMEM, "out of memory");
        /* Not well-formed: refused. Namespace errors (an undeclared prefix, a declaration twice,
         * a URI that is not one) leave the element without namespace, as libvirt also accepts
         * it: such an element is never ours, and inside ours it is refused as unknown. */
        if (!doc || !ctxt->wellFormed || p.fatal.set) {
                const struct xml_error *x = p.fatal.set ? &p.fatal : &p.error_any;

                if (x->set)
                        return fail(&p, -EBADMSG, "line %d: %s", x->line, x->message);
                return fail(&p, -EBADMSG, "not well-formed");
        }
        if (doc->intSubset || doc->extSubset)
                return fail(&p, -EINVAL, "DTDs and entities are not accepted");

        root = xmlDocGetRootElement(doc);
        if (!root)
                return fail(&p, -EBADMSG, "no root element");

        d = calloc(1, sizeof(*d));
        if (!d)
                return fail(&p, -ENOMEM, "out of memory");
        d->cap_uw = UINT64_MAX;

        r = parse_root(&p, root, d);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(d);
        return 0;
}

struct vm_domain *vm_domain_free(struct vm_domain *d) {
        if (!d)
                return NULL;
        free(d->hostdevs);
        free(d);
        return NULL;
}
