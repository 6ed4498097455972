/* SPDX-License-Identifier: MIT */
/*
 * amdsmi vm: the VFs amdsmid holds for libvirt domains (amdsmi-libvirt-hook(8)), and
 * amdsmi vm release --force DOMAIN, which drops a reservation whose release never came (a
 * domain that died while amdsmid was down, a hook that was removed).
 *
 *   {"schema": "amdsmi/1", ..., "command": "vm",
 *    "vms": [{"name", "uuid", "cap_w", "vfs": [{"bdf", "gpu", "pf_bdf", "pf_gpu", "driver",
 *             "bound_by_amdsmid", "driver_before", "cap_w"}], "power": [{"pf_bdf", "source",
 *             "key", "cap_w"}]}], "errors": []}
 *
 * Reads go through amdsmid (ListVms) when it runs, else to the state file, where amdsmid
 * keeps them; a release needs amdsmid, which undoes what it did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "bus.h"
#include "cli.h"
#include "vm-state.h"

static const struct column_def vm_columns[] = {
        { "name", "DOMAIN", "name", 0 },
        { "uuid", "UUID", "uuid", 0 },
        { "vf", "VF", "vf", 0 },
        { "gpu", "GPU", "gpu", 0 },
        { "pf_gpu", "PF GPU", "pf_gpu", 0 },
        { "driver", "DRIVER", "driver", COLUMN_NONE },
        { "bound_by_amdsmid", "BOUND BY AMDSMID", "bound_by_amdsmid", 0 },
        { "cap_w", "VM CAP (W)", "cap_w", COLUMN_NONE },
};

static int lookup_ctx(const char *bdf, void *userdata, unsigned *ret_index,
                      const char **ret_driver) {
        struct amdsmi_gpu *gpu = NULL;

        if (amdsmi_ctx_find_gpu(userdata, bdf, &gpu) < 0)
                return -ENODEV;
        *ret_index = amdsmi_gpu_get_index(gpu);
        *ret_driver = amdsmi_gpu_get_driver_name(gpu);
        return 0;
}

/* The "vms" array: from amdsmid, or from the state file. */
static int read_vms(struct cli *c, json_object **ret) {
        _cleanup_free_ struct vm_reservation *list = NULL;
        json_object *doc = NULL, *vms;
        char warning[512];
        int r, n;

        if (!c->direct && cli_daemon_running(c)) {
                r = cli_bus_call(c, AMDSMI_BUS_PATH, NULL, AMDSMI_BUS_IFACE_MANAGER, "ListVms", 0,
                                 &doc, NULL, NULL);
                if (r >= 0 && json_object_object_get_ex(doc, "vms", &vms) &&
                    json_object_is_type(vms, json_type_array)) {
                        json_object *dl;

                        /* reservations amdsmid cannot read: said, never hidden */
                        if (json_object_object_get_ex(doc, "damaged", &dl))
                                for (size_t i = 0; i < json_object_array_length(dl); i++) {
                                        json_object *o = json_object_array_get_idx(dl, i);
                                        const char *u = json_object_get_string(
                                                json_object_object_get(o, "uuid"));

                                        _cleanup_free_ char *w = NULL;

                                        const char *problem = json_object_get_string(
                                                json_object_object_get(o, "problem"));

                                        if ((u ? asprintf(&w, "the reservation %s in the state "
                                                          "file is damaged (%s): its VFs and "
                                                          "PFs are left alone; 'amdsmi vm "
                                                          "release --force %s' drops it",
                                                          u, problem, u)
                                               : asprintf(&w, "the \"vms\" section of the "
                                                          "state file is damaged (%s): no "
                                                          "reservation is read, VFs are not "
                                                          "reserved and VF counts do not "
                                                          "change until it is repaired or "
                                                          "removed",
                                                          problem)) < 0)
                                                continue;
                                        if (c->format != OUTPUT_JSON)
                                                fprintf(stderr, "amdsmi: warning: %s\n", w);
                                        else {
                                                json_object *e = error_entry_new(-1, "state",
                                                                                 -EUCLEAN, w);

                                                if (!c->report.errors)
                                                        c->report.errors = json_object_new_array();
                                                if (e && c->report.errors)
                                                        json_object_array_add(c->report.errors, e);
                                                else
                                                        json_object_put(e);
                                        }
                                }
                        *ret = json_object_get(vms);
                        json_object_put(doc);
                        return 0;
                }
                json_object_put(doc); /* an older amdsmid: the file */
        }
        n = vm_state_read(&list, warning, sizeof(warning));
        if (n < 0)
                return cli_fail(c, n, "cannot read the VM reservations: %s", strerror(-n));
        if (warning[0])
                fprintf(stderr, "amdsmi: %s\n", warning);
        r = cli_open(c);
        if (r < 0)
                return r;
        vms = json_object_new_array();
        if (!vms)
                return cli_fail(c, -ENOMEM, "out of memory");
        for (int i = 0; i < n; i++)
                json_object_array_add(vms, vm_reservation_json(&list[i], lookup_ctx, c->set.ctx));
        *ret = vms;
        return 0;
}

