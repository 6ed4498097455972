/* SPDX-License-Identifier: MIT */
/*
 * KFD SMI events (spec health-and-control §7.1): /dev/kfd, AMDKFD_IOC_GET_VERSION (1.3 or
 * later), AMDKFD_IOC_SMI_EVENTS for one KFD gpu_id (a partition's node), the u64 mask written
 * to the event fd, and the text it yields: one event per line, "<id in hex> <payload>\n", the
 * payload as the kernel's KFD_EVENT_FMT_* formats print it. The kernel's read() returns
 * -EAGAIN when its fifo is empty and may cut a line when the buffer is short, so the reader
 * keeps the bytes of an unfinished line for the next read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "health-private.h"
#include "parse-util.h"
#include "private.h"

#define EVENTS_BUF 4096

struct amdsmi_events {
        int kfd_fd; /* /dev/kfd, held while subscribed (-1 in tests) */
        int fd;     /* the event fd */
        uint32_t kfd_gpu_id;
        int partition;
        size_t used; /* bytes of buf not returned yet */
        char buf[EVENTS_BUF];
};

static const char *const kind_names[_AMDSMI_EVENT_KIND_MAX] = {
        [AMDSMI_EVENT_UNKNOWN] = "unknown",
        [AMDSMI_EVENT_VMFAULT] = "vm_fault",
        [AMDSMI_EVENT_THERMAL_THROTTLE] = "thermal_throttle",
        [AMDSMI_EVENT_GPU_PRE_RESET] = "gpu_pre_reset",
        [AMDSMI_EVENT_GPU_POST_RESET] = "gpu_post_reset",
        [AMDSMI_EVENT_MIGRATE_START] = "migrate_start",
        [AMDSMI_EVENT_MIGRATE_END] = "migrate_end",
        [AMDSMI_EVENT_PAGE_FAULT_START] = "page_fault_start",
        [AMDSMI_EVENT_PAGE_FAULT_END] = "page_fault_end",
        [AMDSMI_EVENT_QUEUE_EVICTION] = "queue_eviction",
        [AMDSMI_EVENT_QUEUE_RESTORE] = "queue_restore",
        [AMDSMI_EVENT_UNMAP_FROM_GPU] = "unmap_from_gpu",
        [AMDSMI_EVENT_PROCESS_START] = "process_start",
        [AMDSMI_EVENT_PROCESS_END] = "process_end",
};

_public_ const char *amdsmi_event_kind_to_string(enum amdsmi_event_kind kind) {
        if ((unsigned) kind >= _AMDSMI_EVENT_KIND_MAX)
                return "unknown";
        return kind_names[kind];
}

_public_ int amdsmi_event_kind_from_string(const char *s, enum amdsmi_event_kind *ret_kind) {
        for (unsigned i = 1; i < _AMDSMI_EVENT_KIND_MAX; i++)
                if (strcmp(s, kind_names[i]) == 0) {
                        *ret_kind = (enum amdsmi_event_kind) i;
                        return 0;
                }
        return -EINVAL;
}

/* ---- the line decoder: a cursor over the payload, strict, every number bounded ----------- */

struct scan {
        const char *p, *end;
        bool bad;
};

static bool at_end(struct scan *s) {
        return s->p >= s->end;
}

static void expect(struct scan *s, char c) {
        if (s->bad || at_end(s) || *s->p != c)
                s->bad = true;
        else
                s->p++;
}

/* An unsigned number in base 10 or 16, at least one digit, at most max. */
static uint64_t number(struct scan *s, unsigned base, uint64_t max) {
        uint64_t v = 0;
        int digits = 0;

        if (s->bad)
                return 0;
        while (!at_end(s)) {
                int d = unhexchar(*s->p);

                if (d < 0 || (unsigned) d >= base)
                        break;
                if (v > (max - (uint64_t) d) / base) {
                        s->bad = true;
                        return 0;
                }
                v = v * base + (uint64_t) d;
                digits++;
                s->p++;
        }
        if (digits == 0)
                s->bad = true;
        return v;
}

/* A "%d" that may be negative (triggers, results). */
static int snumber(struct scan *s) {
        bool neg = !at_end(s) && *s->p == '-';

        int64_t v;

        if (neg)
                s->p++;
        v = (int64_t) number(s, 10, (uint64_t) INT32_MAX + neg);
        return (int) (neg ? -v : v);
}

