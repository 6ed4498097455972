/* SPDX-License-Identifier: MIT */
/**
 * @file amdsmi-health.h
 * Health data of a GPU: RAS error counts per block, retired VRAM pages, CPER records and the
 * KFD SMI event stream. The health verdict (ok / warning / critical) is policy and lives above
 * the library; these calls only read what the kernel says, as it says it.
 *
 * RAS counts and bad pages are sysfs files readable by everyone. The bad-page threshold and the
 * CPER ring are debugfs files (`<sysfs root>/kernel/debug/dri/<PCI address or card minor>/`),
 * readable by root only: without privileges their calls fail with -EACCES, which is distinct
 * from "not provided by this GPU or kernel" (-ENODATA).
 *
 * Counts belong to the physical GPU (its PCI function), whatever the compute partition mode;
 * events come per KFD node, i.e. per compute partition.
 */
#pragma once

#if !defined(__AMDSMI_H_INSIDE__)
#error "Only <amdsmi/amdsmi.h> can be included directly."
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct amdsmi_gpu;
struct amdsmi_partition;

/* ---- RAS error counts ------------------------------------------------------------------ */

/**
 * The kernel's RAS blocks. Values UMC .. JPEG are also the bit numbers of the block in the
 * `ras/features` mask; the MCA sub-blocks have no feature bit of their own.
 */
enum amdsmi_ras_block {
        AMDSMI_RAS_BLOCK_UMC = 0,    /**< "umc": the memory controller (VRAM ECC) */
        AMDSMI_RAS_BLOCK_SDMA,       /**< "sdma" */
        AMDSMI_RAS_BLOCK_GFX,        /**< "gfx" */
        AMDSMI_RAS_BLOCK_MMHUB,      /**< "mmhub" */
        AMDSMI_RAS_BLOCK_ATHUB,      /**< "athub" */
        AMDSMI_RAS_BLOCK_PCIE_BIF,   /**< "pcie_bif" */
        AMDSMI_RAS_BLOCK_HDP,        /**< "hdp" */
        AMDSMI_RAS_BLOCK_XGMI_WAFL,  /**< "xgmi_wafl": the XGMI links */
        AMDSMI_RAS_BLOCK_DF,         /**< "df" */
        AMDSMI_RAS_BLOCK_SMN,        /**< "smn" */
        AMDSMI_RAS_BLOCK_SEM,        /**< "sem" */
        AMDSMI_RAS_BLOCK_MP0,        /**< "mp0" */
        AMDSMI_RAS_BLOCK_MP1,        /**< "mp1" */
        AMDSMI_RAS_BLOCK_FUSE,       /**< "fuse" */
        AMDSMI_RAS_BLOCK_MCA,        /**< "mca" */
        AMDSMI_RAS_BLOCK_VCN,        /**< "vcn" */
        AMDSMI_RAS_BLOCK_JPEG,       /**< "jpeg" */
        AMDSMI_RAS_BLOCK_MCA_MP0,    /**< "mca_mp0" */
        AMDSMI_RAS_BLOCK_MCA_MP1,    /**< "mca_mp1" */
        AMDSMI_RAS_BLOCK_MCA_MPIO,   /**< "mca_mpio" */
        AMDSMI_RAS_BLOCK_MCA_IOHC,   /**< "mca_iohc" */
        _AMDSMI_RAS_BLOCK_MAX,
};

/** "umc", "sdma", ... (the kernel's names); "unknown" for out-of-range values. @since 0.2 */
const char *amdsmi_ras_block_to_string(enum amdsmi_ras_block block);
/** The block of a kernel name (exact, lower case). @return 0 or -EINVAL. @since 0.2 */
int amdsmi_ras_block_from_string(const char *s, enum amdsmi_ras_block *ret_block)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/** Which file a block's counts came from. */
enum amdsmi_ras_source {
        AMDSMI_RAS_SOURCE_NONE = 0, /**< "none": no file for this block */
        AMDSMI_RAS_SOURCE_ACA,      /**< "aca": ras/aca_<block> (MI300 and later) */
        AMDSMI_RAS_SOURCE_LEGACY,   /**< "legacy": ras/<block>_err_count */
        _AMDSMI_RAS_SOURCE_MAX,
};

/** "none", "aca", "legacy"; "unknown" for out-of-range values. @since 0.2 */
const char *amdsmi_ras_source_to_string(enum amdsmi_ras_source source);

