/* SPDX-License-Identifier: MIT */
/*
 * Prints the SR-IOV read API of libamdsmi as JSON (test-sim-sriov-lib.py checks it):
 *
 *   sriov-probe [BDF...]            amdsmi_gpu_read_sriov() of the given GPUs (all without
 *                                   BDFs): {"gpus": [{"bdf", "role", "result", "sriov"}]}
 *   sriov-probe read-vf BDF INDEX   sriov_read_vf(): {"result", "vf"}
 *   sriov-probe remember BDF DRIVER sriov_remember_driver(): {"result"}
 *   sriov-probe recall BDF          sriov_recall_driver(): {"result", "driver"}
 *   sriov-probe forget BDF          sriov_forget_driver(): {"result"}
 *   sriov-probe names               the names of enum amdsmi_vf_config and amdsmi_sriov_stage,
 *                                   one past the end included: {"config", "stage"}
 *
 * With SRIOV_PROBE_WAIT set, the GPU listing enumerates, prints "ready" on stderr and waits for
 * a line on stdin before it reads (so that a test can change the machine in between).
 *
 * Errors are negative errno numbers in "result". For each GPU it also calls
 * amdsmi_gpu_read_sriov() with a size too small: "small_size" is its result and
 * "small_size_untouched" whether the output stayed as it was. Linked with the library's
 * internal archive to reach the SR-IOV slice's internal functions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

#include "sriov-private.h"

static struct json_object *vf_json(const struct amdsmi_vf_info *vf) {
        struct json_object *o = json_object_new_object(), *users = json_object_new_array();

        json_object_object_add(o, "bdf", json_object_new_string(vf->bdf));
        json_object_object_add(o, "index", json_object_new_int64(vf->index));
        json_object_object_add(o, "driver", json_object_new_string(vf->driver));
        json_object_object_add(o, "driver_override", json_object_new_string(vf->driver_override));
        json_object_object_add(o, "iommu_group", json_object_new_int(vf->iommu_group));
        json_object_object_add(o, "vfio_viable", json_object_new_boolean(vf->vfio_viable));
        json_object_object_add(o, "in_use", json_object_new_int(vf->in_use));
        json_object_object_add(o, "n_users", json_object_new_int64(vf->n_users));
        for (unsigned i = 0; i < vf->n_users && i < AMDSMI_SRIOV_MAX_USERS; i++) {
                struct json_object *u = json_object_new_object();

                json_object_object_add(u, "pid", json_object_new_int(vf->users[i].pid));
                json_object_object_add(u, "comm", json_object_new_string(vf->users[i].comm));
                json_object_array_add(users, u);
        }
        json_object_object_add(o, "users", users);
        return o;
}

static struct json_object *sriov_json(const struct amdsmi_sriov_info *s) {
        struct json_object *o = json_object_new_object(), *vfs = json_object_new_array();

        json_object_object_add(o, "capable", json_object_new_boolean(s->capable));
        json_object_object_add(o, "total_vfs", json_object_new_int64(s->total_vfs));
        json_object_object_add(o, "num_vfs", json_object_new_int64(s->num_vfs));
        json_object_object_add(o, "offset", json_object_new_int64(s->offset));
        json_object_object_add(o, "stride", json_object_new_int64(s->stride));
        json_object_object_add(o, "vf_device", json_object_new_int(s->vf_device));
        json_object_object_add(o, "drivers_autoprobe", json_object_new_int(s->drivers_autoprobe));
        json_object_object_add(o, "pf_driver", json_object_new_string(s->pf_driver));
        json_object_object_add(o, "config",
                               json_object_new_string(amdsmi_vf_config_to_string(s->config)));
        json_object_object_add(o, "gim_vf_num", json_object_new_int(s->gim_vf_num));
        json_object_object_add(o, "n_vfs", json_object_new_int64(s->n_vfs));
        for (unsigned i = 0; i < s->n_vfs && i < AMDSMI_SRIOV_MAX_VFS; i++)
                json_object_array_add(vfs, vf_json(&s->vfs[i]));
        json_object_object_add(o, "vfs", vfs);
        return o;
}

static struct json_object *gpu_json(struct amdsmi_gpu *gpu) {
        struct json_object *o = json_object_new_object();
        struct amdsmi_sriov_info *info = calloc(2, sizeof(*info));
        int r;

        if (!info)
                abort();
        json_object_object_add(o, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(gpu)));
        json_object_object_add(
                o, "role", json_object_new_string(amdsmi_role_to_string(amdsmi_gpu_get_role(gpu))));
        info[0].size = sizeof(info[0]);
        r = amdsmi_gpu_read_sriov(gpu, &info[0]);
        json_object_object_add(o, "result", json_object_new_int(r));
        if (r >= 0)
                json_object_object_add(o, "sriov", sriov_json(&info[0]));

        /* too small: refused, the output untouched */
        memset(&info[0], 0x5a, sizeof(info[0]));
        info[0].size = sizeof(info[0]) - 1;
        info[1] = info[0];
        r = amdsmi_gpu_read_sriov(gpu, &info[0]);
        json_object_object_add(o, "small_size", json_object_new_int(r));
        json_object_object_add(
                o, "small_size_untouched",
                json_object_new_boolean(memcmp(&info[0], &info[1], sizeof(info[0])) == 0));
        free(info);
        return o;
}

