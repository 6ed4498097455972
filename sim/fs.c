/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim engine: the node tree and its libfuse3 low-level server (see fs.h).
 *
 * Inode numbers are node addresses (the root is FUSE_ROOT_ID); a node is freed only once the
 * kernel forgot it and no file handle refers to it, so an inode number never names freed
 * memory. Every file is opened with direct_io, so each read(2) and write(2) reaches a handler:
 * reads render the attribute at offset 0 and serve later offsets from that rendering (what
 * sysfs' seq_file does), writes are one store each, cut to one page.
 */
#define FUSE_USE_VERSION 314

#include <dirent.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>

#include "fs.h"
#include "util.h"

/* How long the kernel may cache names and attributes. Changes to the tree invalidate what the
 * kernel holds explicitly, so this may be long. */
#define SIM_CACHE_TIMEOUT 86400.0

enum {
        NODE_DIR,
        NODE_FILE,
        NODE_LINK
};

struct sim_node {
        struct sim_fs *fs;
        struct sim_node *parent;      /* NULL for the root and for removed nodes */
        struct sim_node *prev, *next; /* siblings in creation order */
        struct sim_node *hnext;       /* hash chain of the parent */
        char *name;
        uint32_t hash;
        uint8_t type;
        bool dead;
        unsigned mode;
        uint64_t nlookup; /* the kernel's references */
        unsigned opens;   /* our file handles */
        uint64_t generation;
        union {
                struct {
                        struct sim_node *first, *last;
                        struct sim_node **buckets;
                        size_t n_buckets, n_children, n_subdirs;
                } dir;
                struct {
                        const struct sim_attr_ops *ops;
                        void *obj;
                        intptr_t arg;
                        void *data; /* fixed contents, when ops is NULL */
                        size_t len;
                } file;
                struct {
                        char *target;
                } link;
        };
};

/* What the notifier sends, in order: invalidations, and the replies of the writes that
 * made them. */
struct inval {
        uint64_t ino;
        char *name;     /* NULL: the inode's attributes, else the entry @name in @ino */
        fuse_req_t req; /* a deferred reply instead: @result bytes or -errno */
        int result;
        bool read; /* a read's reply: @data, @result bytes (else a write's) */
        char *data;
};

/* A read that waits (SIM_SHOW_LATER) without holding a worker: run again at sim_fs_wake(). */
struct parked_read {
        fuse_req_t req;
        struct open_file *h;
        size_t size;
        off_t off;
};

struct sim_fs {
        pthread_mutex_t lock;
        struct sim_node *root;
        int error;
        size_t n_nodes;
        uint64_t generation;
        time_t mtime;

        struct inval *inval; /* queued while the lock is held */
        size_t n_inval, cap_inval;

        /* The notifier thread sends the invalidations, then the replies of the writes. */
        pthread_t notifier;
        bool notifier_running, notifier_stop;
        pthread_cond_t work;
        struct inval *pending; /* handed over, not sent yet */
        size_t n_pending, cap_pending;

        struct sim_node *dead; /* removed nodes the kernel still holds */

        /* batches handed to the notifier, and the last one it sent (sim_fs_unlock_sync()) */
        uint64_t handed_seq, sent_seq;
        pthread_cond_t sent;
        /* callbacks waiting (sim_fs_wait(), sim_fs_sleep()) */
        pthread_cond_t changed, timer;

        /* faults on paths (the control socket) */
        struct sim_fault *faults;
        size_t n_faults;

        struct parked_read *parked;
        size_t n_parked, cap_parked;

        /* open handles; the kernel does not release those still open when the connection
         * ends (an unmount, an abort): freed at sim_fs_unmount() */
        struct open_file *files;
        struct dir_handle *dirs;

        struct fuse_session *se;
        char *mountpoint;
        bool signals;
};

struct open_file {
        struct open_file *prev, *next; /* fs->files */
        struct sim_node *node;
        struct sim_caller caller;
        char *buf; /* the last rendering, SIM_PAGE_SIZE bytes */
        int len;
};

struct dir_entry {
        uint64_t ino;
        unsigned type;
        char *name;
};

struct dir_handle {
        struct dir_handle *prev, *next; /* fs->dirs */
        struct dir_entry *entries;
        size_t n;
};

/* A handle on a list of open handles (with the fs lock). */
#define LIST_LINK(head, x)                  \
        do {                                \
                (x)->prev = NULL;           \
                (x)->next = (head);         \
                if (head)                   \
                        (head)->prev = (x); \
                (head) = (x);               \
        } while (0)
#define LIST_UNLINK(head, x)                         \
        do {                                         \
                if ((x)->prev)                       \
                        (x)->prev->next = (x)->next; \
                else                                 \
                        (head) = (x)->next;          \
                if ((x)->next)                       \
                        (x)->next->prev = (x)->prev; \
                (x)->prev = (x)->next = NULL;        \
        } while (0)

/* ---------------------------------------------------------------------------------------- */
/* Nodes */

static uint32_t name_hash(const char *s) {
        uint32_t h = 2166136261u;

        for (; *s; s++)
                h = (h ^ (uint8_t) *s) * 16777619u;
        return h;
}

static void fs_fail(struct sim_fs *fs, int err) {
        if (fs && fs->error == 0)
                fs->error = err;
}

static uint64_t node_ino(const struct sim_node *n) {
        return n == n->fs->root ? FUSE_ROOT_ID : (uint64_t) (uintptr_t) n;
}

static bool node_known(const struct sim_node *n) {
        return n == n->fs->root || n->nlookup > 0;
}

static struct sim_node *node_new(struct sim_fs *fs, uint8_t type, const char *name, unsigned mode) {
        struct sim_node *n = calloc(1, sizeof(*n));

        if (!n || !(n->name = strdup(name))) {
                free(n);
                fs_fail(fs, -ENOMEM);
                return NULL;
        }
        n->fs = fs;
        n->type = type;
        n->mode = mode & 07777;
        n->hash = name_hash(name);
        n->generation = ++fs->generation;
        fs->n_nodes++;
        return n;
}

static void node_free(struct sim_node *n) {
        if (n->type == NODE_DIR)
                free(n->dir.buckets);
        else if (n->type == NODE_FILE)
                free(n->file.data);
        else
                free(n->link.target);
        n->fs->n_nodes--;
        free(n->name);
        free(n);
}

static void node_maybe_free(struct sim_node *n) {
        if (!n->dead || n->nlookup > 0 || n->opens > 0)
                return;
        /* off the list of dead nodes */
        if (n->prev)
                n->prev->next = n->next;
        else if (n->fs->dead == n)
                n->fs->dead = n->next;
        if (n->next)
                n->next->prev = n->prev;
        node_free(n);
}

/* Room for one more in the queue (not counted yet), NULL when out of memory. */
static struct inval *inval_slot(struct sim_fs *fs) {
        if (fs->n_inval == fs->cap_inval) {
                size_t cap = fs->cap_inval ? fs->cap_inval * 2 : 16;
                struct inval *iv = realloc(fs->inval, cap * sizeof(*iv));

                if (!iv)
                        return NULL;
                fs->inval = iv;
                fs->cap_inval = cap;
        }
        return &fs->inval[fs->n_inval];
}

static void queue_inval(struct sim_fs *fs, uint64_t ino, const char *name) {
        struct inval *iv;

        if (!fs->se)
                return;
        if (!name) /* an inode's attributes: once per batch is enough */
                for (size_t i = 0; i < fs->n_inval; i++)
                        if (!fs->inval[i].req && !fs->inval[i].name && fs->inval[i].ino == ino)
                                return;
        iv = inval_slot(fs);
        if (!iv)
                return; /* the kernel's cache times out eventually */
        *iv = (struct inval){ .ino = ino };
        if (name && !(iv->name = strdup(name)))
                return;
        fs->n_inval++;
}

/* A parked read's reply, sent after what was queued before it. */
static void queue_read_reply(struct sim_fs *fs, fuse_req_t req, int result, const char *data) {
        struct inval *iv = inval_slot(fs);
        char *copy = NULL;

        if (result > 0 && !(copy = malloc((size_t) result)))
                iv = NULL;
        if (!iv) {
                free(copy);
                fuse_reply_err(req, ENOMEM);
                return;
        }
        if (copy)
                memcpy(copy, data, (size_t) result);
        *iv = (struct inval){ .req = req, .result = result, .read = true, .data = copy };
        fs->n_inval++;
}

static int dir_grow(struct sim_node *d) {
        size_t nb = d->dir.n_buckets ? d->dir.n_buckets * 4 : 8;
        struct sim_node **b = calloc(nb, sizeof(*b));

        if (!b)
                return -ENOMEM;
        for (struct sim_node *c = d->dir.first; c; c = c->next) {
                c->hnext = b[c->hash & (nb - 1)];
                b[c->hash & (nb - 1)] = c;
        }
        free(d->dir.buckets);
        d->dir.buckets = b;
        d->dir.n_buckets = nb;
        return 0;
}

struct sim_node *sim_child(struct sim_node *dir, const char *name) {
        uint32_t h;

        if (!dir || dir->type != NODE_DIR || dir->dead || !dir->dir.n_buckets)
                return NULL;
        h = name_hash(name);
        for (struct sim_node *c = dir->dir.buckets[h & (dir->dir.n_buckets - 1)]; c; c = c->hnext)
                if (c->hash == h && streq(c->name, name))
                        return c;
        return NULL;
}

/* Hooks @n into @dir; frees @n and returns NULL on a duplicate name. */
static struct sim_node *dir_add(struct sim_node *dir, struct sim_node *n) {
        struct sim_node **b;

        if (!n)
                return NULL;
        if (sim_child(dir, n->name)) {
                fprintf(stderr, "amdsmi-sim: internal error: duplicate node %s\n", n->name);
                fs_fail(dir->fs, -EEXIST);
                node_free(n);
                return NULL;
        }
        if (dir->dir.n_children >= dir->dir.n_buckets && dir_grow(dir) < 0) {
                fs_fail(dir->fs, -ENOMEM);
                node_free(n);
                return NULL;
        }
        b = &dir->dir.buckets[n->hash & (dir->dir.n_buckets - 1)];
        n->hnext = *b;
        *b = n;
        n->parent = dir;
        n->prev = dir->dir.last;
        if (dir->dir.last)
                dir->dir.last->next = n;
        else
                dir->dir.first = n;
        dir->dir.last = n;
        dir->dir.n_children++;
        if (n->type == NODE_DIR) {
                dir->dir.n_subdirs++;
                if (node_known(dir))
                        queue_inval(dir->fs, node_ino(dir), NULL); /* its nlink changed */
        }
        return n;
}

static void node_unhook(struct sim_node *n, bool top) {
        struct sim_node *p = n->parent;

        if (p) {
                struct sim_node **pp = &p->dir.buckets[n->hash & (p->dir.n_buckets - 1)];

                if (top && n->nlookup > 0)
                        queue_inval(n->fs, node_ino(p), n->name);
                if (top && n->type == NODE_DIR && node_known(p))
                        queue_inval(n->fs, node_ino(p), NULL);
                while (*pp != n)
                        pp = &(*pp)->hnext;
                *pp = n->hnext;
                if (n->prev)
                        n->prev->next = n->next;
                else
                        p->dir.first = n->next;
                if (n->next)
                        n->next->prev = n->prev;
                else
                        p->dir.last = n->prev;
                p->dir.n_children--;
                if (n->type == NODE_DIR)
                        p->dir.n_subdirs--;
        }
        n->parent = n->prev = n->next = n->hnext = NULL;
        n->dead = true;
        if (n->type == NODE_DIR)
                while (n->dir.first)
                        node_unhook(n->dir.first, false);
        /* onto the list of dead nodes, freed when the kernel forgets them (or at the end) */
        n->next = n->fs->dead;
        if (n->next)
                n->next->prev = n;
        n->fs->dead = n;
        node_maybe_free(n);
}

void sim_remove(struct sim_node *n) {
        if (!n || n->dead || n == n->fs->root)
                return;
        node_unhook(n, true);
}

void sim_remove_children(struct sim_node *dir) {
        if (!dir || dir->type != NODE_DIR)
                return;
        while (dir->dir.first)
                sim_remove(dir->dir.first);
}

struct sim_node *sim_mkdir(struct sim_node *at, const char *path) {
        struct sim_node *cur = at;
        const char *p = path;

        while (cur && *p) {
                const char *slash = strchr(p, '/');
                size_t len = slash ? (size_t) (slash - p) : strlen(p);
                char name[256];
                struct sim_node *c;

                if (len == 0 || len >= sizeof(name)) {
                        fs_fail(at->fs, -EINVAL);
                        return NULL;
                }
                memcpy(name, p, len);
                name[len] = '\0';
                c = sim_child(cur, name);
                if (!c)
                        c = dir_add(cur, node_new(cur->fs, NODE_DIR, name, 0755));
                else if (c->type != NODE_DIR) {
                        fprintf(stderr, "amdsmi-sim: internal error: %s is not a directory\n",
                                name);
                        fs_fail(cur->fs, -ENOTDIR);
                        return NULL;
                }
                cur = c;
                p += len;
                if (*p == '/')
                        p++;
        }
        return cur;
}

void sim_set_mode(struct sim_node *n, unsigned mode) {
        if (n)
                n->mode = mode & 07777;
}

struct sim_node *sim_mkdirf(struct sim_node *at, const char *fmt, ...) {
        _cleanup_free_ char *path = NULL;
        va_list ap;
        int r;

        if (!at)
                return NULL;
        va_start(ap, fmt);
        r = vasprintf(&path, fmt, ap);
        va_end(ap);
        if (r < 0) {
                path = NULL;
                fs_fail(at->fs, -ENOMEM);
                return NULL;
        }
        return sim_mkdir(at, path);
}

struct sim_node *sim_attr(struct sim_node *dir, const char *name, unsigned mode,
                          const struct sim_attr_ops *ops, void *obj, intptr_t arg) {
        struct sim_node *n;

        if (!dir)
                return NULL;
        n = node_new(dir->fs, NODE_FILE, name, mode);
        if (!n)
                return NULL;
        n->file.ops = ops;
        n->file.obj = obj;
        n->file.arg = arg;
        return dir_add(dir, n);
}

struct sim_node *sim_raw(struct sim_node *dir, const char *name, unsigned mode, const void *data,
                         size_t len) {
        struct sim_node *n;

        if (!dir)
                return NULL;
        if (len > SIM_PAGE_SIZE) {
                fs_fail(dir->fs, -E2BIG);
                return NULL;
        }
        n = node_new(dir->fs, NODE_FILE, name, mode);
        if (!n)
                return NULL;
        if (len > 0) {
                n->file.data = malloc(len);
                if (!n->file.data) {
                        fs_fail(dir->fs, -ENOMEM);
                        node_free(n);
                        return NULL;
                }
                memcpy(n->file.data, data, len);
        }
        n->file.len = len;
        return dir_add(dir, n);
}

struct sim_node *sim_text(struct sim_node *dir, const char *name, unsigned mode, const char *fmt,
                          ...) {
        char buf[SIM_PAGE_SIZE];
        va_list ap;
        int r;

        if (!dir)
                return NULL;
        va_start(ap, fmt);
        r = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
        va_end(ap);
        if (r < 0 || (size_t) r >= sizeof(buf) - 1) {
                fs_fail(dir->fs, -E2BIG);
                return NULL;
        }
        buf[r++] = '\n';
        return sim_raw(dir, name, mode, buf, (size_t) r);
}

/* Splits @path at '/' into @comp (pointers into @copy); returns the count or -EINVAL. */
static int split_path(char *copy, char **comp, int max) {
        int n = 0;

        for (char *s = strtok(copy, "/"); s; s = strtok(NULL, "/")) {
                if (n == max)
                        return -EINVAL;
                comp[n++] = s;
        }
        return n;
}

struct sim_node *sim_link(struct sim_fs *fs, const char *link_path, const char *target_path) {
        _cleanup_free_ char *lcopy = strdup(link_path), *tcopy = strdup(target_path);
        char *lc[32], *tc[32], target[1024] = "";
        size_t tlen = 0;
        int nl, nt, common = 0;
        struct sim_node *dir, *n;

        if (!lcopy || !tcopy) {
                fs_fail(fs, -ENOMEM);
                return NULL;
        }
        nl = split_path(lcopy, lc, 32);
        nt = split_path(tcopy, tc, 32);
        if (nl < 1 || nt < 0) {
                fs_fail(fs, -EINVAL);
                return NULL;
        }
        /* the longest common prefix of the link's directory and the target's directory */
        while (common < nl - 1 && common < nt - 1 && streq(lc[common], tc[common]))
                common++;
        for (int i = common; i < nl - 1; i++)
                bprintf(target, sizeof(target), &tlen, "../");
        for (int i = common; i < nt; i++)
                bprintf(target, sizeof(target), &tlen, "%s%s", tc[i], i + 1 < nt ? "/" : "");
        if (tlen >= sizeof(target)) {
                fs_fail(fs, -ENAMETOOLONG);
                return NULL;
        }
        dir = fs->root;
        for (int i = 0; dir && i < nl - 1; i++)
                dir = sim_mkdir(dir, lc[i]);
        if (!dir)
                return NULL;
        n = node_new(fs, NODE_LINK, lc[nl - 1], 0777);
        if (!n)
                return NULL;
        n->link.target = strdup(target);
        if (!n->link.target) {
                fs_fail(fs, -ENOMEM);
                node_free(n);
                return NULL;
        }
        return dir_add(dir, n);
}

struct sim_node *sim_lookup(struct sim_fs *fs, const char *path) {
        struct sim_node *cur = fs->root;
        const char *p = path;

        while (cur && *p) {
                const char *slash = strchr(p, '/');
                size_t len = slash ? (size_t) (slash - p) : strlen(p);
                char name[256];

                if (len >= sizeof(name))
                        return NULL;
                memcpy(name, p, len);
                name[len] = '\0';
                if (len > 0)
                        cur = sim_child(cur, name);
                p += len;
                if (*p == '/')
                        p++;
        }
        return cur;
}

void *sim_node_obj(const struct sim_node *n) {
        return n->type == NODE_FILE ? n->file.obj : NULL;
}

intptr_t sim_node_arg(const struct sim_node *n) {
        return n->type == NODE_FILE ? n->file.arg : 0;
}

const char *sim_node_name(const struct sim_node *n) {
        return n->name;
}

struct sim_fs *sim_node_fs(const struct sim_node *n) {
        return n->fs;
}

size_t sim_fs_node_count(struct sim_fs *fs) {
        return fs->n_nodes;
}

struct sim_node *sim_fs_root(struct sim_fs *fs) {
        return fs->root;
}

int sim_fs_error(struct sim_fs *fs) {
        int r = fs->error;

        fs->error = 0;
        return r;
}

int sim_fs_new(struct sim_fs **ret) {
        struct sim_fs *fs = calloc(1, sizeof(*fs));

        if (!fs)
                return -ENOMEM;
        pthread_condattr_t ca;

        pthread_mutex_init(&fs->lock, NULL);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&fs->work, &ca);
        pthread_cond_init(&fs->sent, &ca);
        pthread_cond_init(&fs->changed, &ca);
        pthread_cond_init(&fs->timer, &ca);
        pthread_condattr_destroy(&ca);
        fs->mtime = time(NULL);
        fs->root = node_new(fs, NODE_DIR, "", 0755);
        if (!fs->root) {
                free(fs);
                return -ENOMEM;
        }
        *ret = fs;
        return 0;
}