/* One table row per VF (the domain's columns repeated). */
static json_object *rows_of(json_object *vms) {
        json_object *rows = json_object_new_array();

        for (size_t i = 0; rows && i < json_object_array_length(vms); i++) {
                json_object *v = json_object_array_get_idx(vms, i), *vfs, *x;

                if (!json_object_object_get_ex(v, "vfs", &vfs))
                        continue;
                for (size_t k = 0; k < json_object_array_length(vfs); k++) {
                        json_object *f = json_object_array_get_idx(vfs, k);
                        json_object *row = json_object_new_object();

                        if (!row)
                                break;
                        if (json_object_object_get_ex(v, "name", &x))
                                json_set(row, "name", json_object_get(x));
                        if (json_object_object_get_ex(v, "uuid", &x))
                                json_set(row, "uuid", json_object_get(x));
                        if (json_object_object_get_ex(f, "bdf", &x))
                                json_set(row, "vf", json_object_get(x));
                        if (json_object_object_get_ex(f, "gpu", &x))
                                json_set(row, "gpu", json_object_get(x));
                        if (json_object_object_get_ex(f, "pf_gpu", &x))
                                json_set(row, "pf_gpu", json_object_get(x));
                        if (json_object_object_get_ex(f, "driver", &x))
                                json_set(row, "driver", json_object_get(x));
                        if (json_object_object_get_ex(f, "bound_by_amdsmid", &x))
                                json_set(row, "bound_by_amdsmid", json_object_get(x));
                        /* the cap that applies on this VF's GPU: its own, else the domain's */
                        if (json_object_object_get_ex(f, "cap_w", &x) && x)
                                json_set(row, "cap_w", json_object_get(x));
                        else if (json_object_object_get_ex(v, "cap_w", &x))
                                json_set(row, "cap_w", json_object_get(x));
                        json_object_array_add(rows, row);
                }
        }
        return rows;
}

int verb_vm(struct cli *c) {
        struct columns cols = {};
        json_object *vms = NULL, *doc, *rows;
        int r;

        cli_begin_sample(c);
        r = read_vms(c, &vms);
        if (r < 0)
                return r;
        if (c->format == OUTPUT_JSON) {
                doc = document_new(c->report.command, &c->report.sample_time, c->report.hostname);
                if (!doc) {
                        json_object_put(vms);
                        return cli_fail(c, -ENOMEM, "out of memory");
                }
                json_set(doc, "vms", vms);
                json_set(doc, "errors", c->report.errors ? c->report.errors : json_object_new_array());
                c->report.errors = NULL;
                r = cli_print_json(c, doc);
                json_object_put(doc);
                return r;
        }
        if (c->format == OUTPUT_TABLE && json_object_array_length(vms) == 0) {
                json_object_put(vms);
                fprintf(stderr, "amdsmi: no domain holds a VF\n");
                return 0;
        }
        rows = rows_of(vms);
        json_object_put(vms);
        r = rows ? columns_add_defs(&cols, vm_columns, ELEMENTSOF(vm_columns)) : -ENOMEM;
        if (r >= 0 && c->format == OUTPUT_CSV) {
                r = output_csv_header(stdout, &cols);
                if (r >= 0)
                        r = output_csv_rows(stdout, &cols, rows);
        } else if (r >= 0)
                r = output_table(stdout, &cols, rows, "");
        columns_free(&cols);
        json_object_put(rows);
        if (r < 0)
                return cli_fail(c, r, "cannot format the output: %s", strerror(-r));
        return 0;
}

int verb_vm_release(struct cli *c) {
        _cleanup_free_ char *message = NULL;
        json_object *vms = NULL, *reply = NULL, *lines;
        const char *uuid = NULL, *name = NULL;
        char canonical[VM_UUID_LEN + 1];
        int r;

        if (!c->force)
                return cli_fail(c, -EINVAL,
                                "a domain's VFs are released by amdsmi-libvirt-hook when it "
                                "stops; 'amdsmi vm release --force %s' drops the reservation "
                                "now (the domain must not be running)",
                                c->argument);
        if (c->direct || !cli_daemon_running(c))
                return cli_fail(c, -ESRCH, "amdsmid is not running: it keeps the reservations "
                                           "and undoes what it did for them");
        cli_begin_sample(c);
        r = read_vms(c, &vms);
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(vms); i++) {
                json_object *v = json_object_array_get_idx(vms, i), *n, *u;

                if (!json_object_object_get_ex(v, "name", &n) ||
                    !json_object_object_get_ex(v, "uuid", &u))
                        continue;
                if (strcmp(json_object_get_string(n), c->argument) == 0 ||
                    strcasecmp(json_object_get_string(u), c->argument) == 0) {
                        name = json_object_get_string(n);
                        uuid = json_object_get_string(u);
                        break;
                }
        }
        if (!uuid && vm_uuid_normalize(c->argument, canonical)) {
                /* not listed: amdsmid may still know it as a damaged reservation, which it
                 * drops; otherwise it answers that there is nothing to release */
                uuid = name = canonical;
        }
        if (!uuid) {
                json_object_put(vms);
                return cli_fail(c, -ENOENT, "no domain '%s' holds a VF ('amdsmi vm' lists them)",
                                c->argument);
        }
        r = cli_bus_call(c, AMDSMI_BUS_PATH, NULL, AMDSMI_BUS_IFACE_MANAGER, "ReleaseVm", 0,
                         &reply, &message, "s", uuid);
        if (c->format == OUTPUT_TABLE && json_object_object_get_ex(reply, "messages", &lines))
                for (size_t i = 0; i < json_object_array_length(lines); i++)
                        printf("%s\n", json_object_get_string(json_object_array_get_idx(lines, i)));
        if (r < 0)
                cli_fail(c, r, "releasing %s: %s", name, message ? message : strerror(-r));
        if (c->format == OUTPUT_JSON) {
                json_object *doc = document_new(c->report.command, &c->report.sample_time, c->report.hostname);

                if (doc) {
                        json_set(doc, "release", reply ? json_object_get(reply) : NULL);
                        json_set(doc, "errors", c->report.errors ? c->report.errors : json_object_new_array());
                        c->report.errors = NULL;
                        if (r < 0)
                                json_set(doc, "result", cli_errno_json(r));
                        (void) cli_print_json(c, doc);
                        json_object_put(doc);
                }
        }
        json_object_put(reply);
        json_object_put(vms);
        return r;
}
