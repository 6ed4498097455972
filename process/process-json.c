/* SPDX-License-Identifier: MIT */
/*
 * The "process" document (process-json.h). One entry per (process, KFD node) of the GPU: a
 * process appears under each GPU it holds, once per partition, as amd-smi lists it per GPU.
 *
 *   {"pid", "name", "user", "uid", "cgroup", "container": {"runtime", "id"} | null, "pasid",
 *    "partition", "kfd_gpu_id", "in_use", "queues", "vram_bytes", "sdma_usec",
 *    "cu_occupancy", "evicted_ms", "faults", "page_in", "page_out"}
 *
 * Values the kernel did not give (another reader's device cgroup, an old kernel, a node not in
 * use: its details are not read) are null.
 */
#include "config.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json-util.h"
#include "macro.h"
#include "process-json.h"
#include "select.h"

void process_escape_name(const char *comm, char *buf, size_t size) {
        size_t n = 0;

        if (size == 0)
                return;
        for (const unsigned char *s = (const unsigned char *) comm; *s; s++) {
                char esc[5];
                const char *add = esc;
                size_t len;

                if (*s == '\\')
                        add = "\\\\";
                else if (*s >= 0x20 && *s < 0x7f) {
                        esc[0] = (char) *s;
                        esc[1] = '\0';
                } else
                        snprintf(esc, sizeof(esc), "\\x%02x", *s);
                len = strlen(add);
                if (n + len >= size)
                        break;
                memcpy(buf + n, add, len);
                n += len;
        }
        buf[n] = '\0';
}

static bool is_hex_id(const char *s, size_t len) {
        if (len != 64)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!isxdigit((unsigned char) s[i]) || isupper((unsigned char) s[i]))
                        return false;
        return true;
}

bool process_container(const char *cgroup, char *runtime, size_t runtime_size, char *id,
                       size_t id_size) {
        static const struct {
                const char *prefix, *runtime;
        } scopes[] = {
                { "docker-", "docker" },
                { "cri-containerd-", "containerd" },
                { "crio-", "cri-o" },
                { "libpod-", "podman" },
        };
        const char *prev = NULL, *prev_end = NULL;
        bool found = false;

        if (!cgroup || runtime_size == 0 || id_size <= 64)
                return false;
        /* the last component naming one wins (a container's own sub-cgroups come after) */
        for (const char *c = cgroup; *c;) {
                const char *end = strchrnul(c + (*c == '/'), '/');
                const char *comp = c + (*c == '/');
                size_t len = (size_t) (end - comp);
                const char *found_rt = NULL, *found_id = NULL;

                for (size_t i = 0; i < ELEMENTSOF(scopes); i++) {
                        size_t pl = strlen(scopes[i].prefix);

                        if (len == pl + 64 + 6 && strncmp(comp, scopes[i].prefix, pl) == 0 &&
                            strncmp(comp + pl + 64, ".scope", 6) == 0 && is_hex_id(comp + pl, 64)) {
                                found_rt = scopes[i].runtime;
                                found_id = comp + pl;
                        }
                }
                /* cgroupfs drivers: /docker/ID, /kubepods/.../ID */
                if (!found_rt && prev && is_hex_id(comp, len) && (size_t) (prev_end - prev) == 6 &&
                    strncmp(prev, "docker", 6) == 0) {
                        found_rt = "docker";
                        found_id = comp;
                }
                if (found_rt) {
                        snprintf(runtime, runtime_size, "%s", found_rt);
                        memcpy(id, found_id, 64);
                        id[64] = '\0';
                        found = true;
                }
                prev = comp;
                prev_end = end;
                c = end;
        }
        return found;
}

int process_read(struct report *r, struct amdsmi_ctx *ctx, struct amdsmi_process_list **ret) {
        struct amdsmi_process_list *list = NULL;
        int e;

        e = amdsmi_ctx_read_processes(ctx, 0, &list);
        if (e < 0)
                return report_fail(r, e, "cannot read the KFD processes: %s", strerror(-e));
        if (list->n_denied > 0)
                report_note(r,
                            "%u process%s could not be read whole (another user's, or a GPU "
                            "this user's device cgroup denies): their values show as null",
                            list->n_denied, list->n_denied == 1 ? "" : "es");
        for (size_t i = 0; i < list->n_processes; i++) {
                const struct amdsmi_process *p = &list->processes[i];

                for (size_t k = 0; k < p->n_nodes; k++)
                        if (p->nodes[k].gpu_index < 0)
                                report_note(r,
                                            "process %d holds KFD node gpu_id %u, which no GPU "
                                            "of this machine has",
                                            (int) p->pid, p->nodes[k].kfd_gpu_id);
        }
        *ret = list;
        return 0;
}