/**
 * The counts of one RAS block. They are the driver's cumulative counts since it loaded (reading
 * does not reset them): compare two readings with amdsmi_ras_count_delta(), which says when a
 * count went backwards (the driver was reloaded).
 */
struct amdsmi_ras_count {
        enum amdsmi_ras_source source; /**< the file read (ACA when both exist) */
        int both_sources;              /**< 1: the legacy file exists too (ignored) */
        int error;    /**< 0: the counts are valid; -ENOENT: no file for this block;
                           -EBUSY: "Query currently inaccessible" (a reset or init: unknown,
                           never zero); -EBADMSG: garbage or truncated; another negative errno
                           of the read */
        uint64_t ue;  /**< uncorrectable errors */
        uint64_t ce;  /**< correctable errors */
        uint64_t de;  /**< deferred errors; AMDSMI_NA when the file has no "de:" line (legacy
                           files of blocks other than UMC, older kernels) */
};

/** What amdsmi_gpu_read_ras() fills. Set @c size to sizeof(struct amdsmi_ras_info). */
struct amdsmi_ras_info {
        size_t size;
        int features_error;     /**< 0, or the negative errno of reading ras/features */
        uint32_t features;      /**< the raw mask of ras/features */
        uint32_t enabled_blocks; /**< bit (1u << block) for each enabled block (UMC .. JPEG):
                                      bits 0..28 of the mask */
        unsigned socket_id;     /**< bits 31..29 of the mask */
        struct amdsmi_ras_count blocks[_AMDSMI_RAS_BLOCK_MAX]; /**< by enum amdsmi_ras_block */
};

/**
 * Reads the GPU's RAS state: ras/features and every block's counts (one directory listing,
 * then one read per file present: about 10 small reads on an MI300X).
 * Per-block failures are in the blocks (@c error), a block without a file has -ENOENT.
 * @return 0, -ENODATA if the GPU has no ras/ directory (RAS not supported or disabled),
 * -EACCES / another negative errno if the directory cannot be listed, -EINVAL if @c size is
 * too small.
 * @since 0.2
 */
int amdsmi_gpu_read_ras(struct amdsmi_gpu *gpu, struct amdsmi_ras_info *ret_info)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/**
 * Reads one block's counts (ras/aca_<block>, else ras/<block>_err_count): for a caller that
 * samples a single block cheaply.
 * @return 0 (with @c error of @p ret_count 0), -ENODATA if the GPU has no ras/ directory,
 * -ENOENT if this block has no file, -EBUSY ("Query currently inaccessible"), -EBADMSG
 * (garbage, the file named in the debug log), -EINVAL (unknown block), or a negative errno.
 * On failures other than -EINVAL and -ENODATA @p ret_count is filled too (@c error says why).
 * @since 0.2
 */
int amdsmi_gpu_read_ras_block(struct amdsmi_gpu *gpu, enum amdsmi_ras_block block,
                              struct amdsmi_ras_count *ret_count) AMDSMI_NONNULL(1, 3);

/**
 * The change of a cumulative count between two readings, @p before then @p after.
 * @return 0 with @p ret_delta = after - before; 1 when @p after < @p before: the counts were
 * reset (the driver was reloaded), @p ret_delta = after (what was counted since the reset, a
 * lower bound); -EINVAL when either is AMDSMI_NA. Never a negative delta.
 * @since 0.2
 */
int amdsmi_ras_count_delta(uint64_t before, uint64_t after, uint64_t *ret_delta)
        AMDSMI_NONNULL(3);

/* ---- retired (bad) VRAM pages ------------------------------------------------------------ */

/** The state of a retired page (the flag of ras/gpu_vram_bad_pages). */
enum amdsmi_bad_page_status {
        AMDSMI_BAD_PAGE_STATUS_UNKNOWN = 0,  /**< "unknown": a flag this library does not know */
        AMDSMI_BAD_PAGE_STATUS_RESERVED,     /**< "reserved" (R): retired, no longer used */
        AMDSMI_BAD_PAGE_STATUS_PENDING,      /**< "pending" (P): retirement pending */
        AMDSMI_BAD_PAGE_STATUS_UNRESERVABLE, /**< "unreservable" (F): could not be reserved */
        _AMDSMI_BAD_PAGE_STATUS_MAX,
};

/** "reserved", "pending", "unreservable", "unknown". @since 0.2 */
const char *amdsmi_bad_page_status_to_string(enum amdsmi_bad_page_status status);