static void free_tree(struct sim_node *n) {
        if (n->type == NODE_DIR) {
                struct sim_node *c = n->dir.first;

                while (c) {
                        struct sim_node *next = c->next;

                        free_tree(c);
                        c = next;
                }
        }
        node_free(n);
}

struct sim_fs *sim_fs_free(struct sim_fs *fs) {
        if (!fs)
                return NULL;
        free_tree(fs->root);
        while (fs->dead) {
                struct sim_node *n = fs->dead;

                fs->dead = n->next;
                node_free(n);
        }
        for (size_t i = 0; i < fs->n_inval; i++) {
                free(fs->inval[i].name);
                free(fs->inval[i].data);
        }
        free(fs->inval);
        for (size_t i = 0; i < fs->n_pending; i++) {
                free(fs->pending[i].name);
                free(fs->pending[i].data);
        }
        free(fs->pending);
        sim_fs_fault_clear(fs, NULL);
        free(fs->faults);
        free(fs->parked);
        pthread_cond_destroy(&fs->work);
        pthread_cond_destroy(&fs->sent);
        pthread_cond_destroy(&fs->changed);
        pthread_cond_destroy(&fs->timer);
        free(fs->mountpoint);
        pthread_mutex_destroy(&fs->lock);
        free(fs);
        return NULL;
}