static json_object *container_json(const char *cgroup) {
        char runtime[16] = "", id[65] = "";
        json_object *o;

        if (!process_container(cgroup, runtime, sizeof(runtime), id, sizeof(id)))
                return NULL;
        o = json_object_new_object();
        if (!o)
                return NULL;
        json_set(o, "runtime", json_object_new_string(runtime));
        json_set(o, "id", json_object_new_string(id));
        return o;
}

/* The user names of the last uids looked up: a thousand processes of a few users must not
 * read the user database a thousand times (NSS reads /etc/passwd on every call). */
#define USER_CACHE 16

static json_object *user_json(uint32_t uid) {
        static struct {
                uint32_t uid;
                bool known;
                char name[64];
        } cache[USER_CACHE];
        static unsigned next;
        char buf[1024];
        struct passwd pw, *res = NULL;
        size_t i;

        if (uid == UINT32_MAX)
                return NULL;
        for (i = 0; i < USER_CACHE; i++)
                if (cache[i].uid == uid && cache[i].name[0] != '\0')
                        return cache[i].known ? json_object_new_string(cache[i].name) : NULL;
        i = next++ % USER_CACHE;
        cache[i].uid = uid;
        cache[i].known = getpwuid_r((uid_t) uid, &pw, buf, sizeof(buf), &res) == 0 && res &&
                         strlen(res->pw_name) < sizeof(cache[i].name);
        snprintf(cache[i].name, sizeof(cache[i].name), "%s",
                 cache[i].known ? res->pw_name : "?");
        return cache[i].known ? json_object_new_string(cache[i].name) : NULL;
}

static json_object *entry_json(const struct amdsmi_process *p,
                               const struct amdsmi_process_node *n) {
        json_object *e = json_object_new_object();
        char name[sizeof(p->comm) * 4 + 1];

        if (!e)
                return NULL;
        process_escape_name(p->comm, name, sizeof(name));
        json_set(e, "pid", json_object_new_int(p->pid));
        json_set(e, "name", p->comm[0] ? json_object_new_string(name) : NULL);
        json_set(e, "user", user_json(p->uid));
        json_set(e, "uid", p->uid == UINT32_MAX ? NULL : json_object_new_int64(p->uid));
        json_set(e, "cgroup", json_string_or_null(p->cgroup[0] ? p->cgroup : NULL));
        json_set(e, "container", container_json(p->cgroup));
        json_set(e, "pasid", p->pasid == UINT32_MAX ? NULL : json_object_new_int64(p->pasid));
        json_set(e, "partition", n->partition < 0 ? NULL : json_object_new_int(n->partition));
        json_set(e, "kfd_gpu_id", json_object_new_int64(n->kfd_gpu_id));
        json_set(e, "in_use", json_object_new_boolean(n->in_use));
        json_set(e, "queues", json_object_new_int64(n->queues));
        json_set(e, "vram_bytes", json_u64_or_null(n->vram_bytes));
        json_set(e, "sdma_usec", json_u64_or_null(n->sdma_usec));
        json_set(e, "cu_occupancy", json_u64_or_null(n->cu_occupancy));
        json_set(e, "evicted_ms", json_u64_or_null(n->evicted_ms));
        json_set(e, "faults", json_u64_or_null(n->faults));
        json_set(e, "page_in", json_u64_or_null(n->page_in));
        json_set(e, "page_out", json_u64_or_null(n->page_out));
        return e;
}

json_object *process_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu) {
        const struct amdsmi_process_list *l = q->processes;
        int32_t gi = (int32_t) amdsmi_gpu_get_index(gpu);
        json_object *g = doc_gpu_new(index, gpu), *a;

        if (!g)
                return NULL;
        a = json_object_new_array();
        if (!a) {
                json_object_put(g);
                return NULL;
        }
        json_set(g, "partition_count", gpu_partition_count(q->report, (int) index, gpu));
        json_set(g, "processes", a);
        for (size_t i = 0; l && i < l->n_processes; i++) {
                const struct amdsmi_process *p = &l->processes[i];

                if (q->processes_own_only && p->uid != q->processes_uid)
                        continue;
                for (size_t k = 0; k < p->n_nodes; k++) {
                        const struct amdsmi_process_node *n = &p->nodes[k];
                        json_object *e;

                        if (n->gpu_index != gi || n->partition < 0 ||
                            !select_match_partition(&q->set->matches[index],
                                                    (unsigned) n->partition))
                                continue;
                        e = entry_json(p, n);
                        if (!e)
                                return g; /* -ENOMEM: what there is */
                        json_object_array_add(a, e);
                }
        }
        return g;
}