static int print(struct json_object *o) {
        printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        json_object_put(o);
        return EXIT_SUCCESS;
}

static int cmd_gpus(int argc, char **argv) {
        struct amdsmi_ctx *ctx = NULL;
        struct json_object *o, *gpus;
        int r, n;

        r = amdsmi_ctx_new(&ctx);
        if (r < 0) {
                fprintf(stderr, "amdsmi_ctx_new: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        n = amdsmi_ctx_enumerate(ctx);
        if (n < 0) {
                fprintf(stderr, "enumerate: %s\n", strerror(-n));
                amdsmi_ctx_unref(ctx);
                return EXIT_FAILURE;
        }
        if (getenv("SRIOV_PROBE_WAIT")) {
                char line[16];

                fprintf(stderr, "ready\n");
                if (!fgets(line, sizeof(line), stdin))
                        line[0] = '\0';
        }
        o = json_object_new_object();
        gpus = json_object_new_array();
        for (int i = 0; i < n; i++) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(ctx, (size_t) i);
                bool wanted = argc == 0;

                for (int a = 0; a < argc; a++)
                        if (strcmp(argv[a], amdsmi_gpu_get_bdf(gpu)) == 0)
                                wanted = true;
                if (wanted)
                        json_object_array_add(gpus, gpu_json(gpu));
        }
        json_object_object_add(o, "gpus", gpus);
        amdsmi_ctx_unref(ctx);
        return print(o);
}

static int cmd_read_vf(const char *bdf, const char *index) {
        struct amdsmi_ctx *ctx = NULL;
        struct amdsmi_vf_info vf;
        struct json_object *o;
        int r;

        r = amdsmi_ctx_new(&ctx);
        if (r < 0) {
                fprintf(stderr, "amdsmi_ctx_new: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        memset(&vf, 0, sizeof(vf));
        r = sriov_read_vf(ctx, bdf, (unsigned) strtoul(index, NULL, 10), &vf);
        o = json_object_new_object();
        json_object_object_add(o, "result", json_object_new_int(r));
        if (r >= 0)
                json_object_object_add(o, "vf", vf_json(&vf));
        amdsmi_ctx_unref(ctx);
        return print(o);
}

static int cmd_names(void) {
        struct json_object *o = json_object_new_object(), *c = json_object_new_array(),
                           *st = json_object_new_array();

        for (int i = 0; i <= _AMDSMI_VF_CONFIG_MAX; i++)
                json_object_array_add(c, json_object_new_string(amdsmi_vf_config_to_string(
                                                 (enum amdsmi_vf_config) i)));
        for (int i = 0; i <= _AMDSMI_SRIOV_STAGE_MAX; i++)
                json_object_array_add(st, json_object_new_string(amdsmi_sriov_stage_to_string(
                                                  (enum amdsmi_sriov_stage) i)));
        json_object_object_add(o, "config", c);
        json_object_object_add(o, "stage", st);
        return print(o);
}

int main(int argc, char **argv) {
        struct json_object *o;
        char buf[64];
        int r;

        if (argc == 2 && strcmp(argv[1], "names") == 0)
                return cmd_names();

        if (argc >= 2 && strcmp(argv[1], "read-vf") == 0 && argc == 4)
                return cmd_read_vf(argv[2], argv[3]);
        if (argc >= 2 && strcmp(argv[1], "remember") == 0 && argc == 4) {
                o = json_object_new_object();
                r = sriov_remember_driver(argv[2], argv[3]);
                json_object_object_add(o, "result", json_object_new_int(r));
                return print(o);
        }
        if (argc >= 2 && strcmp(argv[1], "recall") == 0 && argc == 3) {
                o = json_object_new_object();
                strcpy(buf, "untouched");
                r = sriov_recall_driver(argv[2], buf, sizeof(buf));
                json_object_object_add(o, "result", json_object_new_int(r));
                json_object_object_add(o, "driver", json_object_new_string(buf));
                return print(o);
        }
        if (argc >= 2 && strcmp(argv[1], "forget") == 0 && argc == 3) {
                o = json_object_new_object();
                r = sriov_forget_driver(argv[2]);
                json_object_object_add(o, "result", json_object_new_int(r));
                return print(o);
        }
        if (argc >= 2 && (strcmp(argv[1], "read-vf") == 0 || strcmp(argv[1], "remember") == 0 ||
                          strcmp(argv[1], "recall") == 0 || strcmp(argv[1], "forget") == 0 ||
                          strcmp(argv[1], "names") == 0)) {
                fprintf(stderr, "usage: sriov-probe [BDF...] | read-vf BDF INDEX | "
                                "remember BDF DRIVER | recall BDF | forget BDF | names\n");
                return 2;
        }
        return cmd_gpus(argc - 1, argv + 1);
}