void sim_fs_lock(struct sim_fs *fs) {
        pthread_mutex_lock(&fs->lock);
}

static void inval_free(struct inval *iv, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(iv[i].name);
                free(iv[i].data);
        }
        free(iv);
}

/* Sends one: a deferred reply, or an invalidation (never with the lock held: see below). */
static void inval_send(struct sim_fs *fs, const struct inval *iv) {
        if (iv->req && iv->result < 0)
                fuse_reply_err(iv->req, -iv->result);
        else if (iv->req && iv->read)
                fuse_reply_buf(iv->req, iv->data, (size_t) iv->result);
        else if (iv->req)
                fuse_reply_write(iv->req, (size_t) iv->result);
        else if (iv->name)
                (void) fuse_lowlevel_notify_inval_entry(fs->se, iv->ino, iv->name,
                                                        strlen(iv->name));
        else
                (void) fuse_lowlevel_notify_inval_inode(fs->se, iv->ino, -1, 0);
}

/* Without a notifier: replies go now, invalidations are dropped. */
static void inval_discard(struct sim_fs *fs) {
        for (size_t i = 0; i < fs->n_inval; i++)
                if (fs->inval[i].req)
                        inval_send(fs, &fs->inval[i]);
        inval_free(fs->inval, fs->n_inval);
        fs->inval = NULL;
        fs->n_inval = fs->cap_inval = 0;
}