/* One character of a set (R/W, M/U). */
static char one_of(struct scan *s, const char *set) {
        char c;

        if (s->bad || at_end(s) || !strchr(set, *s->p) || !*s->p) {
                s->bad = true;
                return 0;
        }
        c = *s->p++;
        return c;
}

/* The rest of the line as text (a task or command name, a reset cause). */
static void rest(struct scan *s, char *out, size_t size) {
        size_t n = (size_t) (s->end - s->p);

        if (s->bad)
                return;
        if (n >= size)
                n = size - 1;
        for (size_t i = 0; i < n; i++)
                out[i] = s->p[i] >= 0x20 && s->p[i] < 0x7f ? s->p[i] : '?';
        out[n] = '\0';
        s->p = s->end;
}

/* "%lld -%d " : boot-time ns and pid, the start of the SVM events. */
static void ns_pid(struct scan *s, uint64_t *ns, uint32_t *pid) {
        *ns = number(s, 10, INT64_MAX);
        expect(s, ' ');
        expect(s, '-');
        *pid = (uint32_t) number(s, 10, INT32_MAX);
}

/* "@%lx(%lx)" */
static void range(struct scan *s, uint64_t *addr, uint64_t *size) {
        expect(s, '@');
        *addr = number(s, 16, UINT64_MAX);
        expect(s, '(');
        *size = number(s, 16, UINT64_MAX);
        expect(s, ')');
}

