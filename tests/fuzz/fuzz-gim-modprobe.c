/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of gim's modprobe configuration (sriov/gim-modprobe.c): arbitrary text through
 * gim_conf_parse(), as another file of /etc/modprobe.d and as amdsmi's own file. Checks what
 * the callers rely on: only -EBADMSG (naming its line) and -ENOMEM fail; enabled_devices holds
 * only canonical BDFs; the pending values of our file are unique canonical BDFs; conflict lines
 * are bounded strings with a line number; and pending values in gim's range render into a file
 * that parses back to the same values.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "gim-modprobe.h"
#include "parse-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(const struct gim_conf_line *l) {
        if (l->line == 0 || !memchr(l->text, '\0', sizeof(l->text)) ||
            !memchr(l->path, '\0', sizeof(l->path)) || strcmp(l->path, "/etc/modprobe.d/x.conf") != 0)
                abort();
}

static void check_scan(const struct gim_modprobe_scan *s, int r, bool own) {
        if (r != 0 && r != -EBADMSG && r != -ENOMEM)
                abort();
        if (r == -EBADMSG)
                check_line(&s->enabled_devices_line);
        for (char **d = s->enabled_devices; d && *d; d++)
                if (!pci_bdf_valid(*d))
                        abort();
        for (size_t i = 0; i < s->n_conflicts && i < GIM_MODPROBE_MAX_CONFLICTS; i++)
                check_line(&s->conflicts[i]);
        if (own && (s->n_conflicts > 0 || s->enabled_devices))
                abort(); /* our own file's vf_num and enabled_devices are not the others' */
        if (!own && s->n_pending > 0)
                abort(); /* "# vf_num" lines count only in our file */
        for (size_t i = 0; i < s->n_pending; i++) {
                if (!pci_bdf_valid(s->pending[i].bdf))
                        abort();
                for (size_t j = 0; j < i; j++)
                        if (strcmp(s->pending[i].bdf, s->pending[j].bdf) == 0)
                                abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = fuzz_strndup(data, size);
        struct gim_modprobe_scan s = {};
        int r;

        /* another file of the configuration */
        r = gim_conf_parse(&s, "/etc/modprobe.d/x.conf", text, false);
        check_scan(&s, r, false);
        gim_modprobe_scan_done(&s);

        /* amdsmi's own file */
        memset(&s, 0, sizeof(s));
        r = gim_conf_parse(&s, "/etc/modprobe.d/x.conf", text, true);
        check_scan(&s, r, true);
        if (r == 0 && s.n_pending > 0) {
                bool in_range = true;
                char *out = NULL;

                for (size_t i = 0; i < s.n_pending; i++)
                        if (s.pending[i].vf_num < GIM_VF_NUM_MIN || s.pending[i].vf_num > GIM_VF_NUM_MAX)
                                in_range = false;
                if (in_range) {
                        struct gim_modprobe_scan back = {};

                        if (gim_modprobe_render(s.pending, s.n_pending, "fuzz", 0, &out) < 0)
                                abort();
                        if (gim_conf_parse(&back, "/etc/modprobe.d/x.conf", out, true) != 0)
                                abort();
                        if (back.n_pending != s.n_pending)
                                abort(); /* round trip */
                        for (size_t i = 0; i < s.n_pending; i++)
                                if (strcmp(back.pending[i].bdf, s.pending[i].bdf) != 0 ||
                                    back.pending[i].vf_num != s.pending[i].vf_num)
                                        abort();
                        gim_modprobe_scan_done(&back);
                        free(out);
                }
        }
        gim_modprobe_scan_done(&s);
        free(text);
        return 0;
}