/*
 * The kernel processes an invalidation with the directory's inode locked, and a lookup in
 * that directory may hold that lock while it waits for one of our workers. So workers never
 * send invalidations: the notifier thread does, and a write that changed the tree is answered
 * by the notifier too, after its invalidations, so that a reader that comes after the write
 * finds the new tree. The worker is free meanwhile.
 *
 * Hands what was queued under the lock to the notifier (with @req, a deferred write reply,
 * if not NULL); false if there is no notifier (nothing was mounted yet: nothing to tell) or
 * nothing to hand over.
 */
static bool hand_over(struct sim_fs *fs, fuse_req_t req, int result) {
        size_t need = fs->n_inval + (req ? 1 : 0);

        if (!fs->notifier_running || need == 0) {
                inval_discard(fs);
                return false;
        }
        if (fs->n_pending + need > fs->cap_pending) {
                size_t cap = fs->n_pending + need + 16;
                struct inval *p = realloc(fs->pending, cap * sizeof(*p));

                if (!p) {
                        /* the kernel's cache times out eventually */
                        inval_discard(fs);
                        return false;
                }
                fs->pending = p;
                fs->cap_pending = cap;
        }
        /* (nothing queued but a reply: fs->inval is NULL, and memcpy() wants a pointer) */
        if (fs->n_inval > 0)
                memcpy(fs->pending + fs->n_pending, fs->inval, fs->n_inval * sizeof(*fs->inval));
        fs->n_pending += fs->n_inval;
        if (req)
                fs->pending[fs->n_pending++] = (struct inval){ .req = req, .result = result };
        free(fs->inval);
        fs->inval = NULL;
        fs->n_inval = fs->cap_inval = 0;
        fs->handed_seq++;
        pthread_cond_signal(&fs->work);
        return true;
}

void sim_fs_unlock(struct sim_fs *fs) {
        if (fs->n_inval > 0)
                hand_over(fs, NULL, 0);
        pthread_mutex_unlock(&fs->lock);
}