_public_ int amdsmi_event_parse(const char *line, size_t len, struct amdsmi_event *ret_event) {
        struct amdsmi_event ev = { .partition = -1 };
        struct scan s;
        uint64_t id;

        if (!line)
                return -EBADMSG;
        if (len > 0 && line[len - 1] == '\n')
                len--;
        if (memchr(line, '\n', len) || memchr(line, '\0', len))
                return -EBADMSG;
        s = (struct scan){ .p = line, .end = line + len };
        /* the text as read (cut at AMDSMI_EVENT_TEXT_MAX - 1) */
        {
                struct scan t = s;
                rest(&t, ev.text, sizeof(ev.text));
        }
        id = number(&s, 16, UINT32_MAX);
        if (s.bad)
                return -EBADMSG;
        ev.id = (unsigned) id;
        if (id == 0 || id >= _AMDSMI_EVENT_KIND_MAX) {
                ev.kind = AMDSMI_EVENT_UNKNOWN;
                *ret_event = ev;
                return 0;
        }
        ev.kind = (enum amdsmi_event_kind) id;
        expect(&s, ' ');

        switch (ev.kind) {
        case AMDSMI_EVENT_GPU_PRE_RESET:
        case AMDSMI_EVENT_GPU_POST_RESET:
                /* "%x %s" seq and cause; old kernels: "%x" */
                ev.u.reset.seq = (uint32_t) number(&s, 16, UINT32_MAX);
                if (!at_end(&s)) {
                        expect(&s, ' ');
                        rest(&s, ev.u.reset.cause, sizeof(ev.u.reset.cause));
                }
                break;
        case AMDSMI_EVENT_THERMAL_THROTTLE:
                /* "%llx:%llx" */
                ev.u.throttle.mask = number(&s, 16, UINT64_MAX);
                expect(&s, ':');
                ev.u.throttle.counter = number(&s, 16, UINT64_MAX);
                break;
        case AMDSMI_EVENT_VMFAULT:
                /* "%x:%s" */
                ev.u.vmfault.pid = (uint32_t) number(&s, 16, UINT32_MAX);
                expect(&s, ':');
                rest(&s, ev.u.vmfault.task, sizeof(ev.u.vmfault.task));
                break;
        case AMDSMI_EVENT_PROCESS_START:
        case AMDSMI_EVENT_PROCESS_END:
                /* "%x %s" */
                ev.u.process.pid = (uint32_t) number(&s, 16, UINT32_MAX);
                expect(&s, ' ');
                rest(&s, ev.u.process.comm, sizeof(ev.u.process.comm));
                break;
        case AMDSMI_EVENT_PAGE_FAULT_START:
        case AMDSMI_EVENT_PAGE_FAULT_END:
                /* "%lld -%d @%lx(%x) %c" */
                ns_pid(&s, &ev.u.page_fault.ns, &ev.u.page_fault.pid);
                expect(&s, ' ');
                expect(&s, '@');
                ev.u.page_fault.address = number(&s, 16, UINT64_MAX);
                expect(&s, '(');
                ev.u.page_fault.node = (uint32_t) number(&s, 16, UINT32_MAX);
                expect(&s, ')');
                expect(&s, ' ');
                ev.u.page_fault.kind =
                        one_of(&s, ev.kind == AMDSMI_EVENT_PAGE_FAULT_START ? "RW" : "MU");
                break;
        case AMDSMI_EVENT_MIGRATE_START:
        case AMDSMI_EVENT_MIGRATE_END:
                /* start "%lld -%d @%lx(%lx) %x->%x %x:%x %d", end "... %x->%x %d %d" */
                ns_pid(&s, &ev.u.migrate.ns, &ev.u.migrate.pid);
                expect(&s, ' ');
                range(&s, &ev.u.migrate.address, &ev.u.migrate.pages);
                expect(&s, ' ');
                ev.u.migrate.from = (uint32_t) number(&s, 16, UINT32_MAX);
                expect(&s, '-');
                expect(&s, '>');
                ev.u.migrate.to = (uint32_t) number(&s, 16, UINT32_MAX);
                expect(&s, ' ');
                if (ev.kind == AMDSMI_EVENT_MIGRATE_START) {
                        ev.u.migrate.prefetch_loc = (uint32_t) number(&s, 16, UINT32_MAX);
                        expect(&s, ':');
                        ev.u.migrate.preferred_loc = (uint32_t) number(&s, 16, UINT32_MAX);
                        expect(&s, ' ');
                        ev.u.migrate.trigger = snumber(&s);
                } else {
                        ev.u.migrate.trigger = snumber(&s);
                        expect(&s, ' ');
                        ev.u.migrate.result = snumber(&s);
                }
                break;
        case AMDSMI_EVENT_QUEUE_EVICTION:
        case AMDSMI_EVENT_QUEUE_RESTORE:
                /* eviction "%lld -%d %x %d"; restore "%lld -%d %x %c" or "%lld -%d %x" */
                ns_pid(&s, &ev.u.queue.ns, &ev.u.queue.pid);
                expect(&s, ' ');
                ev.u.queue.node = (uint32_t) number(&s, 16, UINT32_MAX);
                if (ev.kind == AMDSMI_EVENT_QUEUE_EVICTION) {
                        expect(&s, ' ');
                        ev.u.queue.trigger = snumber(&s);
                } else if (!at_end(&s)) {
                        expect(&s, ' ');
                        ev.u.queue.rescheduled = one_of(&s, "R");
                }
                break;
        case AMDSMI_EVENT_UNMAP_FROM_GPU:
                /* "%lld -%d @%lx(%lx) %x %d" */
                ns_pid(&s, &ev.u.unmap.ns, &ev.u.unmap.pid);
                expect(&s, ' ');
                range(&s, &ev.u.unmap.address, &ev.u.unmap.pages);
                expect(&s, ' ');
                ev.u.unmap.node = (uint32_t) number(&s, 16, UINT32_MAX);
                expect(&s, ' ');
                ev.u.unmap.trigger = snumber(&s);
                break;
        default:
                break;
        }
        if (s.bad || !at_end(&s))
                return -EBADMSG;
        *ret_event = ev;
        return 0;
}

/* ---- the subscription ---------------------------------------------------------------------- */

int events_new_from_fd(int fd, uint32_t kfd_gpu_id, int partition, struct amdsmi_events **ret) {
        struct amdsmi_events *ev;
        int flags;

        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                int r = -errno;
                (void) close(fd);
                return r;
        }
        ev = calloc(1, sizeof(*ev));
        if (!ev) {
                (void) close(fd);
                return -ENOMEM;
        }
        ev->kfd_fd = -1;
        ev->fd = fd;
        ev->kfd_gpu_id = kfd_gpu_id;
        ev->partition = partition;
        *ret = ev;
        return 0;
}

_public_ int amdsmi_events_set_mask(struct amdsmi_events *events, uint64_t mask) {
        ssize_t n;

        if (mask == 0)
                return -EINVAL;
        do
                n = write(events->fd, &mask, sizeof(mask));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return n == (ssize_t) sizeof(mask) ? 0 : -EIO;
}

