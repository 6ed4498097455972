/* SPDX-License-Identifier: MIT */
/*
 * The history of changes and the intent records (history.c), each test in its own
 * STATE_DIRECTORY: round trips, the rotation at its exact boundary, two processes appending
 * at once, lines cut short by a crash, malformed lines and records, the caps on long values,
 * reading the end of a huge file, permissions, and the directories.
 *
 * The clock: this file defines now_realtime_us() (lib/util/time-util.h), so the tests can
 * stop it; history.c is linked against this definition instead of lib/util's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* after the headers it needs */
#include <cmocka.h>

#include <json-c/json.h>

#include "history.h"
#include "macro.h"
#include "parse-util.h"
#include "time-util.h"

#ifndef DEFAULT_STATE_DIR
#error "DEFAULT_STATE_DIR (LOCALSTATEDIR/lib/amdsmi) comes from the build"
#endif

#define BDF "0000:c1:00.0"
#define T0 UINT64_C(1796278321123456) /* 2026-12-03T06:12:01.123456Z */

static char tmpdir[128];
static uint64_t frozen_usec; /* 0: the real clock */

uint64_t now_realtime_us(void) {
        struct timespec ts;

        if (frozen_usec)
                return frozen_usec;
        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* ---- helpers ------------------------------------------------------------------------------ */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static int setup(void **state) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-history-XXXXXX");
        if (!mkdtemp(tmpdir))
                return -1;
        if (chmod(tmpdir, 0755) < 0)
                return -1;
        setenv("STATE_DIRECTORY", tmpdir, 1);
        umask(022);
        frozen_usec = 0;
        return 0;
}

static int teardown(void **state) {
        return nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *in_dir(const char *name) {
        static char buf[4][1024];
        static unsigned i;

        i = (i + 1) % 4;
        snprintf(buf[i], sizeof(buf[i]), "%s/%.700s", tmpdir, name);
        return buf[i];
}

static void write_file(const char *path, const void *data, size_t len, int flags) {
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0640);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t) len);
        assert_int_equal(close(fd), 0);
}

static void append_raw(const char *s) {
        write_file(in_dir("history.jsonl"), s, strlen(s), O_APPEND);
}

/* The whole file (NUL-terminated), NULL when absent. */
static char *read_file(const char *path, size_t *ret_len) {
        struct stat st;
        char *buf;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0) {
                assert_int_equal(errno, ENOENT);
                return NULL;
        }
        assert_int_equal(fstat(fd, &st), 0);
        buf = malloc((size_t) st.st_size + 1);
        assert_non_null(buf);
        assert_int_equal(read(fd, buf, (size_t) st.st_size), st.st_size);
        buf[st.st_size] = '\0';
        close(fd);
        if (ret_len)
                *ret_len = (size_t) st.st_size;
        return buf;
}

static off_t file_size(const char *path) {
        struct stat st;

        if (stat(path, &st) < 0)
                return -1;
        return st.st_size;
}

static bool exists(const char *path) {
        struct stat st;

        return lstat(path, &st) == 0;
}

static size_t count_lines(const char *s) {
        size_t n = 0;

        for (; *s; s++)
                n += *s == '\n';
        return n;
}

static struct history_entry entry(const char *message) {
        return (struct history_entry){
                .via = "amdsmid",
                .uid = 1000,
                .pid = 4242,
                .sender = ":1.42",
                .gpu = BDF,
                .change = "compute_mode",
                .old_value = "SPX",
                .new_value = "CPX",
                .result = 0,
                .message = message,
        };
}

/* history_read() that must succeed; *ret_skipped may be NULL. */
static json_object *read_all(unsigned max, unsigned *ret_skipped) {
        json_object *a = NULL;
        unsigned skipped = 12345;

        assert_int_equal(history_read(max, &a, &skipped), 0);
        assert_non_null(a);
        assert_true(json_object_is_type(a, json_type_array));
        assert_int_not_equal(skipped, 12345);
        if (ret_skipped)
                *ret_skipped = skipped;
        return a;
}

static const char *get_str(json_object *o, const char *key) {
        json_object *v;

        assert_true(json_object_object_get_ex(o, key, &v));
        return v ? json_object_get_string(v) : NULL;
}

static bool is_null(json_object *o, const char *key) {
        json_object *v;

        assert_true(json_object_object_get_ex(o, key, &v));
        return v == NULL;
}

static int64_t get_i64(json_object *o, const char *key) {
        json_object *v;

        assert_true(json_object_object_get_ex(o, key, &v));
        assert_true(json_object_is_type(v, json_type_int));
        return json_object_get_int64(v);
}

static const char *message_at(json_object *a, size_t i) {
        return get_str(json_object_array_get_idx(a, i), "message");
}

/* The messages of the entries, joined with ','. */
static const char *messages(json_object *a) {
        static char buf[4096];
        size_t n = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                const char *m = message_at(a, i);

                n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? "," : "",
                                       m ? m : "(null)");
                assert_true(n < sizeof(buf));
        }
        return buf;
}

static void append(const char *message, uint64_t max) {
        struct history_entry e = entry(message);

        assert_int_equal(history_append(&e, max), 0);
}

/* ---- paths -------------------------------------------------------------------------------- */

static void test_paths(void **state) {
        char buf[PATH_MAX], want[PATH_MAX];

        assert_int_equal(history_path(buf, sizeof(buf)), 0);
        assert_string_equal(buf, in_dir("history.jsonl"));
        assert_int_equal(intent_dir(buf, sizeof(buf)), 0);
        assert_string_equal(buf, in_dir("intent"));

        /* systemd lists several directories with ':': the first one is ours */
        snprintf(want, sizeof(want), "%s:/var/lib/other", tmpdir);
        setenv("STATE_DIRECTORY", want, 1);
        assert_int_equal(history_path(buf, sizeof(buf)), 0);
        assert_string_equal(buf, in_dir("history.jsonl"));

        unsetenv("STATE_DIRECTORY");
        assert_int_equal(history_path(buf, sizeof(buf)), 0);
        assert_string_equal(buf, DEFAULT_STATE_DIR "/history.jsonl");
        assert_int_equal(intent_dir(buf, sizeof(buf)), 0);
        assert_string_equal(buf, DEFAULT_STATE_DIR "/intent");
        setenv("STATE_DIRECTORY", "relative/dir", 1); /* not systemd's: ignored */
        assert_int_equal(history_path(buf, sizeof(buf)), 0);
        assert_string_equal(buf, DEFAULT_STATE_DIR "/history.jsonl");

        setenv("STATE_DIRECTORY", tmpdir, 1);
        assert_int_equal(history_path(buf, strlen(tmpdir) + 5), -ENAMETOOLONG);
        assert_int_equal(history_path(buf, strlen(tmpdir) + strlen("/history.jsonl")),
                         -ENAMETOOLONG);
        assert_int_equal(history_path(buf, strlen(tmpdir) + strlen("/history.jsonl") + 1), 0);
}