static void *notifier_main(void *userdata) {
        struct sim_fs *fs = userdata;

        pthread_mutex_lock(&fs->lock);
        for (;;) {
                struct inval *iv;
                uint64_t seq;
                size_t n;

                while (fs->n_pending == 0 && !fs->notifier_stop)
                        pthread_cond_wait(&fs->work, &fs->lock);
                if (fs->n_pending == 0)
                        break;
                iv = fs->pending;
                n = fs->n_pending;
                seq = fs->handed_seq;
                fs->pending = NULL;
                fs->n_pending = fs->cap_pending = 0;
                pthread_mutex_unlock(&fs->lock);
                for (size_t i = 0; i < n; i++)
                        inval_send(fs, &iv[i]);
                inval_free(iv, n);
                pthread_mutex_lock(&fs->lock);
                fs->sent_seq = seq;
                pthread_cond_broadcast(&fs->sent);
        }
        fs->notifier_running = false;
        pthread_cond_broadcast(&fs->sent);
        pthread_mutex_unlock(&fs->lock);
        return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Waiting inside callbacks */

/* Set when the current request's callback waited: its write is answered through the notifier. */
static __thread bool request_waited;

static void wait_prepare(struct sim_fs *fs) {
        if (fs->n_inval > 0)
                hand_over(fs, NULL, 0);
        request_waited = true;
}

void sim_fs_wait(struct sim_fs *fs) {
        wait_prepare(fs);
        pthread_cond_wait(&fs->changed, &fs->lock);
}

void sim_fs_sleep(struct sim_fs *fs, unsigned ms) {
        struct timespec end;

        wait_prepare(fs);
        clock_gettime(CLOCK_MONOTONIC, &end);
        end.tv_sec += ms / 1000;
        end.tv_nsec += (long) (ms % 1000) * 1000000;
        if (end.tv_nsec >= 1000000000) {
                end.tv_sec++;
                end.tv_nsec -= 1000000000;
        }
        /* nobody signals the timer: only the deadline (or a spurious wakeup) ends a wait */
        while (pthread_cond_timedwait(&fs->timer, &fs->lock, &end) != ETIMEDOUT)
                ;
}

static void parked_run(struct sim_fs *fs);

void sim_fs_wake(struct sim_fs *fs) {
        pthread_cond_broadcast(&fs->changed);
        if (fs->n_parked > 0)
                parked_run(fs);
}

void sim_fs_unlock_sync(struct sim_fs *fs) {
        uint64_t target;

        if (fs->n_inval > 0)
                hand_over(fs, NULL, 0);
        target = fs->handed_seq;
        while (fs->notifier_running && fs->sent_seq < target)
                pthread_cond_wait(&fs->sent, &fs->lock);
        pthread_mutex_unlock(&fs->lock);
}

/* ---------------------------------------------------------------------------------------- */
/* Faults */

/* Resolves @path from @dir (the root for an absolute path), following every link. */
static int resolve_at(struct sim_fs *fs, struct sim_node *dir, const char *path, unsigned *hops,
                      struct sim_node **ret) {
        struct sim_node *cur = *path == '/' ? fs->root : dir;
        const char *p = path;

        while (*p) {
                const char *slash = strchr(p, '/');
                size_t len = slash ? (size_t) (slash - p) : strlen(p);
                char name[256];
                struct sim_node *c;
                int r;

                if (len >= sizeof(name))
                        return -ENAMETOOLONG;
                memcpy(name, p, len);
                name[len] = '\0';
                p += len;
                if (*p == '/')
                        p++;
                if (len == 0 || streq(name, "."))
                        continue;
                if (streq(name, "..")) {
                        if (cur->parent)
                                cur = cur->parent;
                        continue;
                }
                if (cur->type != NODE_DIR)
                        return -ENOTDIR;
                c = sim_child(cur, name);
                if (!c)
                        return -ENOENT;
                if (c->type == NODE_LINK) {
                        if (++*hops > 40)
                                return -ELOOP;
                        r = resolve_at(fs, cur, c->link.target, hops, &c);
                        if (r < 0)
                                return r;
                }
                cur = c;
        }
        *ret = cur;
        return 0;
}

/* "a/b/c" of a live node ("" for the root). */
static int node_path(const struct sim_node *n, char *buf, size_t size) {
        const struct sim_node *stack[128];
        size_t depth = 0, len = 0;

        for (; n != n->fs->root; n = n->parent) {
                if (n->dead || !n->parent)
                        return -ENOENT;
                if (depth == ELEMENTSOF(stack))
                        return -ENAMETOOLONG;
                stack[depth++] = n;
        }
        buf[0] = '\0';
        while (depth > 0)
                bprintf(buf, size, &len, "%s%s", len ? "/" : "", stack[--depth]->name);
        return len >= size ? -ENAMETOOLONG : 0;
}

int sim_fs_resolve(struct sim_fs *fs, const char *path, char **ret) {
        char buf[PATH_MAX];
        struct sim_node *n;
        unsigned hops = 0;
        int r;

        r = resolve_at(fs, fs->root, path, &hops, &n);
        if (r < 0)
                return r;
        r = node_path(n, buf, sizeof(buf));
        if (r < 0)
                return r;
        *ret = strdup(buf);
        return *ret ? 0 : -ENOMEM;
}

static void fault_remove(struct sim_fs *fs, size_t i) {
        free(fs->faults[i].path);
        memmove(fs->faults + i, fs->faults + i + 1, (fs->n_faults - i - 1) * sizeof(*fs->faults));
        fs->n_faults--;
}

int sim_fs_fault_add(struct sim_fs *fs, const struct sim_fault *f) {
        struct sim_fault *v;
        char *path;

        if (!f->path || f->kind < 0 || f->kind >= _SIM_FAULT_KIND_MAX || !f->ops ||
            (f->ops & ~(unsigned) (SIM_OP_OPEN | SIM_OP_READ | SIM_OP_WRITE)))
                return -EINVAL;
        path = strdup(f->path);
        v = realloc(fs->faults, (fs->n_faults + 1) * sizeof(*v));
        if (!path || !v) {
                free(path);
                if (v)
                        fs->faults = v;
                return -ENOMEM;
        }
        fs->faults = v;
        for (size_t i = fs->n_faults; i > 0; i--) {
                struct sim_fault *o = &fs->faults[i - 1];

                if (o->kind != f->kind || !streq(o->path, f->path))
                        continue;
                o->ops &= ~f->ops;
                if (!o->ops)
                        fault_remove(fs, i - 1);
        }
        fs->faults[fs->n_faults] = *f;
        fs->faults[fs->n_faults].path = path;
        fs->faults[fs->n_faults].hits = 0;
        fs->n_faults++;
        return 0;
}

size_t sim_fs_fault_clear(struct sim_fs *fs, const char *path) {
        size_t n = 0;

        for (size_t i = fs->n_faults; i > 0; i--)
                if (!path || streq(fs->faults[i - 1].path, path)) {
                        fault_remove(fs, i - 1);
                        n++;
                }
        return n;
}

size_t sim_fs_n_faults(struct sim_fs *fs) {
        return fs->n_faults;
}

const struct sim_fault *sim_fs_fault(struct sim_fs *fs, size_t i) {
        return i < fs->n_faults ? &fs->faults[i] : NULL;
}

/* Fires the fault of @kind for @op on @path, if there is one: counts it (removes it if it fires
 * once, or the last of its times) and copies it to @ret (without its path). */
static bool fault_fire(struct sim_fs *fs, const char *path, enum sim_fault_kind kind, unsigned op,
                       struct sim_fault *ret) {
        for (size_t i = 0; i < fs->n_faults; i++) {
                struct sim_fault *f = &fs->faults[i];

                if (f->kind != kind || !(f->ops & op) || !streq(f->path, path))
                        continue;
                f->hits++;
                *ret = *f;
                ret->path = NULL;
                if (f->once || (f->times > 0 && f->hits >= f->times))
                        fault_remove(fs, i);
                return true;
        }
        return false;
}

/*
 * The faults on @n for @op (the lock held; released during a delay): a negative errno to fail
 * with, 1 for a write without effect, 0 to go on.
 */
static int faults_apply(struct sim_fs *fs, struct sim_node *n, unsigned op) {
        char path[PATH_MAX];
        struct sim_fault f;

        if (node_path(n, path, sizeof(path)) < 0)
                return 0;
        if (fault_fire(fs, path, SIM_FAULT_DELAY, op, &f)) {
                struct timespec ts = { .tv_sec = f.ms / 1000,
                                       .tv_nsec = (long) (f.ms % 1000) * 1000000 };

                sim_fs_unlock(fs);
                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
                sim_fs_lock(fs);
        }
        if (fault_fire(fs, path, SIM_FAULT_ERRNO, op, &f))
                return -f.err;
        if (op == SIM_OP_WRITE && fault_fire(fs, path, SIM_FAULT_NO_EFFECT, op, &f))
                return 1;
        return 0;
}

/* The faults of an open: a positive errno, or 0. */
static int open_faults(struct sim_fs *fs, struct sim_node *n) {
        int r;

        if (!fs->n_faults || n->dead)
                return 0;
        n->opens++; /* kept while a delay runs without the lock */
        r = faults_apply(fs, n, SIM_OP_OPEN);
        n->opens--; /* the kernel holds a lookup of @n: it is not freed here */
        return r < 0 ? -r : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Rendering */

static int node_render(struct sim_node *n, const struct sim_caller *c, char *buf) {
        int r;

        if (n->file.ops) {
                if (!n->file.ops->show)
                        return n->file.ops->read ? 0 : -EACCES; /* read: see its callers */
                r = n->file.ops->show(n, c, buf);
                return r > SIM_PAGE_SIZE ? -ENOSPC : r;
        }
        if (n->file.len > 0) /* (an empty file has no data) */
                memcpy(buf, n->file.data, n->file.len);
        return (int) n->file.len;
}

/* The read of @h at @off, the lock held: its bytes into @out, *@ret_n of them; SIM_SHOW_LATER,
 * or -errno. A read at offset 0 renders the file; later offsets serve that rendering. */
static int read_locked(struct open_file *h, size_t size, off_t off, char *out, size_t *ret_n) {
        size_t n = 0;
        int r;

        if (h->node->dead)
                return -ENODEV;
        if (h->node->file.ops && h->node->file.ops->read) {
                /* a bin attribute: every read reaches it (kernfs: at most a page) */
                r = h->node->file.ops->read(h->node, &h->caller, out, MIN(size, SIM_PAGE_SIZE),
                                            (uint64_t) off);
                if (r < 0)
                        return r;
                *ret_n = MIN((size_t) r, MIN(size, (size_t) SIM_PAGE_SIZE));
                return 0;
        }
        if (off == 0 || !h->buf) {
                if (!h->buf && !(h->buf = malloc(SIM_PAGE_SIZE)))
                        return -ENOMEM;
                r = node_render(h->node, &h->caller, h->buf);
                if (r == SIM_SHOW_LATER)
                        return r;
                h->len = r < 0 ? 0 : r;
                if (r < 0)
                        return r;
        }
        if (off < h->len) {
                n = MIN(size, (size_t) (h->len - off));
                memcpy(out, h->buf + off, n);
        }
        *ret_n = n;
        return 0;
}

static bool park(struct sim_fs *fs, fuse_req_t req, struct open_file *h, size_t size, off_t off) {
        if (fs->n_parked == fs->cap_parked) {
                size_t cap = fs->cap_parked ? fs->cap_parked * 2 : 8;
                struct parked_read *p = realloc(fs->parked, cap * sizeof(*p));

                if (!p)
                        return false;
                fs->parked = p;
                fs->cap_parked = cap;
        }
        fs->parked[fs->n_parked++] = (struct parked_read){ req, h, size, off };
        return true;
}

/* Runs the parked reads again; the answered ones are replied to through the notifier, after
 * what was queued before (a switch's new KFD nodes). */
static void parked_run(struct sim_fs *fs) {
        size_t kept = 0;

        for (size_t i = 0; i < fs->n_parked; i++) {
                struct parked_read *p = &fs->parked[i];
                char out[SIM_PAGE_SIZE];
                size_t n = 0;
                int r = read_locked(p->h, p->size, p->off, out, &n);

                if (r == SIM_SHOW_LATER)
                        fs->parked[kept++] = *p;
                else
                        queue_read_reply(fs, p->req, r < 0 ? r : (int) n, out);
        }
        fs->n_parked = kept;
}

static bool node_readable(const struct sim_node *n) {
        return (n->mode & 0444) && (!n->file.ops || n->file.ops->show || n->file.ops->read);
}

static bool node_writable(const struct sim_node *n) {
        return (n->mode & 0222) && n->file.ops && n->file.ops->store;
}

/* ---------------------------------------------------------------------------------------- */
/* FUSE handlers */

static struct sim_node *req_node(fuse_req_t req, fuse_ino_t ino) {
        struct sim_fs *fs = fuse_req_userdata(req);

        return ino == FUSE_ROOT_ID ? fs->root : (struct sim_node *) (uintptr_t) ino;
}

static void fill_stat(const struct sim_node *n, struct stat *st) {
        memset(st, 0, sizeof(*st));
        st->st_ino = node_ino(n);
        st->st_blksize = SIM_PAGE_SIZE;
        st->st_atime = st->st_mtime = st->st_ctime = n->fs->mtime;
        switch (n->type) {
        case NODE_DIR:
                st->st_mode = S_IFDIR | n->mode;
                st->st_nlink = 2 + n->dir.n_subdirs;
                break;
        case NODE_FILE:
                st->st_mode = S_IFREG | n->mode;
                st->st_nlink = 1;
                st->st_size = n->file.ops && n->file.ops->size
                                      ? (off_t) n->file.ops->size((struct sim_node *) n)
                                      : SIM_PAGE_SIZE;
                break;
        default:
                st->st_mode = S_IFLNK | 0777;
                st->st_nlink = 1;
                st->st_size = (off_t) strlen(n->link.target);
                break;
        }
}

static void caller_of(fuse_req_t req, struct sim_caller *c) {
        const struct fuse_ctx *ctx = fuse_req_ctx(req);

        c->uid = ctx->uid;
        c->gid = ctx->gid;
        c->pid = ctx->pid;
}

static void op_init(void *userdata, struct fuse_conn_info *conn) {
        if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
                conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
        conn->want &= ~(unsigned) FUSE_CAP_WRITEBACK_CACHE;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
        struct sim_fs *fs = fuse_req_userdata(req);
        struct fuse_entry_param e = { .attr_timeout = SIM_CACHE_TIMEOUT,
                                      .entry_timeout = SIM_CACHE_TIMEOUT };
        struct sim_node *n;

        sim_fs_lock(fs);
        n = sim_child(req_node(req, parent), name);
        if (!n) {
                sim_fs_unlock(fs);
                fuse_reply_err(req, ENOENT);
                return;
        }
        e.ino = node_ino(n);
        e.generation = n->generation;
        fill_stat(n, &e.attr);
        n->nlookup++;
        sim_fs_unlock(fs);
        if (fuse_reply_entry(req, &e) != 0) {
                sim_fs_lock(fs);
                n->nlookup--;
                node_maybe_free(n);
                sim_fs_unlock(fs);
        }
}

static void forget_one(struct sim_fs *fs, fuse_ino_t ino, uint64_t nlookup) {
        struct sim_node *n;

        if (ino == FUSE_ROOT_ID)
                return;
        n = (struct sim_node *) (uintptr_t) ino;
        n->nlookup = n->nlookup > nlookup ? n->nlookup - nlookup : 0;
        node_maybe_free(n);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
        struct sim_fs *fs = fuse_req_userdata(req);

        sim_fs_lock(fs);
        forget_one(fs, ino, nlookup);
        sim_fs_unlock(fs);
        fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets) {
        struct sim_fs *fs = fuse_req_userdata(req);

        sim_fs_lock(fs);
        for (size_t i = 0; i < count; i++)
                forget_one(fs, forgets[i].ino, forgets[i].nlookup);
        sim_fs_unlock(fs);
        fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        struct sim_fs *fs = fuse_req_userdata(req);
        struct stat st;

        sim_fs_lock(fs);
        fill_stat(req_node(req, ino), &st);
        sim_fs_unlock(fs);
        fuse_reply_attr(req, &st, SIM_CACHE_TIMEOUT);
}

/* Truncation (a shell's ">" without atomic O_TRUNC) and time changes are accepted and do
 * nothing, as in sysfs; ownership and mode stay as the kernel created them. */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi) {
        struct sim_fs *fs = fuse_req_userdata(req);
        struct stat st;

        if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
                fuse_reply_err(req, EPERM);
                return;
        }
        sim_fs_lock(fs);
        fill_stat(req_node(req, ino), &st);
        sim_fs_unlock(fs);
        fuse_reply_attr(req, &st, SIM_CACHE_TIMEOUT);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino) {
        struct sim_fs *fs = fuse_req_userdata(req);
        struct sim_node *n;
        char target[1024];

        sim_fs_lock(fs);
        n = req_node(req, ino);
        if (n->type != NODE_LINK) {
                sim_fs_unlock(fs);
                fuse_reply_err(req, EINVAL);
                return;
        }
        snprintf(target, sizeof(target), "%s", n->link.target);
        sim_fs_unlock(fs);
        fuse_reply_readlink(req, target);
}