/** One retired page. */
struct amdsmi_bad_page {
        uint64_t pfn;      /**< the GPU page frame number as the kernel prints it (4 KiB units) */
        uint64_t address;  /**< the byte address in VRAM: pfn << 12 */
        uint64_t size;     /**< the page size in bytes (4096) */
        enum amdsmi_bad_page_status status;
        char flag;         /**< the kernel's flag character ('R', 'P', 'F', ...) */
};

/**
 * Reads ras/gpu_vram_bad_pages: every retired page, in the kernel's order. Free the array with
 * free(). An empty file is no bad pages (0, *ret_pages NULL).
 * @return the number of pages, -ENODATA if the file is absent (page retirement disabled, or no
 * RAS), -EBADMSG if a record is not "0x%08x : 0x%08x : %c\n" (the file and record index in the
 * debug log), or a negative errno.
 * @since 0.2
 */
int amdsmi_gpu_read_bad_pages(struct amdsmi_gpu *gpu, struct amdsmi_bad_page **ret_pages)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/**
 * Reads the bad-page retirement threshold (debugfs `ras/bad_page_cnt_threshold`): reaching it
 * makes the GPU need replacement (RMA).
 * @return 0, -EACCES without the privileges debugfs needs (root), -ENODATA if the GPU's debugfs
 * directory or the file is absent (debugfs not mounted, no RAS), -EBADMSG, or a negative errno.
 * @since 0.2
 */
int amdsmi_gpu_read_bad_page_threshold(struct amdsmi_gpu *gpu, uint32_t *ret_threshold)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/* ---- CPER records -------------------------------------------------------------------------- */

/** CPER error severities (the record header's error_severity). */
enum amdsmi_cper_severity {
        AMDSMI_CPER_SEVERITY_NON_FATAL_UNCORRECTED = 0, /**< "non_fatal_uncorrected" */
        AMDSMI_CPER_SEVERITY_FATAL = 1,                 /**< "fatal" */
        AMDSMI_CPER_SEVERITY_NON_FATAL_CORRECTED = 2,   /**< "non_fatal_corrected" */
        _AMDSMI_CPER_SEVERITY_MAX,
};

/** The names above; "unknown" for other values. @since 0.2 */
const char *amdsmi_cper_severity_to_string(uint32_t severity);

/** The notification type of a record (a GUID in the header). */
enum amdsmi_cper_notify {
        AMDSMI_CPER_NOTIFY_OTHER = 0, /**< "other": see @c notify_guid */
        AMDSMI_CPER_NOTIFY_MCE,       /**< "mce": fatal, uncorrected, bad-page threshold */
        AMDSMI_CPER_NOTIFY_CMC,       /**< "cmc": corrected */
        AMDSMI_CPER_NOTIFY_BOOT,      /**< "boot": a boot error */
        _AMDSMI_CPER_NOTIFY_MAX,
};

/** "other", "mce", "cmc", "boot". @since 0.2 */
const char *amdsmi_cper_notify_to_string(enum amdsmi_cper_notify notify);

/** The type of a record's section (a GUID in its descriptor). */
enum amdsmi_cper_section_type {
        AMDSMI_CPER_SECTION_OTHER = 0,   /**< "other": see @c type_guid */
        AMDSMI_CPER_SECTION_CRASHDUMP,   /**< "crashdump": AMD crash dump (fatal) */
        AMDSMI_CPER_SECTION_NONSTANDARD, /**< "nonstandard": AMD GPU non-standard error */
        _AMDSMI_CPER_SECTION_MAX,
};

/** "other", "crashdump", "nonstandard". @since 0.2 */
const char *amdsmi_cper_section_type_to_string(enum amdsmi_cper_section_type type);

/** One section descriptor of a record. */
struct amdsmi_cper_section {
        enum amdsmi_cper_section_type type;
        char type_guid[37];   /**< the GUID as text, lower case */
        uint32_t severity;    /**< the section's severity (enum amdsmi_cper_severity values) */
        uint32_t offset;      /**< from the start of the record */
        uint32_t length;      /**< bytes; offset + length lies within the record */
        uint32_t flags;       /**< bit 0 primary, bit 3 error threshold exceeded, bit 4 latent */
        char fru_text[21];    /**< e.g. "OAM0" (printable ASCII only) */
};