_public_ int amdsmi_partition_open_events(struct amdsmi_partition *part, uint64_t mask,
                                          struct amdsmi_events **ret_events) {
        struct amdsmi_ctx *ctx = part->gpu->ctx;
        _cleanup_close_ int kfd = -1;
        struct amdsmi_events *ev = NULL;
        uint32_t major, minor;
        int fd, r;

        if (mask == 0)
                return -EINVAL;
        r = amdsmi_partition_check(part);
        if (r < 0)
                return r;
        kfd = kfd_open(ctx);
        if (kfd < 0)
                return kfd;
        r = kfd_get_version(ctx, kfd, &major, &minor);
        if (r == -ENOTTY || r == -EINVAL)
                return -EOPNOTSUPP;
        if (r < 0)
                return r;
        if (major != 1 || minor < 3) {
                log_debug(ctx, "kfd interface %u.%u: SMI events need 1.3 or later", major, minor);
                return -EOPNOTSUPP;
        }
        fd = kfd_smi_events_fd(ctx, kfd, part->kfd_gpu_id);
        if (fd == -ENOTTY || fd == -EINVAL)
                return fd == -EINVAL && part->kfd_gpu_id != 0 ? -ESTALE : -EOPNOTSUPP;
        if (fd < 0)
                return fd;
        r = events_new_from_fd(fd, part->kfd_gpu_id, (int) part->index, &ev);
        if (r < 0)
                return r;
        r = amdsmi_events_set_mask(ev, mask);
        if (r < 0) {
                log_debug(ctx, "kfd SMI events of gpu_id %u: writing the mask: %s",
                          (unsigned) part->kfd_gpu_id, strerror(-r));
                amdsmi_events_close(ev);
                return r;
        }
        ev->kfd_fd = TAKE_FD(kfd);
        *ret_events = ev;
        return 0;
}

_public_ int amdsmi_events_get_fd(struct amdsmi_events *events) {
        return events->fd;
}

_public_ uint32_t amdsmi_events_get_kfd_gpu_id(struct amdsmi_events *events) {
        return events->kfd_gpu_id;
}

/* Decodes the line of n bytes at the start of buf (without its newline) into *out. */
static void decode_line(struct amdsmi_events *events, const char *line, size_t n,
                        struct amdsmi_event *out) {
        if (amdsmi_event_parse(line, n, out) < 0) {
                /* kept, not lost: the raw text under the unknown kind */
                struct scan s = { .p = line, .end = line + n };

                *out = (struct amdsmi_event){ .kind = AMDSMI_EVENT_UNKNOWN };
                rest(&s, out->text, sizeof(out->text));
                s = (struct scan){ .p = line, .end = line + n };
                out->id = (unsigned) number(&s, 16, UINT32_MAX);
                if (s.bad)
                        out->id = 0;
        }
        out->kfd_gpu_id = events->kfd_gpu_id;
        out->partition = events->partition;
}

_public_ int amdsmi_events_read(struct amdsmi_events *events, struct amdsmi_event *ret_events,
                                size_t max) {
        size_t count = 0;
        bool drained = false;

        while (count < max) {
                char *nl = memchr(events->buf, '\n', events->used);
                ssize_t n;

                if (nl) {
                        size_t len = (size_t) (nl - events->buf);

                        decode_line(events, events->buf, len, &ret_events[count++]);
                        memmove(events->buf, nl + 1, events->used - len - 1);
                        events->used -= len + 1;
                        continue;
                }
                if (events->used == sizeof(events->buf)) {
                        /* a "line" longer than any event: return it cut, drop the rest */
                        decode_line(events, events->buf, sizeof(events->buf), &ret_events[count++]);
                        events->used = 0;
                        continue;
                }
                if (drained)
                        break;
                do
                        n = read(events->fd, events->buf + events->used,
                                 sizeof(events->buf) - events->used);
                while (n < 0 && errno == EINTR);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EWOULDBLOCK) {
                                drained = true;
                                continue;
                        }
                        if (count > 0)
                                break;
                        return errno == EIO || errno == ENODEV ? -ENODEV : -errno;
                }
                if (n == 0) {
                        if (count > 0)
                                break;
                        return -ENODEV; /* the node went away */
                }
                events->used += (size_t) n;
        }
        return (int) count;
}

_public_ struct amdsmi_events *amdsmi_events_close(struct amdsmi_events *events) {
        if (!events)
                return NULL;
        if (events->fd >= 0)
                (void) close(events->fd);
        if (events->kfd_fd >= 0)
                (void) close(events->kfd_fd);
        free(events);
        return NULL;
}
