/* SPDX-License-Identifier: MIT */
/*
 * Device selection (-g) and the watch parameters (-w, -n). Pure functions: parsing and resolution
 * know nothing of libamdsmi, so they are unit-tested on their own.
 *
 * Syntax: -g may be given several times; each value is a comma-separated list of selectors,
 * spaces and tabs around a selector are ignored. A selector is one of
 *
 *   all               every GPU with all its partitions (case-insensitive)
 *   N                 GPU index N (decimal, enumeration = BDF order)
 *   N.P               partition P of GPU N (decimal)
 *   DDDD:BB:DD.F      PCI address (hex, case-insensitive; 1-8 domain digits, 1-2 bus and
 *   BB:DD.F           device digits, device <= 1f, function 0-7); domain 0 when omitted
 *   XXXXXXXXXXXXXXXX  unique id: exactly 16 hex digits, case-insensitive, "0x" allowed (the
 *                     GPU's unique_id, as `amdsmi list` shows it); every GPU with that id
 *
 * The selection is the union of its selectors: duplicates collapse, a whole GPU absorbs its
 * partitions, "all" absorbs everything. Output follows enumeration order, not selector order.
 * No selector at all means "all".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SELECT_BDF_MAX 24 /* "ffffffff:ff:1f.7" + NUL, with room */
#define SELECT_NO_PARTITION UINT32_MAX

enum selector_kind {
        SELECTOR_ALL,
        SELECTOR_INDEX,
        SELECTOR_BDF,
        SELECTOR_UNIQUE_ID,
};

struct selector {
        enum selector_kind kind;
        uint32_t index;           /* SELECTOR_INDEX */
        uint32_t partition;       /* SELECT_NO_PARTITION for the whole GPU; a parsed BDF
                                   * selector always has it, a pinned one may not */
        char bdf[SELECT_BDF_MAX]; /* SELECTOR_BDF: normalised "0000:c1:00.0" */
        char unique_id[17];       /* SELECTOR_UNIQUE_ID: 16 lower-case hex digits */
};

struct selection {
        struct selector *items;
        size_t n_items;
};

/* One enumerated GPU as the resolver sees it. */
struct select_target {
        const char *bdf; /* "0000:c1:00.0" */
        size_t n_partitions;
        const char *unique_id; /* 16 hex digits, NULL: unknown */
};

/* What the selection keeps of one GPU. Partition bit i stands for partition index i. */
struct select_match {
        bool selected;
        bool all_partitions;
        uint64_t partitions;
};

/*
 * Parses one selector (no comma, no surrounding space).
 * @return 0, or -EINVAL for a malformed selector (also an index or partition above UINT32_MAX).
 */
int selector_parse(const char *s, struct selector *ret);

/*
 * Parses one -g argument and appends its selectors to @sel.
 * @return 0, -EINVAL (empty argument or element, malformed selector; @sel unchanged) or
 * -ENOMEM.
 */
int selection_add(struct selection *sel, const char *arg);

void selection_clear(struct selection *sel);

/*
 * Pins index selectors to the GPUs they resolved to: "0" (or "0.3") becomes GPU @gpus[0]'s
 * BDF (with the same partition). A watch re-enumerates when the topology changes; pinned, it
 * keeps following the same GPUs, and a GPU that went away is reported gone instead of its
 * index silently naming the next one.
 */
void selection_pin(struct selection *sel, const struct select_target *gpus, size_t n);

/*
 * Resolves @sel against @n GPUs into @ret (n entries). An empty selection selects everything.
 * @return 0, or -ENOENT when a selector names no GPU or partition; then *ret_failed (if not
 * NULL) is that selector's position in @sel.
 */
int selection_resolve(const struct selection *sel, const struct select_target *gpus, size_t n,
                      struct select_match *ret, size_t *ret_failed);

/*
 * Parses a watch interval: positive decimal seconds ("2", "0.5", "0.001"; at most nine
 * decimals count), at most one year. @return 0 or -EINVAL.
 */
int parse_interval(const char *s, uint64_t *ret_ns);

/* Parses a sample count: a positive decimal integer. @return 0 or -EINVAL. */
int parse_count(const char *s, uint64_t *ret);

/*
 * Spells @s as -g takes it ("all", "3", "0.3", "0000:c1:00.0") into @buf. @return 0, or
 * -EOPNOTSUPP for a selector -g cannot spell (a pinned partition of a PCI address).
 */
int selector_format(const struct selector *s, char *buf, size_t len);

/* Writes "GPU 3", "GPU 0 partition 3", "GPU 0000:c1:00.0" or "all" into @buf. */
void selector_describe(const struct selector *s, char *buf, size_t len);

/* @return whether partition @index of a matched GPU is selected. */
bool select_match_partition(const struct select_match *m, unsigned index);