/** One decoded CPER record. */
struct amdsmi_cper_record {
        uint16_t revision;
        uint32_t severity;        /**< enum amdsmi_cper_severity values, or another number */
        uint32_t valid_bits;
        int64_t timestamp;        /**< seconds since the epoch (UTC); -1 if not valid */
        char platform_id[17];     /**< e.g. "0x1002:0x74A1" (printable ASCII only) */
        char creator_id[17];
        char record_id[9];        /**< "<socket>:<counter in hex>" */
        uint64_t sequence;        /**< the counter of the record id; AMDSMI_NA if unparsable */
        enum amdsmi_cper_notify notify;
        char notify_guid[37];
        uint32_t n_sections;      /**< the descriptors decoded (those within the record) */
        struct amdsmi_cper_section *sections;
        uint32_t length;          /**< record_length: the bytes of @c raw */
        const uint8_t *raw;       /**< the whole record, as a .cper file holds it */
};

/**
 * Where a follower of the CPER ring stands. Zero it (or use AMDSMI_CPER_CURSOR_INIT) to start
 * at the oldest record held; amdsmi_gpu_read_cper() advances it. Its fields are the library's.
 */
struct amdsmi_cper_cursor {
        uint64_t last_sequence; /**< the counter of the last record returned */
        uint64_t last_hash;     /**< a hash of its bytes; 0: nothing returned yet */
        int64_t last_timestamp;
};

#define AMDSMI_CPER_CURSOR_INIT { 0, 0, 0 }

/** What amdsmi_gpu_read_cper() returns: free it with amdsmi_cper_batch_free(). */
struct amdsmi_cper_batch {
        size_t n_records;
        struct amdsmi_cper_record *records; /**< oldest first */
        uint64_t lost;     /**< records overwritten in the ring before they could be returned
                                (a gap in the record counters) */
        uint64_t skipped;  /**< damaged records skipped: a huge or short length, a record cut by
                                the ring's end, bytes that are no record */
        int reloaded;      /**< 1: the counters went back: the driver was reloaded since the
                                cursor's last record; every record held is returned */
};

/**
 * Reads the CPER ring (debugfs `amdgpu_ring_cper`, without consuming it) and returns the
 * records that follow @p cursor, then advances it past them. The file holds what is left of
 * the ring, oldest first; records are found by their "CPER" signature, a signature_end of
 * 0xFFFFFFFF and a record_length that fits.
 *
 * Guarantee: a follower that keeps its cursor never gets a record twice, and gets every record
 * still in the ring when it reads. A record is identified by its position after the cursor's
 * last record, and when that one was overwritten by its per-device counter (the "<socket>:<n>"
 * record id, increasing since the driver loaded). Limits: records overwritten before they are
 * read are lost and counted (@c lost); after a driver reload the counters start again, which is
 * seen (@c reloaded) only while the new counters are still below the old, or from the record
 * timestamps (second resolution).
 * @p cursor may be NULL: every record held is returned.
 * @return 0, -EACCES without root, -ENODATA if the GPU has no CPER ring (its debugfs directory
 * or the file is absent: an older kernel, CPER not enabled), -EFBIG if the file exceeds 16 MiB,
 * or a negative errno. Damaged records are skipped and counted, never an error.
 * @since 0.2
 */
int amdsmi_gpu_read_cper(struct amdsmi_gpu *gpu, struct amdsmi_cper_cursor *cursor,
                         struct amdsmi_cper_batch **ret_batch) AMDSMI_WARN_UNUSED
        AMDSMI_NONNULL(1, 3);

/**
 * Decodes CPER records from a buffer as amdgpu_ring_cper reads (a 12-byte header of ring
 * pointers, then the ring's bytes) or, with @p ring_header 0, from a .cper file (one record or
 * several, back to back), following @p cursor as amdsmi_gpu_read_cper() does (NULL: all).
 * @return 0 or -ENOMEM; damaged records are skipped and counted.
 * @since 0.2
 */
int amdsmi_cper_decode(const void *data, size_t size, int ring_header,
                       struct amdsmi_cper_cursor *cursor, struct amdsmi_cper_batch **ret_batch)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(5);

/** Frees a batch and its records; accepts NULL; returns NULL. @since 0.2 */
struct amdsmi_cper_batch *amdsmi_cper_batch_free(struct amdsmi_cper_batch *batch);

/* ---- KFD SMI events -------------------------------------------------------------------------- */

