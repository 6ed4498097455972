/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-libvirt-hook: libvirt's qemu hook (installed as /etc/libvirt/hooks/qemu.d/50-amdsmi)
 * that provisions a domain's AMD GPU VFs through amdsmid, as libvirt calls it:
 *
 *   50-amdsmi DOMAIN OPERATION SUB-OPERATION EXTRA     (the domain XML on stdin)
 *
 *   prepare begin     PrepareVm: the VFs reserved, those of managed='no' hostdevs bound to
 *                     vfio-pci, the domain's power cap set; any failure fails the start (exit
 *                     1, one line on stderr, which libvirt shows) with nothing left half done
 *   release end,      ReleaseVm: undone; never fails (a stopping domain cannot be stopped
 *   stopped end       from stopping): errors go to the journal, exit 0
 *   reconnect begin   PrepareVm with reconnect: recorded if missing, nothing changes; never
 *                     fails (a failure would kill the running domain)
 *   migrate begin,    filters: nothing printed, so libvirt keeps the XML as it is
 *   restore begin
 *   anything else     exit 0 at once
 *
 * It never calls libvirt (libvirt waits for the hook: a deadlock), only amdsmid on the system
 * bus, within hook_timeout_s of amdsmid.conf's [libvirt] (libvirt strips the environment, so
 * the deadline cannot come from there); past it, a start fails (closed), a stop goes on. A
 * domain with no AMD GPU function among its PCI hostdevs and no amdsmi metadata exits 0
 * without contacting amdsmid, so that a stopped amdsmid never blocks other VMs.
 * Logs go to the journal (libvirt discards a successful hook's output), else to stderr: a
 * success is one line saying what was done, made from amdsmid's reply, which AMDSMI_DEBUG
 * adds whole (at debug priority).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-journal.h>

#include "amdsmid-conf.h"
#include "bus-errors.h"
#include "domain-xml.h"
#include "macro.h"

#define PROGRAM "amdsmi-libvirt-hook"
#define NO_CAP UINT64_MAX

static const char *domain_name = "?", *operation = "?";

static bool journal_available(void) {
        static int cached = -1;

        if (cached < 0)
                cached = getenv("JOURNAL_STREAM") || access("/run/systemd/journal/socket", W_OK) == 0;
        return cached;
}

/* A failed start: the journal (when there is one) and the one line libvirt shows. */
_printf_(1, 2) static void fail_start(const char *format, ...) {
        char msg[2048];
        va_list ap;

        va_start(ap, format);
        vsnprintf(msg, sizeof(msg), format, ap);
        va_end(ap);
        if (journal_available())
                (void) sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", LOG_ERR,
                                       "SYSLOG_IDENTIFIER=" PROGRAM, "AMDSMI_DOMAIN=%s",
                                       domain_name, "AMDSMI_OPERATION=%s", operation, NULL);
        fprintf(stderr, PROGRAM ": domain %s: %s\n", domain_name, msg);
}

/* One log line: the journal (with DOMAIN= and OPERATION=), or stderr without it. Not cut
 * short: with AMDSMI_DEBUG, amdsmid's whole reply is one. */
_printf_(2, 3) static void log_hook(int priority, const char *format, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&msg, format, ap);
        va_end(ap);
        if (r < 0)
                return;
        if (journal_available() &&
            sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", priority,
                            "SYSLOG_IDENTIFIER=" PROGRAM, "AMDSMI_DOMAIN=%s", domain_name,
                            "AMDSMI_OPERATION=%s", operation, NULL) >= 0)
                return;
        fprintf(stderr, PROGRAM ": %s\n", msg);
}

/* AMDSMI_DEBUG set to anything but "" or "0": amdsmid's replies are logged whole. */
static bool debug_enabled(void) {
        const char *e = getenv("AMDSMI_DEBUG");

        return e && e[0] && strcmp(e, "0") != 0;
}

static unsigned hook_timeout_s(void) {
        struct config *c = NULL;
        char err[512];
        unsigned t = CONFIG_HOOK_TIMEOUT_S_DEFAULT;

        if (config_load(NULL, &c, err, sizeof(err)) < 0)
                log_hook(LOG_WARNING, "%s: the default deadline of %u s applies", err, t);
        else
                t = c->hook_timeout_s;
        config_free(c);
        return t;
}

