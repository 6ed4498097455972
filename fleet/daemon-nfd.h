/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's Node Feature Discovery labels (amdsmid(8) KUBERNETES): the feature file written
 * for nfd-worker's local source ([kubernetes] nfd_features), removed when amdsmid stops.
 */
#pragma once

struct daemon;

/* After the start and every reload: the file in force ([kubernetes] nfd_features; the file of
 * the previous configuration is removed when it moved or was disabled), a rewrite timer. */
void daemon_nfd_config(struct daemon *d);

/* Writes the file when a label changed or its last writing is NFD_REWRITE_S old (when a change
 * ends, at the periodic check, at a reload: fleet_daemon_sync_update()). Never fails: a problem
 * is logged once per change of state. */
void daemon_nfd_update(struct daemon *d);

/* A clean stop: removes the file this amdsmid wrote, so that the labels go with it. */
void daemon_nfd_done(struct daemon *d);