/** The KFD SMI event kinds: the kernel's event ids. */
enum amdsmi_event_kind {
        AMDSMI_EVENT_UNKNOWN = 0,           /**< "unknown": an id this library does not know,
                                                 or a line it cannot read (see @c text) */
        AMDSMI_EVENT_VMFAULT = 1,           /**< "vm_fault" */
        AMDSMI_EVENT_THERMAL_THROTTLE = 2,  /**< "thermal_throttle" */
        AMDSMI_EVENT_GPU_PRE_RESET = 3,     /**< "gpu_pre_reset" */
        AMDSMI_EVENT_GPU_POST_RESET = 4,    /**< "gpu_post_reset" */
        AMDSMI_EVENT_MIGRATE_START = 5,     /**< "migrate_start" */
        AMDSMI_EVENT_MIGRATE_END = 6,       /**< "migrate_end" */
        AMDSMI_EVENT_PAGE_FAULT_START = 7,  /**< "page_fault_start" */
        AMDSMI_EVENT_PAGE_FAULT_END = 8,    /**< "page_fault_end" */
        AMDSMI_EVENT_QUEUE_EVICTION = 9,    /**< "queue_eviction" */
        AMDSMI_EVENT_QUEUE_RESTORE = 10,    /**< "queue_restore" */
        AMDSMI_EVENT_UNMAP_FROM_GPU = 11,   /**< "unmap_from_gpu" */
        AMDSMI_EVENT_PROCESS_START = 12,    /**< "process_start" */
        AMDSMI_EVENT_PROCESS_END = 13,      /**< "process_end" */
        _AMDSMI_EVENT_KIND_MAX,
};

/** The subscription bit of a kind (1 .. 63), as the kernel numbers them. */
#define AMDSMI_EVENT_MASK(kind) (UINT64_C(1) << ((unsigned) (kind) - 1))
/** Events of all processes, not only the caller's (needs CAP_SYS_ADMIN on older kernels). */
#define AMDSMI_EVENT_MASK_ALL_PROCESSES (UINT64_C(1) << 63)
/** The kinds a health monitor wants: VM fault, thermal throttle, pre and post reset. */
#define AMDSMI_EVENT_MASK_HEALTH                                                               \
        (AMDSMI_EVENT_MASK(AMDSMI_EVENT_VMFAULT) | AMDSMI_EVENT_MASK(AMDSMI_EVENT_THERMAL_THROTTLE) | \
         AMDSMI_EVENT_MASK(AMDSMI_EVENT_GPU_PRE_RESET) |                                       \
         AMDSMI_EVENT_MASK(AMDSMI_EVENT_GPU_POST_RESET))

/** "vm_fault", "thermal_throttle", ...; "unknown" for other values. @since 0.2 */
const char *amdsmi_event_kind_to_string(enum amdsmi_event_kind kind);
/** The kind of a name above. @return 0 or -EINVAL. @since 0.2 */
int amdsmi_event_kind_from_string(const char *s, enum amdsmi_event_kind *ret_kind)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/** The longest event line kept (the kernel's messages are at most 96 bytes). */
#define AMDSMI_EVENT_TEXT_MAX 128