/* stdin, at most VM_XML_MAX_BYTES + 1 bytes (the parser refuses more). */
static int read_stdin(char **ret, size_t *ret_len) {
        size_t size = 65536, len = 0;
        char *buf = malloc(size + 1);

        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t n;

                if (len == size) {
                        char *nb;

                        if (size > VM_XML_MAX_BYTES)
                                break;
                        size *= 2;
                        nb = realloc(buf, size + 1);
                        if (!nb) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = nb;
                }
                n = read(STDIN_FILENO, buf + len, size - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;
                        free(buf);
                        return r;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = '\0';
        *ret = buf;
        *ret_len = len;
        return 0;
}

/* The domain's hostdevs that are AMD GPU functions of this host (sysfs, through libamdsmi). */
static int amd_hostdevs(const struct vm_domain *dom, bool *ret_is_amd) {
        struct amdsmi_ctx *ctx = NULL;
        int r, n = 0;

        r = amdsmi_ctx_new(&ctx);
        if (r < 0)
                return r;
        r = amdsmi_ctx_enumerate(ctx);
        if (r < 0 && r != -ENOENT) {
                amdsmi_ctx_unref(ctx);
                return r;
        }
        for (size_t i = 0; i < dom->n_hostdevs; i++) {
                struct amdsmi_gpu *gpu = NULL;

                ret_is_amd[i] = amdsmi_ctx_find_gpu(ctx, dom->hostdevs[i].bdf, &gpu) == 0;
                n += ret_is_amd[i];
        }
        amdsmi_ctx_unref(ctx);
        return n;
}

struct deadline {
        uint64_t end_usec;
};

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static uint64_t left_usec(const struct deadline *dl) {
        uint64_t now = now_usec();

        return now >= dl->end_usec ? 1 : dl->end_usec - now;
}

/* Calls @member on amdsmid's manager; the reply's JSON text in *ret (malloc'd), or the error's
 * message in *ret_error. */
static int call(sd_bus *bus, const struct deadline *dl, sd_bus_message *m, char **ret,
                char **ret_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *text = NULL;
        int r;

        *ret = *ret_error = NULL;
        r = sd_bus_call(bus, m, left_usec(dl), &error, &reply);
        if (r < 0) {
                if (r == -ETIMEDOUT)
                        *ret_error = strdup("amdsmid did not answer in time");
                else if (sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.ServiceUnknown") ||
                         sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.NameHasNoOwner"))
                        *ret_error = strdup("amdsmid is not running");
                else
                        *ret_error = strdup(error.message ? error.message : strerror(-r));
                return r;
        }
        if (sd_bus_message_read(reply, "s", &text) > 0 && text)
                *ret = strdup(text);
        return 0;
}

static int new_call(sd_bus *bus, const char *member, sd_bus_message **ret) {
        int r = sd_bus_message_new_method_call(bus, ret, AMDSMI_BUS_NAME, AMDSMI_BUS_PATH,
                                               AMDSMI_BUS_IFACE_MANAGER, member);

        if (r >= 0) /* amdsmid is D-Bus activatable: a call starts it */
                (void) sd_bus_message_set_auto_start(*ret, true);
        return r;
}

static int prepare(sd_bus *bus, const struct deadline *dl, const struct vm_domain *dom,
                   const bool *is_amd, bool reconnect, char **ret, char **ret_error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        size_t n_unmanaged = 0, n_vf_caps = 0;
        int r;

        r = new_call(bus, "PrepareVm", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "ss", dom->name, dom->uuid);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "s");
        for (size_t i = 0; r >= 0 && i < dom->n_hostdevs; i++) {
                if (!is_amd[i])
                        continue;
                r = sd_bus_message_append(m, "s", dom->hostdevs[i].bdf);
                n_unmanaged += !dom->hostdevs[i].managed;
                n_vf_caps += dom->hostdevs[i].cap_uw != NO_CAP;
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0 && n_unmanaged > 0) {
                r = sd_bus_message_open_container(m, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", "unmanaged");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'v', "as");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'a', "s");
                for (size_t i = 0; r >= 0 && i < dom->n_hostdevs; i++)
                        if (is_amd[i] && !dom->hostdevs[i].managed)
                                r = sd_bus_message_append(m, "s", dom->hostdevs[i].bdf);
                for (int k = 0; r >= 0 && k < 3; k++)
                        r = sd_bus_message_close_container(m);
        }
        if (r >= 0 && dom->cap_uw != NO_CAP)
                r = sd_bus_message_append(m, "{sv}", "power_cap_uw", "t", dom->cap_uw);
        if (r >= 0 && n_vf_caps > 0) {
                r = sd_bus_message_open_container(m, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", "vf_power_caps");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'v', "a{st}");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'a', "{st}");
                for (size_t i = 0; r >= 0 && i < dom->n_hostdevs; i++)
                        if (is_amd[i] && dom->hostdevs[i].cap_uw != NO_CAP)
                                r = sd_bus_message_append(m, "{st}", dom->hostdevs[i].bdf,
                                                          dom->hostdevs[i].cap_uw);
                for (int k = 0; r >= 0 && k < 3; k++)
                        r = sd_bus_message_close_container(m);
        }
        if (r >= 0 && reconnect)
                r = sd_bus_message_append(m, "{sv}", "reconnect", "b", 1);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return call(bus, dl, m, ret, ret_error);
}

static int release(sd_bus *bus, const struct deadline *dl, const struct vm_domain *dom,
                   char **ret, char **ret_error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_call(bus, "ReleaseVm", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", dom->uuid);
        if (r < 0)
                return r;
        return call(bus, dl, m, ret, ret_error);
}

enum op {
        OP_PREPARE,
        OP_RELEASE,
        OP_RECONNECT,
        OP_FILTER, /* migrate, restore: XML unchanged */
        OP_OTHER,
};

/* ---- the line of a success -------------------------------------------------------------- */

static json_object *member(json_object *o, const char *key, json_type type) {
        json_object *v;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
                return NULL;
        return v;
}

static const char *member_string(json_object *o, const char *key) {
        json_object *v = member(o, key, json_type_string);

        return v ? json_object_get_string(v) : NULL;
}

static bool streq_ptr(const char *a, const char *b) {
        return a && b && strcmp(a, b) == 0;
}

/* The reply's power entry of PF @pf (PrepareVm and ReleaseVm: what was applied, and the
 * GPU's power after it), or NULL. */
static json_object *power_entry(json_object *reply, const char *pf) {
        json_object *all = member(reply, "power", json_type_array);

        for (size_t i = 0; all && i < json_object_array_length(all); i++) {
                json_object *e = json_object_array_get_idx(all, i);

                if (streq_ptr(member_string(e, "bdf"), pf))
                        return e;
        }
        return NULL;
}

/* ", 0000:05:02.0 (vfio-pci)": the domain's VFs and where they are now. The drivers of the
 * reservation (@vm) are amdsmid's last view, which a bind of this very call may not have
 * reached yet: what amdsmid bound (bound_by_amdsmid) is on vfio-pci. */
static void say_vfs(FILE *f, json_object *vm, enum op op) {
        json_object *vfs = member(vm, "vfs", json_type_array);

        for (size_t i = 0; vfs && i < json_object_array_length(vfs); i++) {
                json_object *vf = json_object_array_get_idx(vfs, i);
                json_object *bound = member(vf, "bound_by_amdsmid", json_type_boolean);
                const char *bdf = member_string(vf, "bdf"), *drv = member_string(vf, "driver");
                const char *before = member_string(vf, "driver_before");

                /* the documents say "none" for a VF without a driver */
                if (streq_ptr(drv, "none"))
                        drv = NULL;
                if (streq_ptr(before, "none"))
                        before = NULL;

                if (!bdf)
                        continue;
                fprintf(f, "%s%s", i > 0 ? ", " : " ", bdf);
                if (op == OP_PREPARE)
                        fprintf(f, " (%s)",
                                (bound && json_object_get_boolean(bound)) ||
                                                streq_ptr(drv, "vfio-pci")
                                        ? "vfio-pci"
                                        : "libvirt binds it");
                else if (op == OP_RECONNECT)
                        fprintf(f, " (%s)", drv ? drv : "no driver");
                else if (bound && json_object_get_boolean(bound)) {
                        if (before)
                                fprintf(f, " (back to %s)", before);
                        else
                                fputs(" (unbound from vfio-pci)", f);
                }
        }
}

/* ", cap 450 W on GPU 0000:05:00.0": the domain's vm source on each GPU, and what binds the
 * GPU when that is not this domain (a prepare) or after it left (a release). */
static void say_caps(FILE *f, json_object *reply, json_object *vm, const char *name, enum op op) {
        json_object *caps = member(vm, "power", json_type_array);

        for (size_t i = 0; caps && i < json_object_array_length(caps); i++) {
                json_object *c = json_object_array_get_idx(caps, i);
                json_object *w = member(c, "cap_w", json_type_int), *e, *after, *eff;
                const char *pf = member_string(c, "pf_bdf"), *binding, *binding_vm;

                if (!pf || !w)
                        continue;
                fprintf(f, ", cap %" PRId64 " W on GPU %s%s", json_object_get_int64(w), pf,
                        op == OP_RELEASE ? " removed" : "");
                e = op == OP_RECONNECT ? NULL : power_entry(reply, pf);
                if (!e)
                        continue;
                if (streq_ptr(member_string(e, "control"), "gim")) {
                        fputs(op == OP_RELEASE ? " (gim applies no cap through sysfs)"
                                               : " (recorded only: gim applies no cap through "
                                                 "sysfs)",
                              f);
                        continue;
                }
                after = member(e, "after", json_type_object);
                eff = member(after, "effective_w", json_type_int);
                binding = member_string(after, "binding");
                binding_vm = member_string(after, "binding_vm");
                if (!eff || !binding)
                        continue;
                if (op == OP_PREPARE && streq_ptr(binding, "vm") && streq_ptr(binding_vm, name))
                        continue; /* it binds: said */
                fprintf(f, " (%s %" PRId64 " W: %s%s%s)",
                        op == OP_RELEASE ? "effective now" : "effective",
                        json_object_get_int64(eff), binding, binding_vm ? " " : "",
                        binding_vm ? binding_vm : "");
        }
}

/* What was done, in one line, from amdsmid's reply to PrepareVm / ReleaseVm:
 * "domain web1: provisioned 0000:05:02.0 (vfio-pci), cap 450 W on GPU 0000:05:00.0". */
static char *success_line(const char *name, enum op op, const char *text) {
        json_object *reply = text ? json_tokener_parse(text) : NULL, *vm, *released, *lines;
        const char *verb = op == OP_RELEASE     ? "released"
                           : op == OP_RECONNECT ? "reconnected"
                                                : "provisioned";
        char *s = NULL;
        size_t len = 0;
        FILE *f;

        f = open_memstream(&s, &len);
        if (!f) {
                json_object_put(reply);
                return NULL;
        }
        fprintf(f, "domain %s: ", name);
        vm = op == OP_RECONNECT ? reply : member(reply, "vm", json_type_object);
        released = member(reply, "released", json_type_boolean);
        lines = member(reply, "messages", json_type_array);
        if (vm) {
                fputs(verb, f);
                say_vfs(f, vm, op);
                say_caps(f, reply, vm, name, op);
        } else if (released && !json_object_get_boolean(released))
                fputs("nothing to release (amdsmid holds no reservation of it)", f);
        else if (lines && json_object_array_length(lines) > 0)
                /* a reply without the reservation (a damaged one dropped): its last word */
                fprintf(f, "%s",
                        json_object_get_string(json_object_array_get_idx(
                                lines, json_object_array_length(lines) - 1)));
        else
                fprintf(f, "%s (amdsmid's reply says no more)", verb);
        json_object_put(reply);
        if (fclose(f) != 0) {
                free(s);
                return NULL;
        }
        return s;
}

static enum op classify(const char *op, const char *sub) {
        if (strcmp(op, "prepare") == 0 && strcmp(sub, "begin") == 0)
                return OP_PREPARE;
        if ((strcmp(op, "release") == 0 || strcmp(op, "stopped") == 0) && strcmp(sub, "end") == 0)
                return OP_RELEASE;
        if (strcmp(op, "reconnect") == 0 && strcmp(sub, "begin") == 0)
                return OP_RECONNECT;
        if ((strcmp(op, "migrate") == 0 || strcmp(op, "restore") == 0) && strcmp(sub, "begin") == 0)
                return OP_FILTER;
        return OP_OTHER;
}

int main(int argc, char *argv[]) {
        _cleanup_free_ char *xml = NULL, *reply = NULL, *error_text = NULL, *line = NULL;
        _cleanup_free_ bool *is_amd = NULL;
        struct vm_domain *dom = NULL;
        sd_bus *bus = NULL;
        struct deadline dl;
        char err[512];
        size_t len = 0;
        enum op op;
        bool fatal;
        int r, n_amd;

        if (argc < 4 || argc > 5) {
                fprintf(stderr,
                        PROGRAM ": expected DOMAIN OPERATION SUB-OPERATION [EXTRA] as libvirt "
                                "passes them (see amdsmi-libvirt-hook(8))\n");
                return 2;
        }
        domain_name = argv[1];
        operation = argv[2];
        op = classify(argv[2], argv[3]);
        if (op == OP_OTHER || op == OP_FILTER)
                return 0; /* a filter that prints nothing leaves the XML unchanged */
        fatal = op == OP_PREPARE; /* only a start may fail */
        dl.end_usec = now_usec() + (uint64_t) hook_timeout_s() * 1000000;

        r = read_stdin(&xml, &len);
        if (r < 0) {
                if (fatal) {
                        fail_start("cannot read the domain XML: %s", strerror(-r));
                        return 1;
                }
                log_hook(LOG_WARNING, "cannot read the domain XML: %s", strerror(-r));
                return 0;
        }
        r = vm_domain_parse(xml, len, &dom, err, sizeof(err));
        if (r < 0) {
                if (fatal) {
                        fail_start("%s", err);
                        return 1;
                }
                log_hook(LOG_WARNING, "%s", err);
                return 0;
        }
        domain_name = dom->name;

        is_amd = calloc(dom->n_hostdevs ? dom->n_hostdevs : 1, sizeof(*is_amd));
        if (!is_amd) {
                vm_domain_free(dom);
                return fatal ? 1 : 0;
        }
        n_amd = amd_hostdevs(dom, is_amd);
        if (n_amd < 0) {
                if (fatal)
                        fail_start("cannot read the host's GPUs: %s", strerror(-n_amd));
                else
                        log_hook(LOG_WARNING, "cannot read the host's GPUs: %s", strerror(-n_amd));
                vm_domain_free(dom);
                return fatal ? 1 : 0;
        }
        if (n_amd == 0 && op != OP_RELEASE) {
                /* not ours: never wait for amdsmid */
                if (dom->has_metadata)
                        log_hook(LOG_WARNING,
                                 "amdsmi metadata but no AMD GPU VF among the PCI hostdevs: "
                                 "nothing to provision");
                vm_domain_free(dom);
                return 0;
        }
        if (n_amd == 0 && !dom->has_metadata) {
                vm_domain_free(dom);
                return 0; /* a release: nothing was provisioned for a domain like this */
        }

        r = sd_bus_open_system(&bus);
        if (r < 0) {
                error_text = strdup("the system bus is not reachable");
        } else if (op == OP_RELEASE)
                r = release(bus, &dl, dom, &reply, &error_text);
        else
                r = prepare(bus, &dl, dom, is_amd, op == OP_RECONNECT, &reply, &error_text);
        sd_bus_flush_close_unref(bus);

        if (r < 0) {
                const char *why = error_text ? error_text : strerror(-r);

                if (fatal)
                        fail_start("cannot provision its GPU VFs: %s", why);
                else
                        log_hook(LOG_WARNING, "%s: %s (the domain goes on)",
                                 op == OP_RELEASE ? "cannot release its GPU VFs"
                                                  : "cannot record its GPU VFs",
                                 why);
                vm_domain_free(dom);
                return fatal ? 1 : 0;
        }
        line = success_line(dom->name, op, reply);
        log_hook(LOG_INFO, "%s", line ? line : "done (out of memory for more)");
        if (debug_enabled())
                log_hook(LOG_DEBUG, "domain %s: amdsmid's reply to %s: %s", dom->name,
                         op == OP_RELEASE ? "ReleaseVm" : "PrepareVm", reply ? reply : "(none)");
        vm_domain_free(dom);
        return 0;
}