/* kernfs checks the mode at open for everyone, root included: a file without a write bit (or
 * without a store) cannot be opened for writing, one without a read bit for reading. */
static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        struct sim_fs *fs = fuse_req_userdata(req);
        int acc = fi->flags & O_ACCMODE;
        struct open_file *h;
        struct sim_node *n;
        int err = 0;

        h = calloc(1, sizeof(*h));
        if (!h) {
                fuse_reply_err(req, ENOMEM);
                return;
        }
        caller_of(req, &h->caller);
        sim_fs_lock(fs);
        n = req_node(req, ino);
        err = open_faults(fs, n);
        if (err)
                ; /* an injected fault */
        else if (n->type == NODE_DIR)
                err = EISDIR;
        else if (n->type != NODE_FILE || n->dead)
                err = ENOENT;
        else if ((acc == O_RDONLY || acc == O_RDWR) && !node_readable(n))
                err = EACCES;
        else if ((acc == O_WRONLY || acc == O_RDWR) && !node_writable(n))
                err = EACCES;
        if (err == 0) {
                n->opens++;
                h->node = n;
                LIST_LINK(fs->files, h);
        }
        sim_fs_unlock(fs);
        if (err) {
                free(h);
                fuse_reply_err(req, err);
                return;
        }
        fi->fh = (uint64_t) (uintptr_t) h;
        fi->direct_io = 1;
        fi->keep_cache = 0;
        if (fuse_reply_open(req, fi) != 0) {
                sim_fs_lock(fs);
                LIST_UNLINK(fs->files, h);
                n->opens--;
                node_maybe_free(n);
                sim_fs_unlock(fs);
                free(h);
        }
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi) {
        struct sim_fs *fs = fuse_req_userdata(req);
        struct open_file *h = (struct open_file *) (uintptr_t) fi->fh;
        char out[SIM_PAGE_SIZE];
        size_t n = 0;
        int r = 0;

        sim_fs_lock(fs);
        if (fs->n_faults && !h->node->dead && (off == 0 || !h->buf))
                r = faults_apply(fs, h->node, SIM_OP_READ);
        if (r >= 0)
                r = read_locked(h, size, off, out, &n);
        /* a show that must wait: answered later, this worker is free meanwhile */
        if (r == SIM_SHOW_LATER && park(fs, req, h, size, off)) {
                sim_fs_unlock(fs);
                return;
        }
        sim_fs_unlock(fs);
        if (r == SIM_SHOW_LATER)
                r = -ENOMEM;
        if (r < 0)
                fuse_reply_err(req, -r);
        else
                fuse_reply_buf(req, out, n);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi) {
        struct sim_fs *fs = fuse_req_userdata(req);
        struct open_file *h = (struct open_file *) (uintptr_t) fi->fh;
        size_t len = MIN(size, (size_t) SIM_PAGE_SIZE);
        char copy[SIM_PAGE_SIZE + 1];
        int r;

        memcpy(copy, buf, len);
        copy[len] = '\0';
        request_waited = false;
        sim_fs_lock(fs);
        r = fs->n_faults && !h->node->dead ? faults_apply(fs, h->node, SIM_OP_WRITE) : 0;
        if (r < 0)
                ; /* an injected fault */
        else if (h->node->dead)
                r = -ENODEV;
        else if (r == 1)
                r = 0; /* a write without effect */
        else
                r = h->node->file.ops->store(h->node, &h->caller, copy, len);
        if (r >= 0)
                r = (int) len;
        /* a write that changed the tree (or waited, and may have) is answered after the kernel
         * forgot the old one */
        if ((fs->n_inval > 0 || request_waited) && hand_over(fs, req, r)) {
                pthread_mutex_unlock(&fs->lock);
                return;
        }
        pthread_mutex_unlock(&fs->lock);
        if (r < 0)
                fuse_reply_err(req, -r);
        else
                fuse_reply_write(req, (size_t) r);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        struct sim_fs *fs = fuse_req_userdata(req);
        struct open_file *h = (struct open_file *) (uintptr_t) fi->fh;

        sim_fs_lock(fs);
        LIST_UNLINK(fs->files, h);
        h->node->opens--;
        node_maybe_free(h->node);
        sim_fs_unlock(fs);
        free(h->buf);
        free(h);
        fuse_reply_err(req, 0);
}