/** One decoded event. Fields of other kinds than @c kind are zero. */
struct amdsmi_event {
        enum amdsmi_event_kind kind;
        unsigned id;              /**< the kernel's event id (also for unknown kinds; 0 if the
                                       line had none) */
        uint32_t kfd_gpu_id;      /**< the KFD node the event came from (set by the reader) */
        int partition;            /**< its partition index within the GPU, -1 if not known */
        char text[AMDSMI_EVENT_TEXT_MAX]; /**< the line as read, without its newline */
        union {
                struct {
                        uint32_t seq;     /**< the reset's sequence number */
                        char cause[64];   /**< "job hang", "RAS error", ...; "" on old kernels */
                } reset;                  /**< GPU_PRE_RESET, GPU_POST_RESET */
                struct {
                        uint64_t mask;    /**< the throttle status bits */
                        uint64_t counter; /**< the SMU's throttle interrupt counter */
                } throttle;               /**< THERMAL_THROTTLE */
                struct {
                        uint32_t pid;
                        char task[32];
                } vmfault;                /**< VMFAULT */
                struct {
                        uint32_t pid;
                        char comm[32];
                } process;                /**< PROCESS_START, PROCESS_END */
                struct {
                        uint64_t ns;      /**< CLOCK_BOOTTIME nanoseconds */
                        uint32_t pid;
                        uint64_t address; /**< in pages */
                        uint64_t pages;
                        uint32_t from, to; /**< KFD gpu_ids, 0 = system memory */
                        uint32_t prefetch_loc, preferred_loc; /**< start only */
                        int trigger;
                        int result;       /**< end only */
                } migrate;                /**< MIGRATE_START, MIGRATE_END */
                struct {
                        uint64_t ns;
                        uint32_t pid;
                        uint64_t address; /**< in pages */
                        uint32_t node;    /**< KFD gpu_id */
                        char kind;        /**< start: 'R' / 'W'; end: 'M' migrated / 'U' updated */
                } page_fault;             /**< PAGE_FAULT_START, PAGE_FAULT_END */
                struct {
                        uint64_t ns;
                        uint32_t pid;
                        uint32_t node;
                        int trigger;      /**< eviction only */
                        char rescheduled; /**< restore only: 'R', or 0 */
                } queue;                  /**< QUEUE_EVICTION, QUEUE_RESTORE */
                struct {
                        uint64_t ns;
                        uint32_t pid;
                        uint64_t address; /**< in pages */
                        uint64_t pages;
                        uint32_t node;
                        int trigger;
                } unmap;                  /**< UNMAP_FROM_GPU */
        } u;
};

/**
 * Decodes one event line ("<id in hex> <payload>", with or without its newline) as the
 * kernel's KFD_EVENT_FMT_* formats write them. An id this library does not know decodes as
 * AMDSMI_EVENT_UNKNOWN with @c id and @c text.
 * @return 0, or -EBADMSG when the line has no id or a known kind's payload does not follow
 * its format (@p ret_event untouched).
 * @since 0.2
 */
int amdsmi_event_parse(const char *line, size_t len, struct amdsmi_event *ret_event)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(3);

/** A subscription to the KFD SMI events of one KFD node (a partition). */
struct amdsmi_events;

/**
 * Subscribes to the SMI events of a partition's KFD node: opens `<dev root>/kfd`, checks the
 * KFD interface version (1.3 or later), asks for the event fd (AMDKFD_IOC_SMI_EVENTS with the
 * node's gpu_id) and writes @p mask (AMDSMI_EVENT_MASK() bits). Holding the subscription makes
 * the caller a KFD user of the GPU: close it before a partition change.
 * @return 0, -ENODEV if the context has no device root, -ENOENT if there is no kfd node,
 * -EACCES if it cannot be opened, -EOPNOTSUPP if the KFD is older than 1.3 or has no SMI
 * events, -ESTALE if @p part is stale, -EINVAL for an empty mask, or a negative errno.
 * @since 0.2
 */
int amdsmi_partition_open_events(struct amdsmi_partition *part, uint64_t mask,
                                 struct amdsmi_events **ret_events) AMDSMI_WARN_UNUSED
        AMDSMI_NONNULL(1, 3);

/** The fd to poll (POLLIN) for events; owned by the subscription. @since 0.2 */
int amdsmi_events_get_fd(struct amdsmi_events *events) AMDSMI_NONNULL(1);

/** The KFD gpu_id of the subscription's node. @since 0.2 */
uint32_t amdsmi_events_get_kfd_gpu_id(struct amdsmi_events *events) AMDSMI_NONNULL(1);

/** Changes the subscribed kinds. @return 0, -EINVAL (empty mask) or a negative errno. @since 0.2 */
int amdsmi_events_set_mask(struct amdsmi_events *events, uint64_t mask) AMDSMI_NONNULL(1);

/**
 * Reads what is available without blocking and decodes up to @p max whole lines into
 * @p ret_events; a line cut across reads is kept for the next call, lines not returned yet stay
 * queued (call again until it returns 0). A line that cannot be decoded is returned as
 * AMDSMI_EVENT_UNKNOWN with its text.
 * @return the number of events (0: none available now), -ENODEV if the node went away
 * (the fd reported an error or end of file), or a negative errno.
 * @since 0.2
 */
int amdsmi_events_read(struct amdsmi_events *events, struct amdsmi_event *ret_events, size_t max)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/** Closes the subscription and its fds; accepts NULL; returns NULL. @since 0.2 */
struct amdsmi_events *amdsmi_events_close(struct amdsmi_events *events);

#ifdef __cplusplus
}
#endif