/* The files go where STATE_DIRECTORY says, directories made as needed, with their modes. */
static void test_state_directory(void **state) {
        struct history_entry e = entry("m");
        struct intent i = { .gpu = BDF, .change = "num_vfs" };
        char dir[512];
        struct stat st;

        snprintf(dir, sizeof(dir), "%s", in_dir("a/b"));

        setenv("STATE_DIRECTORY", dir, 1);
        umask(077); /* the modes do not depend on the caller's umask */
        assert_int_equal(history_append(&e, 0), 0);
        assert_int_equal(intent_begin(&i), 0);
        umask(022);

        assert_int_equal(stat(in_dir("a/b/history.jsonl"), &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0640);
        assert_int_equal(stat(in_dir("a/b/intent"), &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_false(exists(in_dir("history.jsonl")));
        assert_false(exists(in_dir("intent")));

        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/intent/%s.json", dir, i.id);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0640);

        /* and they are read from there */
        json_object *a = read_all(0, NULL);
        assert_int_equal(json_object_array_length(a), 1);
        json_object_put(a);
        setenv("STATE_DIRECTORY", tmpdir, 1);
        a = read_all(0, NULL);
        assert_int_equal(json_object_array_length(a), 0);
        json_object_put(a);
}

static void test_state_directory_mode(void **state) {
        struct history_entry e = entry("m");
        struct stat st;

        setenv("STATE_DIRECTORY", in_dir("new"), 1);
        assert_int_equal(history_append(&e, 0), 0);
        assert_int_equal(stat(in_dir("new"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0755);
}

/* ---- reading and writing ------------------------------------------------------------------ */

static void test_absent_and_empty(void **state) {
        json_object *a;
        unsigned skipped;

        setenv("STATE_DIRECTORY", in_dir("does-not-exist"), 1);
        a = read_all(0, &skipped);
        assert_int_equal(json_object_array_length(a), 0);
        assert_int_equal(skipped, 0);
        json_object_put(a);
        assert_false(exists(in_dir("does-not-exist"))); /* a read creates nothing */

        setenv("STATE_DIRECTORY", tmpdir, 1);
        write_file(in_dir("history.jsonl"), "", 0, 0);
        a = read_all(10, &skipped);
        assert_int_equal(json_object_array_length(a), 0);
        assert_int_equal(skipped, 0);
        json_object_put(a);

        /* empty lines are no records and no damage */
        write_file(in_dir("history.jsonl"), "\n\n\n", 3, O_TRUNC);
        a = read_all(0, &skipped);
        assert_int_equal(json_object_array_length(a), 0);
        assert_int_equal(skipped, 0);
        json_object_put(a);

        /* skipped may be NULL */
        a = NULL;
        assert_int_equal(history_read(0, &a, NULL), 0);
        json_object_put(a);
}

static void check_keys(json_object *o) {
        static const char *const keys[] = { "time",   "time_usec", "via",    "uid", "pid",
                                            "sender", "gpu",       "change", "old", "new",
                                            "result", "errno",     "message" };
        size_t n = 0;

        json_object_object_foreach(o, k, v) {
                (void) v;
                assert_true(n < ELEMENTSOF(keys));
                assert_string_equal(k, keys[n]);
                n++;
        }
        assert_int_equal(n, ELEMENTSOF(keys));
}

static void test_round_trip(void **state) {
        struct history_entry e1 = entry("switched to CPX in 2.1 s");
        struct history_entry e2 = {
                .time_usec = UINT64_C(1764000000999999),
                .via = "direct",
                .uid = 0,
                .change = "power_source",
                .new_value = "host=600W",
                .result = -EBUSY,
                .message = "GPU busy",
        };
        struct history_entry e3 = { .change = "recovery", .result = -4000 };
        json_object *a, *o;
        unsigned skipped;
        char *raw;

        frozen_usec = T0;
        assert_int_equal(history_append(&e1, 0), 0);
        frozen_usec = 0;
        assert_int_equal(history_append(&e2, 0), 0);
        assert_int_equal(history_append(&e3, 0), 0);

        a = read_all(0, &skipped);
        assert_int_equal(skipped, 0);
        assert_int_equal(json_object_array_length(a), 3);

        o = json_object_array_get_idx(a, 0);
        check_keys(o);
        assert_string_equal(get_str(o, "time"), "2026-12-03T06:12:01.123Z");
        assert_int_equal(get_i64(o, "time_usec"), (int64_t) T0);
        assert_string_equal(get_str(o, "via"), "amdsmid");
        assert_int_equal(get_i64(o, "uid"), 1000);
        assert_int_equal(get_i64(o, "pid"), 4242);
        assert_string_equal(get_str(o, "sender"), ":1.42");
        assert_string_equal(get_str(o, "gpu"), BDF);
        assert_string_equal(get_str(o, "change"), "compute_mode");
        assert_string_equal(get_str(o, "old"), "SPX");
        assert_string_equal(get_str(o, "new"), "CPX");
        assert_string_equal(get_str(o, "result"), "ok");
        assert_int_equal(get_i64(o, "errno"), 0);
        assert_string_equal(get_str(o, "message"), "switched to CPX in 2.1 s");

        o = json_object_array_get_idx(a, 1);
        check_keys(o);
        assert_string_equal(get_str(o, "time"), "2025-11-24T16:00:00.999Z");
        assert_int_equal(get_i64(o, "time_usec"), 1764000000999999);
        assert_string_equal(get_str(o, "via"), "direct");
        assert_int_equal(get_i64(o, "uid"), 0);
        assert_true(is_null(o, "pid"));
        assert_true(is_null(o, "sender"));
        assert_true(is_null(o, "gpu"));
        assert_true(is_null(o, "old"));
        assert_string_equal(get_str(o, "new"), "host=600W");
        assert_string_equal(get_str(o, "result"), "EBUSY");
        assert_int_equal(get_i64(o, "errno"), -EBUSY);

        o = json_object_array_get_idx(a, 2);
        check_keys(o);
        assert_string_equal(get_str(o, "result"), "E4000"); /* no name */
        assert_int_equal(get_i64(o, "errno"), -4000);
        assert_true(is_null(o, "message"));
        assert_true(is_null(o, "via"));
        /* "now": the real clock, within a minute */
        assert_true(llabs(get_i64(o, "time_usec") - (int64_t) now_realtime_us()) < 60000000);
        json_object_put(a);

        /* the last N, oldest first */
        a = read_all(2, &skipped);
        assert_int_equal(json_object_array_length(a), 2);
        assert_string_equal(get_str(json_object_array_get_idx(a, 0), "change"), "power_source");
        assert_string_equal(get_str(json_object_array_get_idx(a, 1), "change"), "recovery");
        json_object_put(a);
        a = read_all(1, NULL);
        assert_int_equal(json_object_array_length(a), 1);
        assert_string_equal(get_str(json_object_array_get_idx(a, 0), "change"), "recovery");
        json_object_put(a);
        a = read_all(100, NULL);
        assert_int_equal(json_object_array_length(a), 3);
        json_object_put(a);

        /* the file: one compact JSON object per line, the keys as documented */
        raw = read_file(in_dir("history.jsonl"), NULL);
        assert_non_null(raw);
        assert_int_equal(count_lines(raw), 3);
        assert_int_equal(raw[strlen(raw) - 1], '\n');
        assert_non_null(strstr(raw, "{\"time\":\"2026-12-03T06:12:01.123Z\",\"time_usec\":"
                                    "1796278321123456,\"via\":\"amdsmid\",\"uid\":1000,"
                                    "\"pid\":4242,\"sender\":\":1.42\",\"gpu\":\"" BDF "\","
                                    "\"change\":\"compute_mode\",\"old\":\"SPX\",\"new\":"
                                    "\"CPX\",\"result\":\"ok\",\"errno\":0,\"message\":"
                                    "\"switched to CPX in 2.1 s\"}\n"));
        free(raw);

        /* invalid entries */
        e3.change = NULL;
        assert_int_equal(history_append(&e3, 0), -EINVAL);
        e3.change = "x";
        e3.result = EBUSY;
        assert_int_equal(history_append(&e3, 0), -EINVAL);
        assert_int_equal(history_append(NULL, 0), -EINVAL);
        a = read_all(0, NULL);
        assert_int_equal(json_object_array_length(a), 3);
        json_object_put(a);
}

/* Rotation happens exactly when the line would take the file past max_bytes. */
static void test_rotation_boundary(void **state) {
        const char *cur = in_dir("history.jsonl"), *old = in_dir("history.jsonl.1");
        json_object *a;
        off_t L;
        char *raw;

        frozen_usec = T0; /* every line the same length */
        append("m1", 1u << 20);
        L = file_size(cur);
        assert_true(L > 100);

        append("m2", (uint64_t) (2 * L)); /* exactly 2L: fits */
        assert_int_equal(file_size(cur), 2 * L);
        assert_false(exists(old));

        append("m3", (uint64_t) (2 * L)); /* 3L > 2L: rotate first */
        assert_int_equal(file_size(old), 2 * L);
        assert_int_equal(file_size(cur), L);
        raw = read_file(old, NULL);
        assert_int_equal(count_lines(raw), 2);
        assert_non_null(strstr(raw, "\"m1\""));
        assert_non_null(strstr(raw, "\"m2\""));
        free(raw);
        a = read_all(0, NULL);
        assert_string_equal(messages(a), "m1,m2,m3");
        json_object_put(a);
        /* the last N across both generations */
        a = read_all(2, NULL);
        assert_string_equal(messages(a), "m2,m3");
        json_object_put(a);

        append("m4", (uint64_t) (2 * L - 1)); /* 2L > 2L - 1: rotate; m1, m2 are gone */
        assert_int_equal(file_size(old), L);
        assert_int_equal(file_size(cur), L);
        a = read_all(0, NULL);
        assert_string_equal(messages(a), "m3,m4");
        json_object_put(a);

        /* a line longer than the bound still goes in, alone */
        append("m5", 10);
        append("m6", 10);
        assert_int_equal(file_size(cur), L);
        assert_int_equal(file_size(old), L);
        a = read_all(0, NULL);
        assert_string_equal(messages(a), "m5,m6");
        json_object_put(a);
}

/* max_bytes 0 is 1 MiB, exactly. */
static void test_rotation_default(void **state) {
        const char *cur = in_dir("history.jsonl"), *old = in_dir("history.jsonl.1");
        off_t L;
        char *fill;
        size_t n;

        frozen_usec = T0;
        append("m1", 0);
        L = file_size(cur);
        /* a filler line, so that one more line of length L ends exactly at 1 MiB */
        n = (size_t) ((1 << 20) - 2 * L);
        fill = malloc(n);
        assert_non_null(fill);
        memset(fill, 'x', n - 1);
        fill[n - 1] = '\n';
        write_file(cur, fill, n, O_APPEND);
        free(fill);
        append("m2", 0);
        assert_int_equal(file_size(cur), 1 << 20);
        assert_false(exists(old));
        append("m3", 0);
        assert_int_equal(file_size(old), 1 << 20);
        assert_int_equal(file_size(cur), L);

        unsigned skipped;
        json_object *a = read_all(0, &skipped);
        assert_string_equal(messages(a), "m1,m2,m3");
        assert_int_equal(skipped, 1); /* the filler */
        json_object_put(a);
}

/* ---- two processes at once ---------------------------------------------------------------- */

#define WRITER_LINES 1000

static void writer(int id, uint64_t max) {
        for (int k = 0; k < WRITER_LINES; k++) {
                char msg[64];
                struct history_entry e = entry(msg);

                snprintf(msg, sizeof(msg), "w%d %04d", id, k);
                if (history_append(&e, max) < 0)
                        _exit(1);
        }
        _exit(0);
}

/*
 * Both writers' lines, checked line by line in the files: every line is a complete entry,
 * and the lines kept of each writer are the last ones it wrote, none missing in between.
 * @return how many lines are kept; the sizes of history.jsonl.1 and of one line.
 */
static size_t check_writers(uint64_t max, size_t *ret_old_size, size_t *ret_line) {
        const char *paths[] = { in_dir("history.jsonl.1"), in_dir("history.jsonl") };
        int next[2] = { -1, -1 }; /* the next sequence number expected of each writer */
        size_t total = 0;

        for (size_t f = 0; f < 2; f++) {
                size_t len = 0;
                char *raw = read_file(paths[f], &len), *line, *save = NULL;

                if (f == 0 && ret_old_size)
                        *ret_old_size = raw ? len : 0;
                if (!raw)
                        continue;
                assert_true(len <= max);
                assert_true(len == 0 || raw[len - 1] == '\n');
                if (f == 1 && ret_line)
                        *ret_line = strcspn(raw, "\n") + 1;
                for (line = strtok_r(raw, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                        json_object *o = json_tokener_parse(line), *m;
                        int id, seq;

                        if (!o)
                                fail_msg("%s: not JSON: %.200s", paths[f], line);
                        assert_true(json_object_object_get_ex(o, "message", &m));
                        assert_int_equal(sscanf(json_object_get_string(m), "w%d %d", &id, &seq), 2);
                        assert_true(id == 0 || id == 1);
                        if (next[id] >= 0 && seq != next[id])
                                fail_msg("writer %d: line %d after %d", id, seq, next[id] - 1);
                        next[id] = seq + 1;
                        json_object_put(o);
                        total++;
                }
                free(raw);
        }
        /* The files hold the newest lines of all: of a writer with lines kept, its last one is
         * there (one that finished early may have been rotated away entirely). */
        for (int id = 0; id < 2; id++)
                if (next[id] != -1 && next[id] != WRITER_LINES)
                        fail_msg("writer %d: lines after %d missing", id, next[id] - 1);
        assert_true(next[0] == WRITER_LINES || next[1] == WRITER_LINES);
        return total;
}

static void run_writers(uint64_t max) {
        pid_t pids[2];

        for (int i = 0; i < 2; i++) {
                pids[i] = fork();
                assert_true(pids[i] >= 0);
                if (pids[i] == 0)
                        writer(i, max);
        }
        for (int i = 0; i < 2; i++) {
                int status;

                assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
                assert_true(WIFEXITED(status));
                assert_int_equal(WEXITSTATUS(status), 0);
        }
}

static void test_concurrent_writers(void **state) {
        json_object *a;
        unsigned skipped;

        run_writers(0);
        /* 2000 lines of ~250 bytes fit in 1 MiB: nothing lost at all */
        assert_int_equal(check_writers(1u << 20, NULL, NULL), 2 * WRITER_LINES);
        assert_false(exists(in_dir("history.jsonl.1")));
        a = read_all(0, &skipped);
        assert_int_equal(skipped, 0);
        assert_int_equal(json_object_array_length(a), 2 * WRITER_LINES);
        json_object_put(a);
}

static void test_concurrent_writers_rotating(void **state) {
        const uint64_t max = 16 * 1024;
        size_t kept, old_size = 0, line = 0;
        json_object *a;
        unsigned skipped;

        run_writers(max);
        kept = check_writers(max, &old_size, &line);
        /* every line has the same length; the older generation was rotated away only when
         * one more line would not fit */
        assert_true(line > 100);
        assert_true(old_size > 0);
        assert_int_equal(old_size % line, 0);
        assert_true(old_size + line > max);
        assert_true(kept * line <= 2 * max);
        assert_true(kept >= max / line + 1);
        a = read_all(0, &skipped);
        assert_int_equal(skipped, 0);
        assert_int_equal(json_object_array_length(a), kept);
        json_object_put(a);
}

/* Waits up to 5 s for @pid to wait for a lock (a "->" line of /proc/locks with its PID). */
static bool lock_waiter(pid_t pid) {
        char want[32];

        snprintf(want, sizeof(want), " %d ", (int) pid);
        for (int i = 0; i < 500; i++) {
                char line[256];
                bool found = false;
                FILE *f = fopen("/proc/locks", "re");

                assert_non_null(f);
                while (fgets(line, sizeof(line), f))
                        found = found || (strstr(line, "->") && strstr(line, want));
                fclose(f);
                if (found)
                        return true;
                usleep(10000);
        }
        return false;
}

/*
 * The race the lock check closes: a writer opens history.jsonl, and before it gets the lock
 * another writer rotates the file away. The first must append to the new history.jsonl, not
 * to the generation it opened.
 */
static void test_rotation_race(void **state) {
        const char *cur = in_dir("history.jsonl"), *old = in_dir("history.jsonl.1");
        json_object *a;
        pid_t pid;
        int fd, status;
        char *raw;

        append("m1", 0);
        fd = open(cur, O_RDWR | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(flock(fd, LOCK_EX), 0); /* another writer holds the lock */
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct history_entry e = entry("m2");

                close(fd); /* the copy would keep the other writer's lock */
                _exit(history_append(&e, 0) == 0 ? 0 : 1);
        }
        assert_true(lock_waiter(pid)); /* the child opened the file and waits for the lock */
        assert_int_equal(rename(cur, old), 0); /* the other writer rotates... */
        write_file(cur, "\n", 1, O_EXCL);      /* ...and a third one starts the new file */
        assert_int_equal(flock(fd, LOCK_UN), 0);
        assert_int_equal(close(fd), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);

        raw = read_file(old, NULL);
        assert_int_equal(count_lines(raw), 1);
        assert_non_null(strstr(raw, "\"m1\""));
        free(raw);
        raw = read_file(cur, NULL);
        assert_non_null(raw);
        assert_int_equal(count_lines(raw), 2); /* the third writer's empty line, and m2 */
        assert_non_null(strstr(raw, "\"m2\""));
        free(raw);
        a = read_all(0, NULL);
        assert_string_equal(messages(a), "m1,m2");
        json_object_put(a);
}

/* A reader holds its lock while it reads both generations: a rotation waits for it. */
static void test_reader_blocks_rotation(void **state) {
        const char *cur = in_dir("history.jsonl");
        pid_t pid;
        int fd, status;

        frozen_usec = T0;
        append("m1", 0);
        fd = open(cur, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(flock(fd, LOCK_SH), 0); /* as history_read() holds it */
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct history_entry e = entry("m2");

                close(fd); /* the copy would keep the reader's lock */
                _exit(history_append(&e, 10) == 0 ? 0 : 1); /* rotates */
        }
        assert_true(lock_waiter(pid));
        assert_false(exists(in_dir("history.jsonl.1"))); /* not while the reader reads */
        assert_int_equal(close(fd), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        assert_true(exists(in_dir("history.jsonl.1")));
}

/* ---- damage -------------------------------------------------------------------------------- */

/* A crash in the middle of a write leaves the last line cut short. */
static void test_truncated_last_line(void **state) {
        json_object *a;
        unsigned skipped;

        append("m1", 0);
        append("m2", 0);
        append_raw("{\"time\":\"2026-12-03T06:12:01.123Z\",\"time_usec\":17962783211234");

        a = read_all(0, &skipped);
        assert_string_equal(messages(a), "m1,m2");
        assert_int_equal(skipped, 1);
        json_object_put(a);
        a = read_all(1, &skipped);
        assert_string_equal(messages(a), "m2");
        json_object_put(a);

        /* the next append starts a line of its own: nothing else is lost */
        append("m3", 0);
        append("m4", 0);
        a = read_all(0, &skipped);
        assert_string_equal(messages(a), "m1,m2,m3,m4");
        assert_int_equal(skipped, 1);
        json_object_put(a);

        /* a file of nothing but a cut line */
        write_file(in_dir("history.jsonl"), "{\"time_usec\":1,", 15, O_TRUNC);
        a = read_all(0, &skipped);
        assert_int_equal(json_object_array_length(a), 0);
        assert_int_equal(skipped, 1);
        json_object_put(a);

        /* zeros where the file system lost the data of a crash */
        write_file(in_dir("history.jsonl"), "\0\0\0\0\0\0\0\0", 8, O_TRUNC);
        append("m5", 0);
        a = read_all(0, &skipped);
        assert_string_equal(messages(a), "m5");
        assert_int_equal(skipped, 1);
        json_object_put(a);
}

static void test_malformed_lines(void **state) {
        char *huge;
        json_object *a, *o;
        unsigned skipped;
        size_t n = 100 * 1024;

        append("m1", 0);
        append_raw("not json\n");
        append_raw("[1,2]\n");
        append_raw("{}\n");
        append_raw("{\"time_usec\":5}\n");                       /* no change */
        append_raw("{\"change\":\"x\"}\n");                      /* no time */
        append_raw("{\"time_usec\":\"5\",\"change\":\"x\"}\n");  /* time not a number */
        append_raw("{\"time_usec\":-5,\"change\":\"x\"}\n");     /* negative */
        append_raw("{\"time_usec\":5,\"change\":7}\n");          /* change not a string */
        append_raw("{\"time_usec\":5,\"change\":\"x\"} tail\n"); /* more than one value */
        append_raw("{\"time_usec\":5,\"change\":\"x\"}{}\n");
        append_raw("{\"time_usec\":999999999999999999999,\"change\":\"x\"}\n"); /* year > 9999 */
        append_raw("  \n");
        /* a line too long to be ours */
        huge = malloc(n + 2);
        assert_non_null(huge);
        memset(huge, 'a', n);
        memcpy(huge, "{\"time_usec\":5,\"change\":\"", 26);
        memcpy(huge + n - 2, "\"}", 2);
        huge[n] = '\n';
        huge[n + 1] = '\0';
        append_raw(huge);
        free(huge);
        append("m2", 0);
        /* well-formed, with mistyped values: kept, the values null */
        append_raw("{\"time_usec\":7000,\"change\":\"x\",\"via\":5,\"uid\":-1,\"pid\":\"p\","
                   "\"gpu\":[],\"old\":{},\"new\":true,\"errno\":\"EBUSY\",\"result\":3,"
                   "\"message\":\"m3\",\"extra\":1}\n");
        append_raw("{\"time_usec\":8000,\"change\":\"y\",\"errno\":5,\"result\":\"EIO\","
                   "\"message\":\"m4\"}\n");
        append("m5", 0);

        a = read_all(0, &skipped);
        assert_string_equal(messages(a), "m1,m2,m3,m4,m5");
        assert_int_equal(skipped, 13);
        o = json_object_array_get_idx(a, 2);
        check_keys(o);
        assert_string_equal(get_str(o, "time"), "1970-01-01T00:00:00.007Z");
        assert_true(is_null(o, "via"));
        assert_true(is_null(o, "uid"));
        assert_true(is_null(o, "pid"));
        assert_true(is_null(o, "gpu"));
        assert_true(is_null(o, "old"));
        assert_true(is_null(o, "new"));
        assert_true(is_null(o, "errno"));
        assert_true(is_null(o, "result"));
        o = json_object_array_get_idx(a, 3);
        assert_true(is_null(o, "errno")); /* positive: not an errno of ours */
        assert_string_equal(get_str(o, "result"), "EIO");
        json_object_put(a);

        /* the last N skip the damage between them */
        a = read_all(3, &skipped);
        assert_string_equal(messages(a), "m3,m4,m5");
        assert_int_equal(skipped, 0);
        json_object_put(a);
        a = read_all(4, &skipped);
        assert_string_equal(messages(a), "m2,m3,m4,m5");
        assert_int_equal(skipped, 0);
        json_object_put(a);
        a = read_all(5, &skipped);
        assert_string_equal(messages(a), "m1,m2,m3,m4,m5");
        assert_int_equal(skipped, 13);
        json_object_put(a);
}

/* A file far beyond any bound: the end is read, not the whole. */
static void test_huge_file(void **state) {
        const char *cur = in_dir("history.jsonl");
        const size_t total = 3 * HISTORY_READ_BYTES_MAX;
        char line[256], *buf;
        size_t L, n = 0, count = 0;
        json_object *a;
        unsigned skipped;
        int fd;

        snprintf(line, sizeof(line), "{\"time_usec\":1,\"change\":\"x\",\"message\":\"%s\"}\n",
                 "filler filler filler filler filler filler filler filler filler filler");
        L = strlen(line);
        buf = malloc(1u << 20);
        assert_non_null(buf);
        while (n + L <= (1u << 20)) {
                memcpy(buf + n, line, L);
                n += L;
        }
        fd = open(cur, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
        assert_true(fd >= 0);
        for (size_t w = 0; w < total; w += n)
                assert_int_equal(write(fd, buf, n), (ssize_t) n), count += n / L;
        assert_int_equal(close(fd), 0);
        free(buf);
        append("last", 0);
        assert_true(exists(in_dir("history.jsonl.1"))); /* the append rotated it away */
        assert_int_equal(rename(in_dir("history.jsonl.1"), cur), 0);
        append_raw("{\"time_usec\":2,\"change\":\"x\",\"message\":\"end\"}\n");

        a = read_all(3, &skipped);
        assert_int_equal(json_object_array_length(a), 3);
        assert_string_equal(message_at(a, 2), "end");
        assert_int_equal(skipped, 0);
        json_object_put(a);

        /* "all" reads the last HISTORY_READ_BYTES_MAX bytes: their complete lines */
        a = read_all(0, &skipped);
        assert_int_equal(skipped, 0);
        assert_true(count > HISTORY_READ_BYTES_MAX / L);
        assert_true(json_object_array_length(a) >= HISTORY_READ_BYTES_MAX / L - 1);
        assert_true(json_object_array_length(a) <= HISTORY_READ_BYTES_MAX / L + 1);
        assert_string_equal(message_at(a, json_object_array_length(a) - 1), "end");
        json_object_put(a);
}

/* Long values are cut with a marker, invalid UTF-8 replaced, control characters escaped. */
static void test_caps(void **state) {
        const size_t mark = strlen(HISTORY_TRUNCATED);
        size_t big = 4u << 20;
        char *huge = malloc(big + 1), exact[HISTORY_FIELD_MAX + 2], accents[1301];
        struct history_entry e = entry(NULL);
        const char *s;
        json_object *a, *o;
        char *raw;
        size_t len;

        assert_non_null(huge);
        memset(huge, 'v', big);
        huge[big] = '\0';
        e.message = huge;
        e.old_value = huge;
        e.new_value = huge;
        e.sender = huge;
        e.gpu = huge;
        e.via = huge;
        assert_int_equal(history_append(&e, 0), 0);
        raw = read_file(in_dir("history.jsonl"), &len);
        assert_true(len < 8 * HISTORY_FIELD_MAX); /* one huge value cannot blow the bound */
        assert_int_equal(count_lines(raw), 1);
        free(raw);
        a = read_all(0, NULL);
        o = json_object_array_get_idx(a, 0);
        for (const char *const *k =
                     (const char *const[]){ "via", "sender", "gpu", "old", "new", "message", NULL };
             *k; k++) {
                s = get_str(o, *k);
                assert_int_equal(strlen(s), HISTORY_FIELD_MAX);
                assert_string_equal(s + HISTORY_FIELD_MAX - mark, HISTORY_TRUNCATED);
                assert_int_equal(strspn(s, "v"), HISTORY_FIELD_MAX - mark);
        }
        json_object_put(a);
        free(huge);
        assert_int_equal(unlink(in_dir("history.jsonl")), 0);

        /* exactly HISTORY_FIELD_MAX bytes: kept whole; one more: cut */
        memset(exact, 'e', HISTORY_FIELD_MAX);
        exact[HISTORY_FIELD_MAX] = '\0';
        e = entry(exact);
        assert_int_equal(history_append(&e, 0), 0);
        exact[HISTORY_FIELD_MAX] = 'e';
        exact[HISTORY_FIELD_MAX + 1] = '\0';
        assert_int_equal(history_append(&e, 0), 0);
        /* two-byte characters are never cut in half */
        for (size_t i = 0; i < 650; i++)
                memcpy(accents + 2 * i, "\xc3\xa9", 2);
        accents[1300] = '\0';
        e = entry(accents);
        assert_int_equal(history_append(&e, 0), 0);
        /* invalid UTF-8 becomes U+FFFD; newlines and escapes stay in one line */
        e = entry("bad \xff\xc3 end\nsecond line\x1b[31m\t\"quoted\"");
        assert_int_equal(history_append(&e, 0), 0);
        e = entry("\xe0\x80\xaf overlong \xed\xa0\x80 surrogate \xf4\x90\x80\x80 too big "
                  "\xf0\x9f\x98\x80 ok");
        assert_int_equal(history_append(&e, 0), 0);

        raw = read_file(in_dir("history.jsonl"), NULL);
        assert_int_equal(count_lines(raw), 5);
        assert_non_null(strstr(raw, "\\n"));
        assert_non_null(strstr(raw, "\\u001b"));
        free(raw);

        a = read_all(0, NULL);
        assert_int_equal(json_object_array_length(a), 5);
        s = message_at(a, 0);
        assert_int_equal(strlen(s), HISTORY_FIELD_MAX);
        assert_int_equal(strspn(s, "e"), HISTORY_FIELD_MAX);
        s = message_at(a, 1);
        assert_int_equal(strlen(s), HISTORY_FIELD_MAX);
        assert_int_equal(strspn(s, "e"), HISTORY_FIELD_MAX - mark);
        assert_string_equal(s + HISTORY_FIELD_MAX - mark, HISTORY_TRUNCATED);
        s = message_at(a, 2);
        len = strlen(s);
        assert_true(len <= HISTORY_FIELD_MAX);
        assert_string_equal(s + len - mark, HISTORY_TRUNCATED);
        assert_int_equal((len - mark) % 2, 0);
        assert_int_equal(len - mark, (HISTORY_FIELD_MAX - mark) / 2 * 2);
        for (size_t i = 0; i < len - mark; i += 2)
                assert_memory_equal(s + i, "\xc3\xa9", 2);
        assert_string_equal(message_at(a, 3),
                            "bad \xef\xbf\xbd\xef\xbf\xbd end\nsecond line\x1b[31m\t\"quoted\"");
        assert_string_equal(message_at(a, 4),
                            "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd overlong "
                            "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd surrogate "
                            "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd too big "
                            "\xf0\x9f\x98\x80 ok");
        json_object_put(a);
}

/* Who may not read the file gets -EACCES, not an empty history. */
static void test_unreadable(void **state) {
        pid_t pid;
        int status;

        append("m1", 0);
        if (geteuid() != 0) {
                json_object *a = NULL;

                assert_int_equal(chmod(in_dir("history.jsonl"), 0), 0);
                assert_int_equal(history_read(0, &a, NULL), -EACCES);
                assert_null(a);
                return;
        }
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                json_object *a = NULL;
                struct history_entry e = entry("m2");
                int r;

                if (setgid(65534) < 0 || setuid(65534) < 0)
                        _exit(10);
                r = history_read(0, &a, NULL);
                if (r != -EACCES || a)
                        _exit(11);
                r = history_append(&e, 0);
                if (r != -EACCES)
                        _exit(12);
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- intent records ------------------------------------------------------------------------ */

static char *intent_path(const char *id) {
        static char buf[PATH_MAX];

        snprintf(buf, sizeof(buf), "%s/intent/%s.json", tmpdir, id);
        return buf;
}

static void test_intent_round_trip(void **state) {
        struct intent a = { .gpu = BDF,
                            .change = "compute_mode",
                            .old_value = (char *) "SPX",
                            .new_value = (char *) "CPX",
                            .detail = (char *) "{\"flags\":1,\"list\":[1,2]}" };
        struct intent b = { .gpu = "", .change = "num_vfs" };
        _cleanup_strv_free_ char **skipped = NULL;
        struct intent *l = NULL;
        size_t n = 99;
        json_object *o, *v;
        char *raw;

        /* no directory yet */
        assert_int_equal(intent_list(&l, &n, &skipped), 0);
        assert_int_equal(n, 0);
        assert_null(skipped);
        intent_list_free(l, n);

        frozen_usec = T0;
        assert_int_equal(intent_begin(&a), 0);
        frozen_usec = T0 + 1;
        assert_int_equal(intent_begin(&b), 0);
        frozen_usec = 0;
        assert_int_equal(a.time_usec, T0);
        assert_int_equal(a.pid, getpid());
        assert_int_equal(b.time_usec, T0 + 1);
        assert_true(strncmp(a.id, "1796278321123456-", 17) == 0);
        assert_string_not_equal(a.id, b.id);

        raw = read_file(intent_path(a.id), NULL);
        assert_non_null(raw);
        o = json_tokener_parse(raw);
        assert_non_null(o);
        assert_string_equal(get_str(o, "id"), a.id);
        assert_string_equal(get_str(o, "time"), "2026-12-03T06:12:01.123Z");
        assert_string_equal(get_str(o, "gpu"), BDF);
        assert_string_equal(get_str(o, "old"), "SPX");
        assert_true(json_object_object_get_ex(o, "detail", &v));
        assert_true(json_object_is_type(v, json_type_object)); /* JSON, not a string of it */
        json_object_put(o);
        free(raw);
        /* no temporary file left */
        DIR *d = opendir(in_dir("intent"));
        struct dirent *de;
        size_t files = 0;
        assert_non_null(d);
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        files++;
                else
                        assert_true(strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0);
        closedir(d);
        assert_int_equal(files, 2);

        assert_int_equal(intent_list(&l, &n, &skipped), 0);
        assert_null(skipped);
        assert_int_equal(n, 2);
        assert_string_equal(l[0].id, a.id);
        assert_string_equal(l[0].gpu, BDF);
        assert_string_equal(l[0].change, "compute_mode");
        assert_string_equal(l[0].old_value, "SPX");
        assert_string_equal(l[0].new_value, "CPX");
        assert_string_equal(l[0].detail, "{\"flags\":1,\"list\":[1,2]}");
        assert_int_equal(l[0].time_usec, T0);
        assert_int_equal(l[0].pid, getpid());
        assert_string_equal(l[1].id, b.id);
        assert_string_equal(l[1].gpu, "");
        assert_null(l[1].old_value);
        assert_null(l[1].new_value);
        assert_null(l[1].detail);
        intent_list_free(l, n);

        assert_int_equal(intent_end(&a), 0);
        assert_false(exists(intent_path(a.id)));
        assert_int_equal(intent_end(&a), 0); /* already gone */
        assert_int_equal(intent_list(&l, &n, NULL), 0);
        assert_int_equal(n, 1);
        assert_string_equal(l[0].id, b.id);
        intent_list_free(l, n);
        assert_int_equal(intent_end(&b), 0);
        assert_int_equal(intent_list(&l, &n, NULL), 0);
        assert_int_equal(n, 0);
        intent_list_free(l, n);
}

static void test_intent_invalid(void **state) {
        struct intent i = { .gpu = BDF, .change = "compute_mode" };
        struct intent *l = NULL;
        size_t n;

        i.detail = (char *) "{not json";
        assert_int_equal(intent_begin(&i), -EINVAL);
        i.detail = (char *) "{} {}";
        assert_int_equal(intent_begin(&i), -EINVAL);
        i.detail = NULL;
        i.change[0] = '\0';
        assert_int_equal(intent_begin(&i), -EINVAL);
        memset(i.change, 'c', sizeof(i.change)); /* not NUL-terminated */
        assert_int_equal(intent_begin(&i), -EINVAL);
        snprintf(i.change, sizeof(i.change), "x");
        memset(i.gpu, 'g', sizeof(i.gpu));
        assert_int_equal(intent_begin(&i), -EINVAL);
        assert_int_equal(intent_list(&l, &n, NULL), 0);
        assert_int_equal(n, 0);
        intent_list_free(l, n);

        /* ids that cannot name a record */
        struct intent e = {};
        assert_int_equal(intent_end(&e), -EINVAL);
        snprintf(e.id, sizeof(e.id), "../history");
        assert_int_equal(intent_end(&e), -EINVAL);
        snprintf(e.id, sizeof(e.id), ".hidden");
        assert_int_equal(intent_end(&e), -EINVAL);
        memset(e.id, '1', sizeof(e.id));
        assert_int_equal(intent_end(&e), -EINVAL);
}

/* Many intents in the same microsecond: unique ids, listed in the order they were written. */
static void test_intent_unique(void **state) {
        enum {
                N = 300
        };
        static struct intent in[N];
        _cleanup_strv_free_ char **skipped = NULL;
        struct intent *l = NULL;
        size_t n;

        frozen_usec = T0;
        for (size_t k = 0; k < N; k++) {
                in[k] = (struct intent){ .gpu = BDF };
                snprintf(in[k].change, sizeof(in[k].change), "c%zu", k);
                assert_int_equal(intent_begin(&in[k]), 0);
                for (size_t j = 0; j < k; j++)
                        assert_string_not_equal(in[j].id, in[k].id);
        }
        frozen_usec = 0;
        assert_int_equal(intent_list(&l, &n, &skipped), 0);
        assert_null(skipped);
        assert_int_equal(n, N);
        for (size_t k = 0; k < N; k++) {
                assert_string_equal(l[k].id, in[k].id);
                assert_string_equal(l[k].change, in[k].change);
        }
        intent_list_free(l, n);
}

static void test_intent_order(void **state) {
        /* written by hand: times out of name order, another process's pid */
        static const char *const recs[][2] = {
                { "300-10-0", "{\"id\":\"300-10-0\",\"time_usec\":300,\"pid\":10,\"gpu\":\"\","
                              "\"change\":\"c\"}" },
                { "100-20-5", "{\"id\":\"100-20-5\",\"time_usec\":100,\"pid\":20,\"gpu\":\"\","
                              "\"change\":\"a\",\"old\":null,\"new\":\"x\",\"detail\":null}" },
                { "200-9-7", "{\"id\":\"200-9-7\",\"time_usec\":200,\"pid\":9,\"gpu\":\"\","
                             "\"change\":\"b\"}" },
                { "200-9-10", "{\"id\":\"200-9-10\",\"time_usec\":200,\"pid\":9,\"gpu\":\"\","
                              "\"change\":\"b2\"}" },
        };
        struct intent *l = NULL;
        size_t n;

        assert_int_equal(mkdir(in_dir("intent"), 0755), 0);
        for (size_t k = 0; k < ELEMENTSOF(recs); k++)
                write_file(intent_path(recs[k][0]), recs[k][1], strlen(recs[k][1]), 0);
        assert_int_equal(intent_list(&l, &n, NULL), 0);
        assert_int_equal(n, 4);
        assert_string_equal(l[0].change, "a");
        assert_string_equal(l[0].new_value, "x");
        assert_null(l[0].old_value);
        assert_null(l[0].detail);
        assert_string_equal(l[1].change, "b");
        assert_string_equal(l[2].change, "b2");
        assert_string_equal(l[3].change, "c");
        assert_int_equal(l[3].pid, 10);
        intent_list_free(l, n);
}

static void test_intent_malformed(void **state) {
        static const char *const bad[][2] = {
                { "1-1-0.json", "not json" },
                { "1-1-1.json", "[]" },
                { "1-1-2.json", "{\"id\":\"1-1-9\",\"time_usec\":1,\"pid\":1,\"gpu\":\"\","
                                "\"change\":\"c\"}" }, /* another id */
                { "1-1-3.json", "{\"id\":\"1-1-3\",\"time_usec\":\"1\",\"pid\":1,\"gpu\":\"\","
                                "\"change\":\"c\"}" },
                { "1-1-4.json", "{\"id\":\"1-1-4\",\"time_usec\":1,\"pid\":1,\"gpu\":\"\","
                                "\"change\":\"\"}" }, /* empty change */
                { "1-1-5.json", "{\"id\":\"1-1-5\",\"time_usec\":1,\"pid\":1,"
                                "\"gpu\":\"0000:c1:00.0-and-more\",\"change\":\"c\"}" },
                { "1-1-6.json", "{\"id\":\"1-1-6\",\"time_usec\":1,\"pid\":1,\"gpu\":\"\","
                                "\"change\":\"this change name is far too long\"}" },
                { "1-1-7.json", "{\"id\":\"1-1-7\",\"time_usec\":1,\"gpu\":\"\","
                                "\"change\":\"c\"}" }, /* no pid */
                { "1-1-8.json", "{\"id\":\"1-1-8\",\"time_usec\":1,\"pid\":1,\"gpu\":\"\","
                                "\"change\":\"c\",\"old\":5}" },
                { "1-1-9.json", "" },
                { "1-1-10.json", "{\"id\":\"1-1-10\",\"time_usec\":1,\"pid\":1,\"gpu\":\"\","
                                 "\"change\":\"c\"" }, /* cut short */
                { "notes.txt", "hello" },
                { "x.json", "{\"id\":\"x\",\"time_usec\":1,\"pid\":1,\"gpu\":\"\","
                            "\"change\":\"c\"}" }, /* not an id of ours */
        };
        const char *good = "{\"id\":\"5-5-5\",\"time_usec\":5,\"pid\":5,\"gpu\":\"" BDF "\","
                           "\"change\":\"ok\",\"unknown\":[1]}";
        _cleanup_strv_free_ char **skipped = NULL;
        struct intent *l = NULL;
        char full[PATH_MAX];
        size_t n;

        assert_int_equal(mkdir(in_dir("intent"), 0755), 0);
        for (size_t k = 0; k < ELEMENTSOF(bad); k++) {
                snprintf(full, sizeof(full), "%s/intent/%s", tmpdir, bad[k][0]);
                write_file(full, bad[k][1], strlen(bad[k][1]), 0);
        }
        assert_int_equal(mkdir(in_dir("intent/1-1-11.json"), 0755), 0); /* a directory */
        write_file(intent_path("5-5-5"), good, strlen(good), 0);
        /* a writer's temporary file, left by a crash before its rename: ignored */
        write_file(in_dir("intent/.6-6-6.json.tmp"), "{", 1, 0);

        assert_int_equal(intent_list(&l, &n, &skipped), 0);
        assert_int_equal(n, 1);
        assert_string_equal(l[0].id, "5-5-5");
        assert_string_equal(l[0].gpu, BDF);
        intent_list_free(l, n);
        assert_int_equal(strv_length(skipped), ELEMENTSOF(bad) + 1);
        for (size_t k = 0; k < ELEMENTSOF(bad); k++) {
                bool found = false;

                snprintf(full, sizeof(full), "%s/intent/%s", tmpdir, bad[k][0]);
                for (char **s = skipped; *s; s++)
                        found = found || strcmp(*s, full) == 0;
                if (!found)
                        fail_msg("%s not reported", full);
        }
        /* they stay where they are */
        assert_true(exists(intent_path("1-1-0")));

        /* skipped may be NULL */
        assert_int_equal(intent_list(&l, &n, NULL), 0);
        assert_int_equal(n, 1);
        intent_list_free(l, n);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_paths, setup, teardown),
                cmocka_unit_test_setup_teardown(test_state_directory, setup, teardown),
                cmocka_unit_test_setup_teardown(test_state_directory_mode, setup, teardown),
                cmocka_unit_test_setup_teardown(test_absent_and_empty, setup, teardown),
                cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rotation_boundary, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rotation_default, setup, teardown),
                cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
                cmocka_unit_test_setup_teardown(test_concurrent_writers_rotating, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rotation_race, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reader_blocks_rotation, setup, teardown),
                cmocka_unit_test_setup_teardown(test_truncated_last_line, setup, teardown),
                cmocka_unit_test_setup_teardown(test_malformed_lines, setup, teardown),
                cmocka_unit_test_setup_teardown(test_huge_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unreadable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_intent_round_trip, setup, teardown),
                cmocka_unit_test_setup_teardown(test_intent_invalid, setup, teardown),
                cmocka_unit_test_setup_teardown(test_intent_unique, setup, teardown),
                cmocka_unit_test_setup_teardown(test_intent_order, setup, teardown),
                cmocka_unit_test_setup_teardown(test_intent_malformed, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
