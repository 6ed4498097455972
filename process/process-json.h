/* SPDX-License-Identifier: MIT */
/*
 * The "process" document (amdsmi process, Manager.GetDocument("process"),
 * Manager.ListProcesses): per selected GPU, the KFD processes holding one of its selected
 * partitions, with what each holds there. Both front ends read the list once
 * (process_read()), put it into their struct doc_query and collect with process_gpu().
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

#include "documents.h"
#include "report.h"

/* Reads every KFD process (amdsmi_ctx_read_processes()); notes in @r what the reader may not
 * see and the entries naming a node no GPU has. @return 0 with a new list, or a negative errno
 * (reported). */
int process_read(struct report *r, struct amdsmi_ctx *ctx, struct amdsmi_process_list **ret);

/* The GPU object of the process document: doc_gpu_new()'s keys and "processes". */
json_object *process_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu);

/* @comm made printable and valid UTF-8 into @buf: bytes outside printable ASCII as \xHH, a
 * backslash as \\. */
void process_escape_name(const char *comm, char *buf, size_t size);

/* The container of a cgroup v2 path, as runtimes name their scopes (docker-ID.scope,
 * cri-containerd-ID.scope, crio-ID.scope, libpod-ID.scope, or .../docker/ID): the runtime
 * into @runtime and the 64 hex digit ID into @id. @return true if it names one. */
bool process_container(const char *cgroup, char *runtime, size_t runtime_size, char *id,
                       size_t id_size);