static void dir_handle_free(struct dir_handle *d) {
        for (size_t i = 0; i < d->n; i++)
                free(d->entries[i].name);
        free(d->entries);
        free(d);
}

/* The listing is taken at opendir, so that readdir offsets stay valid while the tree changes. */
static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        struct sim_fs *fs = fuse_req_userdata(req);
        struct dir_handle *d = calloc(1, sizeof(*d));
        struct sim_node *n;
        size_t i = 0;
        int err = 0;

        if (!d) {
                fuse_reply_err(req, ENOMEM);
                return;
        }
        sim_fs_lock(fs);
        n = req_node(req, ino);
        err = open_faults(fs, n);
        if (err)
                ; /* an injected fault */
        else if (n->type != NODE_DIR)
                err = ENOTDIR;
        else if (n->dead)
                err = ENOENT;
        else if (!(d->entries = calloc(n->dir.n_children + 2, sizeof(*d->entries))))
                err = ENOMEM;
        else {
                d->entries[i++] = (struct dir_entry){ node_ino(n), DT_DIR, strdup(".") };
                d->entries[i++] = (struct dir_entry){ n->parent ? node_ino(n->parent) : node_ino(n),
                                                      DT_DIR, strdup("..") };
                for (struct sim_node *c = n->dir.first; c; c = c->next)
                        d->entries[i++] = (struct dir_entry){ node_ino(c),
                                                              c->type == NODE_DIR    ? DT_DIR
                                                              : c->type == NODE_FILE ? DT_REG
                                                                                     : DT_LNK,
                                                              strdup(c->name) };
                d->n = i;
                for (i = 0; i < d->n; i++)
                        if (!d->entries[i].name)
                                err = ENOMEM;
        }
        sim_fs_unlock(fs);
        if (err) {
                dir_handle_free(d);
                fuse_reply_err(req, err);
                return;
        }
        fi->fh = (uint64_t) (uintptr_t) d;
        pthread_mutex_lock(&fs->lock);
        LIST_LINK(fs->dirs, d);
        pthread_mutex_unlock(&fs->lock);
        if (fuse_reply_open(req, fi) != 0) {
                pthread_mutex_lock(&fs->lock);
                LIST_UNLINK(fs->dirs, d);
                pthread_mutex_unlock(&fs->lock);
                dir_handle_free(d);
        }
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi) {
        struct dir_handle *d = (struct dir_handle *) (uintptr_t) fi->fh;
        _cleanup_free_ char *buf = malloc(size);
        size_t used = 0;

        if (!buf) {
                fuse_reply_err(req, ENOMEM);
                return;
        }
        for (size_t i = (size_t) off; i < d->n; i++) {
                struct stat st = { .st_ino = d->entries[i].ino,
                                   .st_mode = (mode_t) (d->entries[i].type << 12) };
                size_t len = fuse_add_direntry(req, buf + used, size - used, d->entries[i].name,
                                               &st, (off_t) (i + 1));

                if (len > size - used)
                        break;
                used += len;
        }
        fuse_reply_buf(req, buf, used);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        struct sim_fs *fs = fuse_req_userdata(req);
        struct dir_handle *d = (struct dir_handle *) (uintptr_t) fi->fh;

        pthread_mutex_lock(&fs->lock);
        LIST_UNLINK(fs->dirs, d);
        pthread_mutex_unlock(&fs->lock);
        dir_handle_free(d);
        fuse_reply_err(req, 0);
}

/* sysfs has no create; directories refuse new entries with EACCES (create, mknod) and the
 * other namespace changes with EPERM, as the VFS answers for kernfs. */
static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      struct fuse_file_info *fi) {
        fuse_reply_err(req, EACCES);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev) {
        fuse_reply_err(req, EACCES);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode) {
        fuse_reply_err(req, EPERM);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name) {
        fuse_reply_err(req, EPERM);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name) {
        fuse_reply_err(req, EPERM);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                      const char *newname, unsigned int flags) {
        fuse_reply_err(req, EPERM);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname) {
        fuse_reply_err(req, EPERM);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino) {
        struct statvfs sv = { .f_bsize = SIM_PAGE_SIZE,
                              .f_frsize = SIM_PAGE_SIZE,
                              .f_namemax = 255 };

        fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops sim_ops = {
        .init = op_init,
        .lookup = op_lookup,
        .forget = op_forget,
        .forget_multi = op_forget_multi,
        .getattr = op_getattr,
        .setattr = op_setattr,
        .readlink = op_readlink,
        .mknod = op_mknod,
        .mkdir = op_mkdir,
        .unlink = op_unlink,
        .rmdir = op_unlink,
        .symlink = op_symlink,
        .rename = op_rename,
        .link = op_link,
        .open = op_open,
        .read = op_read,
        .write = op_write,
        .release = op_release,
        .opendir = op_opendir,
        .readdir = op_readdir,
        .releasedir = op_releasedir,
        .statfs = op_statfs,
        .create = op_create,
};

/* ---------------------------------------------------------------------------------------- */
/* Serving */

int sim_fs_mount(struct sim_fs *fs, const struct sim_serve_config *cfg) {
        _cleanup_free_ char *opts = NULL;
        char *argv[] = { (char *) "amdsmi-sim", (char *) "-o", NULL, NULL };
        struct fuse_args args = FUSE_ARGS_INIT(3, argv);

        opts = strdupf("default_permissions,fsname=amdsmi-sim,subtype=amdsmi-sim%s%s",
                       cfg->allow_other ? ",allow_other" : "",
                       cfg->auto_unmount ? ",auto_unmount" : "");
        fs->mountpoint = strdup(cfg->mountpoint);
        if (!opts || !fs->mountpoint)
                return -ENOMEM;
        argv[2] = opts;
        fs->se = fuse_session_new(&args, &sim_ops, sizeof(sim_ops), fs);
        fuse_opt_free_args(&args);
        if (!fs->se)
                return -EINVAL;
        if (fuse_session_mount(fs->se, cfg->mountpoint) != 0) {
                fuse_session_destroy(fs->se);
                fs->se = NULL;
                return -EIO;
        }
        return 0;
}

int sim_fs_daemonize(struct sim_fs *fs, bool foreground) {
        if (fuse_set_signal_handlers(fs->se) != 0)
                return -EIO;
        fs->signals = true;
        return fuse_daemonize(foreground) == 0 ? 0 : -EIO;
}

int sim_fs_loop(struct sim_fs *fs) {
        struct fuse_loop_config *cfg = fuse_loop_cfg_create();
        int r;

        if (!cfg)
                return -ENOMEM;
        /* An explicit limit: at most 8 worker threads, 4 of them kept idle (and the notifier
         * thread). */
        fuse_loop_cfg_set_max_threads(cfg, 8);
        fuse_loop_cfg_set_idle_threads(cfg, 4);
        fuse_loop_cfg_set_clone_fd(cfg, 0);
        pthread_mutex_lock(&fs->lock);
        fs->notifier_stop = false;
        r = -pthread_create(&fs->notifier, NULL, notifier_main, fs);
        fs->notifier_running = r == 0;
        pthread_mutex_unlock(&fs->lock);
        if (r < 0) {
                fuse_loop_cfg_destroy(cfg);
                return r;
        }
        r = fuse_session_loop_mt(fs->se, cfg);
        fuse_loop_cfg_destroy(cfg);

        pthread_mutex_lock(&fs->lock);
        fs->notifier_stop = true;
        pthread_cond_signal(&fs->work);
        pthread_mutex_unlock(&fs->lock);
        pthread_join(fs->notifier, NULL);
        return r < 0 ? r : 0;
}

void sim_fs_stop(struct sim_fs *fs) {
        /* The kernel aborts the connection when the last reference to the mount goes, and the
         * workers' reads end with ENODEV. */
        (void) umount2(fs->mountpoint, MNT_DETACH);
}

void sim_fs_unmount(struct sim_fs *fs) {
        if (!fs->se)
                return;
        if (fs->signals)
                fuse_remove_signal_handlers(fs->se);
        fuse_session_unmount(fs->se);
        fuse_session_destroy(fs->se);
        fs->se = NULL;

        /* The loop has ended: no request comes any more, and the handles the kernel did not
         * release (still open, or their release lost with the connection) go now, with the
         * reads parked on them (their requests went with the session). */
        pthread_mutex_lock(&fs->lock);
        fs->n_parked = 0;
        while (fs->files) {
                struct open_file *h = fs->files;

                LIST_UNLINK(fs->files, h);
                h->node->opens--;
                node_maybe_free(h->node);
                free(h->buf);
                free(h);
        }
        while (fs->dirs) {
                struct dir_handle *d = fs->dirs;

                LIST_UNLINK(fs->dirs, d);
                dir_handle_free(d);
        }
        pthread_mutex_unlock(&fs->lock);
}

/* ---------------------------------------------------------------------------------------- */
/* Snapshot */

static int snapshot_dir(struct sim_node *d, int dfd) {
        static const struct sim_caller root = { 0, 0, 0 };
        char buf[SIM_PAGE_SIZE];
        int r;

        for (struct sim_node *c = d->dir.first; c; c = c->next) {
                if (c->type == NODE_DIR) {
                        _cleanup_close_ int sub = -1;

                        if (mkdirat(dfd, c->name, 0755) < 0)
                                return -errno;
                        sub = openat(dfd, c->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                        if (sub < 0)
                                return -errno;
                        r = snapshot_dir(c, sub);
                        if (r < 0)
                                return r;
                        if (c->mode != 0755 && fchmod(sub, c->mode) < 0)
                                return -errno;
                } else if (c->type == NODE_LINK) {
                        if (symlinkat(c->link.target, dfd, c->name) < 0)
                                return -errno;
                } else {
                        _cleanup_close_ int fd = -1;
                        int len = 0;

                        if (node_readable(c)) {
                                len = node_render(c, &root, buf);
                                if (len < 0)
                                        len = 0; /* an error now: an empty file */
                        }
                        fd = openat(dfd, c->name,
                                    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
                        if (fd < 0)
                                return -errno;
                        if (len > 0 && write(fd, buf, (size_t) len) != len)
                                return errno ? -errno : -EIO;
                        /* a bin attribute: read on until its end, as cat does */
                        for (uint64_t off = 0;
                             c->file.ops && c->file.ops->read && node_readable(c);) {
                                int k = c->file.ops->read(c, &root, buf, sizeof(buf), off);

                                if (k <= 0)
                                        break;
                                if (write(fd, buf, (size_t) k) != k)
                                        return errno ? -errno : -EIO;
                                off += (uint64_t) k;
                        }
                        if (fchmod(fd, c->mode) < 0)
                                return -errno;
                }
        }
        return 0;
}

int sim_fs_snapshot(struct sim_fs *fs, const char *dir) {
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (dfd < 0)
                return -errno;
        return snapshot_dir(fs->root, dfd);
}
