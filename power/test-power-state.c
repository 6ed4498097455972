/* SPDX-License-Identifier: MIT */
/*
 * The state file (power-state.c), each test in its own STATE_DIRECTORY: round trips, unknown
 * keys kept across a commit, every kind of damage (kept aside by a writer, left in place by a
 * reader), a newer version left alone, the lock (busy, waiting, shared), 8 processes committing
 * at once, and a writer killed at random moments that never leaves a damaged file.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <json-c/json.h>

#include "power-state.h"

#define W(x) ((uint64_t) (x) * POWER_UW_PER_W)
#define BDF "0000:c1:00.0"

static char tmpdir[128];

/* ---- helpers ------------------------------------------------------------------------------ */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static int setup(void **state) {
        const char *base = getenv("TMPDIR");

        snprintf(tmpdir, sizeof(tmpdir), "%s/test-power-state-XXXXXX",
                 base && *base ? base : "/tmp");
        if (!mkdtemp(tmpdir))
                return -1;
        setenv("STATE_DIRECTORY", tmpdir, 1);
        setenv("RUNTIME_DIRECTORY", tmpdir, 1);
        umask(022);
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

static void write_file(const char *path, const void *data, size_t len) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t) len);
        assert_int_equal(close(fd), 0);
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

static bool exists(const char *path) {
        struct stat st;

        return lstat(path, &st) == 0;
}

/* The names of the state.json.corrupt-* files, sorted; returns how many. */
static size_t list_corrupt(char names[][256], size_t max) {
        DIR *d = opendir(tmpdir);
        struct dirent *de;
        size_t n = 0;

        assert_non_null(d);
        while ((de = readdir(d)))
                if (strncmp(de->d_name, "state.json.corrupt-", 19) == 0) {
                        assert_true(n < max);
                        snprintf(names[n++], 256, "%s", de->d_name);
                }
        closedir(d);
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
                        char t[256];

                        memcpy(t, names[j], 256);
                        memcpy(names[j], names[j - 1], 256);
                        memcpy(names[j - 1], t, 256);
                }
        return n;
}

static void remove_corrupt(void) {
        char names[16][256];
        size_t n = list_corrupt(names, 16);

        for (size_t i = 0; i < n; i++)
                assert_int_equal(unlink(in_dir(names[i])), 0);
}

static void assert_source_equal(const struct power_source *a, const struct power_source *b) {
        assert_int_equal(a->present, b->present);
        if (!a->present)
                return;
        assert_int_equal(a->uw, b->uw);
        assert_string_equal(a->key, b->key);
        assert_string_equal(a->vf_bdf, b->vf_bdf);
        assert_string_equal(a->setter, b->setter);
        assert_int_equal(a->set_usec, b->set_usec);
}

static void assert_sources_equal(const struct power_sources *a, const struct power_sources *b) {
        assert_source_equal(&a->host, &b->host);
        assert_source_equal(&a->apml, &b->apml);
        assert_int_equal(a->n_vms, b->n_vms);
        for (size_t i = 0; i < a->n_vms; i++)
                assert_source_equal(&a->vms[i], &b->vms[i]);
}

static void assert_empty(const struct state_store *s, const char *bdf) {
        struct power_sources ps;
        char **l = NULL;

        assert_int_equal(state_get_power(s, bdf, &ps), 0);
        assert_false(ps.host.present);
        assert_false(ps.apml.present);
        assert_int_equal(ps.n_vms, 0);
        assert_int_equal(state_get_applied(s, bdf, NULL, NULL), -ENOENT);
        assert_int_equal(state_list_gpus(s, &l), 0);
        assert_non_null(l);
        assert_null(l[0]);
        free(l);
}

/* A copy with every ' turned into ": JSON in C strings without the escapes. */
static char *dq(const char *s) {
        char *c = strdup(s);

        assert_non_null(c);
        for (char *p = c; *p; p++)
                if (*p == '\'')
                        *p = '"';
        return c;
}

static void assert_json_file_equal(const char *path, const char *expected) {
        json_object *got = json_object_from_file(path), *want = json_tokener_parse(expected);

        assert_non_null(got);
        assert_non_null(want);
        if (!json_object_equal(got, want))
                fail_msg("%s differs:\n%s\nexpected:\n%s", path,
                         json_object_to_json_string_ext(got, JSON_C_TO_STRING_PRETTY),
                         json_object_to_json_string_ext(want, JSON_C_TO_STRING_PRETTY));
        json_object_put(got);
        json_object_put(want);
}

/* ---- directory, missing file, round trip -------------------------------------------------- */

static void test_state_dir(void **state) {
        char buf[PATH_MAX];

        setenv("STATE_DIRECTORY", "/a/b:/c/d", 1);
        assert_int_equal(state_dir(buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/a/b");
        setenv("STATE_DIRECTORY", "relative/dir", 1);
        assert_int_equal(state_dir(buf, sizeof(buf)), 0);
        assert_string_equal(buf, LOCALSTATEDIR "/lib/amdsmi");
        unsetenv("STATE_DIRECTORY");
        assert_int_equal(state_dir(buf, sizeof(buf)), 0);
        assert_string_equal(buf, LOCALSTATEDIR "/lib/amdsmi");
        setenv("STATE_DIRECTORY", "/a/b", 1);
        assert_int_equal(state_dir(buf, 4), -ENAMETOOLONG);
        assert_int_equal(state_dir(buf, 5), 0);
        assert_string_equal(buf, "/a/b");
}

static void test_missing_is_empty(void **state) {
        struct state_store *s;
        char dir[PATH_MAX + 64];
        struct stat st;

        /* A directory that does not exist: a reader sees an empty state and creates nothing. */
        snprintf(dir, sizeof(dir), "%s/var/lib/amdsmi", tmpdir);
        setenv("STATE_DIRECTORY", dir, 1);
        assert_int_equal(state_open(STATE_READ, 0, &s), 0);
        assert_null(state_warning(s));
        assert_empty(s, BDF);
        assert_int_equal(state_commit(s), -EBADF);
        state_close(s);
        assert_false(exists(in_dir("var")));

        /* A writer creates the directories (0755) and the lock, not the file until commit. */
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_null(state_warning(s));
        assert_empty(s, BDF);
        assert_int_equal(stat(dir, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0755);
        assert_int_equal(stat(in_dir("var/lib"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0755);
        assert_int_equal(stat(in_dir("var/lib/amdsmi/state.lock"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600); /* nobody else can open it, nor hold it */
        assert_false(exists(in_dir("var/lib/amdsmi/state.json")));
        assert_string_equal(state_path(s), in_dir("var/lib/amdsmi/state.json"));
        assert_int_equal(state_commit(s), 0);
        state_close(s);
        assert_int_equal(stat(in_dir("var/lib/amdsmi/state.json"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        assert_false(exists(in_dir("var/lib/amdsmi/.state.json.tmp")));
        assert_json_file_equal(in_dir("var/lib/amdsmi/state.json"), "{ \"version\": 1 }");

        /* NULL is fine for state_close(). */
        state_close(NULL);
}

static void fill_sources(struct power_sources *ps, unsigned n_vms, uint64_t seed) {
        char key[POWER_KEY_MAX], setter[POWER_SETTER_MAX];

        power_sources_init(ps);
        assert_int_equal(power_sources_set(ps, POWER_SOURCE_HOST, NULL, NULL, W(600) + seed,
                                           "uid 0 (amdsmi)", UINT64_C(1764000000000000) + seed),
                         1);
        assert_int_equal(power_sources_set(ps, POWER_SOURCE_APML, NULL, NULL, W(700),
                                           "apml file /run/amdsmi/apml/" BDF,
                                           UINT64_C(1764000000000001)),
                         1);
        for (unsigned i = 0; i < n_vms; i++) {
                char vf[POWER_BDF_MAX];

                snprintf(key, sizeof(key), "vm-%03u", i);
                snprintf(vf, sizeof(vf), "0000:c1:%02x.%u", 2 + i / 8, i % 8);
                assert_int_equal(power_sources_set(ps, POWER_SOURCE_VM, key, i % 3 ? vf : NULL,
                                                   W(100 + i) + 500000, i % 2 ? "libvirt hook" : "",
                                                   i),
                                 1);
        }
        /* The largest key and setter, and characters JSON must escape (or must not: '/'). */
        if (n_vms < POWER_VM_MAX) {
                memset(key, 'k', sizeof(key) - 1);
                key[sizeof(key) - 1] = '\0';
                memset(setter, 's', sizeof(setter) - 1);
                setter[sizeof(setter) - 1] = '\0';
                assert_int_equal(power_sources_set(ps, POWER_SOURCE_VM, key, NULL, W(1), setter,
                                                   UINT64_MAX - 1),
                                 1);
        }
        if (n_vms + 1 < POWER_VM_MAX)
                assert_int_equal(power_sources_set(ps, POWER_SOURCE_VM, "a/b \"q\" \\ \t é", NULL,
                                                   POWER_WRITE_MAX_UW, "uid 1000 (émile)", 0),
                                 1);
}

static void test_round_trip(void **state) {
        struct power_sources a, b, c, got;
        struct state_store *s;
        uint64_t uw, usec;
        char **l = NULL;
        char *text, *text2;

        fill_sources(&a, 10, 0);
        fill_sources(&b, POWER_VM_MAX, 7); /* a full GPU */
        power_sources_init(&c);
        assert_int_equal(power_sources_set(&c, POWER_SOURCE_APML, NULL, NULL, W(500), NULL, 5), 1);

        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_int_equal(state_set_power(s, "0000:c2:00.0", &b), 0);
        assert_int_equal(state_set_power(s, BDF, &a), 0);
        assert_int_equal(state_set_power(s, "0000:03:00.1", &c), 0);
        assert_int_equal(state_set_applied(s, BDF, W(450), UINT64_C(1764000000000999)), 0);
        assert_int_equal(state_set_applied(s, "0000:0a:00.0", W(300), 1), 0); /* applied only */
        /* Read back before the commit as well. */
        assert_int_equal(state_get_power(s, BDF, &got), 0);
        assert_sources_equal(&got, &a);
        assert_int_equal(state_commit(s), 0);
        state_close(s);

        assert_int_equal(state_open(STATE_READ, 0, &s), 0);
        assert_null(state_warning(s));
        assert_int_equal(state_get_power(s, BDF, &got), 0);
        assert_sources_equal(&got, &a);
        assert_int_equal(state_get_power(s, "0000:c2:00.0", &got), 0);
        assert_sources_equal(&got, &b);
        assert_int_equal(got.n_vms, POWER_VM_MAX);
        assert_int_equal(state_get_power(s, "0000:03:00.1", &got), 0);
        assert_sources_equal(&got, &c);
        assert_int_equal(state_get_power(s, "0000:0a:00.0", &got), 0);
        assert_false(got.host.present || got.apml.present || got.n_vms);
        assert_int_equal(state_get_applied(s, BDF, &uw, &usec), 0);
        assert_int_equal(uw, W(450));
        assert_int_equal(usec, UINT64_C(1764000000000999));
        assert_int_equal(state_get_applied(s, "0000:0a:00.0", &uw, &usec), 0);
        assert_int_equal(uw, W(300));
        assert_int_equal(usec, 1);
        uw = usec = 42;
        assert_int_equal(state_get_applied(s, "0000:c2:00.0", &uw, &usec), -ENOENT);
        assert_int_equal(uw, 42);
        assert_int_equal(usec, 42);
        assert_int_equal(state_get_power(s, "0000:ff:00.0", &got), 0);
        assert_false(got.host.present || got.apml.present || got.n_vms);

        assert_int_equal(state_list_gpus(s, &l), 4);
        assert_string_equal(l[0], "0000:03:00.1");
        assert_string_equal(l[1], "0000:0a:00.0");
        assert_string_equal(l[2], BDF);
        assert_string_equal(l[3], "0000:c2:00.0");
        assert_null(l[4]);
        for (size_t i = 0; l[i]; i++)
                free(l[i]);
        free(l);
        state_close(s);

        /* Pretty, '/' not escaped, version 1, ends with a newline. */
        text = read_file(in_dir("state.json"), NULL);
        assert_non_null(text);
        assert_null(strstr(text, "\\/"));
        assert_non_null(strstr(text, "a/b \\\"q\\\""));
        assert_non_null(strstr(text, "apml file /run/amdsmi/apml/"));
        assert_non_null(strchr(text, '\n'));
        assert_int_equal(text[strlen(text) - 1], '\n');

        /* Loading and committing again changes nothing. */
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_int_equal(state_commit(s), 0);
        state_close(s);
        text2 = read_file(in_dir("state.json"), NULL);
        assert_string_equal(text, text2);
        free(text);
        free(text2);
}

static void test_replace_and_remove(void **state) {
        struct power_sources a, got;
        struct state_store *s;
        uint64_t uw, usec;
        char **l = NULL;

        fill_sources(&a, 3, 0);
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_int_equal(state_set_power(s, BDF, &a), 0);
        assert_int_equal(state_set_applied(s, BDF, W(450), 9), 0);

        /* Replacing the sources keeps the applied record. */
        assert_int_equal(power_sources_clear(&a, POWER_SOURCE_HOST, NULL), 1);
        assert_int_equal(power_sources_clear(&a, POWER_SOURCE_VM, "vm-001"), 1);
        assert_int_equal(state_set_power(s, BDF, &a), 0);
        assert_int_equal(state_get_power(s, BDF, &got), 0);
        assert_sources_equal(&got, &a);
        assert_int_equal(state_get_applied(s, BDF, &uw, &usec), 0);
        assert_int_equal(uw, W(450));

        /* No source: the applied record keeps the GPU listed... */
        power_sources_init(&a);
        assert_int_equal(state_set_power(s, BDF, &a), 0);
        assert_int_equal(state_list_gpus(s, &l), 1);
        assert_string_equal(l[0], BDF);
        free(l[0]);
        free(l);
        /* ...until it goes too; an empty set for an unknown GPU records nothing. */
        assert_int_equal(state_set_applied(s, BDF, POWER_UW_UNKNOWN, 0), 0);
        assert_int_equal(state_set_power(s, "0000:c2:00.0", &a), 0);
        assert_int_equal(state_set_applied(s, "0000:c3:00.0", POWER_UW_UNKNOWN, 0), 0);
        assert_empty(s, BDF);
        assert_int_equal(state_commit(s), 0);
        state_close(s);
        assert_json_file_equal(in_dir("state.json"), "{ \"version\": 1, \"gpus\": {} }");
}

static void test_invalid_arguments(void **state) {
        static const char *const bad[] = {
                "0000:C1:00.0", "0000:c1:00.8", "0000:c1:00", "c1:00.0", "",
                "../../etc/passwd", "0000:c1:00.0/../x", "0000:c1:00.0 ", "0000-c1:00.0",
        };
        struct power_sources ps, good, got;
        struct state_store *s;
        uint64_t uw = 1, usec = 2;

        fill_sources(&good, 2, 0);
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_int_equal(state_set_power(s, BDF, &good), 0);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(state_get_power(s, bad[i], &ps), -EINVAL);
                assert_int_equal(state_set_power(s, bad[i], &good), -EINVAL);
                assert_int_equal(state_get_applied(s, bad[i], &uw, &usec), -EINVAL);
                assert_int_equal(state_set_applied(s, bad[i], W(1), 1), -EINVAL);
        }
        assert_int_equal(state_get_power(s, NULL, &ps), -EINVAL);
        assert_int_equal(state_set_power(s, NULL, &good), -EINVAL);
        assert_int_equal(state_set_power(s, BDF, NULL), -EINVAL);
        assert_int_equal(uw, 1);
        assert_int_equal(usec, 2);

        /* Sources the loader would call corrupt are refused, and nothing changes. */
        ps = good;
        ps.host.uw = 0;
        assert_int_equal(state_set_power(s, BDF, &ps), -EINVAL);
        ps = good;
        ps.apml.uw = POWER_WRITE_MAX_UW + 1;
        assert_int_equal(state_set_power(s, BDF, &ps), -EINVAL);
        ps = good;
        snprintf(ps.vms[1].key, sizeof(ps.vms[1].key), "%s", ps.vms[0].key); /* twice */
        assert_int_equal(state_set_power(s, BDF, &ps), -EINVAL);
        ps = good;
        ps.vms[0].key[0] = '\0';
        assert_int_equal(state_set_power(s, BDF, &ps), -EINVAL);
        ps = good;
        memset(ps.vms[0].setter, 'x', sizeof(ps.vms[0].setter)); /* not terminated */
        assert_int_equal(state_set_power(s, BDF, &ps), -EINVAL);
        ps = good;
        snprintf(ps.vms[0].vf_bdf, sizeof(ps.vms[0].vf_bdf), "0000:C1:02.0");
        assert_int_equal(state_set_power(s, BDF, &ps), -EINVAL);
        ps = good;
        ps.n_vms = POWER_VM_MAX + 1;
        assert_int_equal(state_set_power(s, BDF, &ps), -EINVAL);
        assert_int_equal(state_set_applied(s, BDF, 0, 1), -EINVAL);
        assert_int_equal(state_set_applied(s, BDF, POWER_WRITE_MAX_UW + 1, 1), -EINVAL);

        assert_int_equal(state_get_power(s, BDF, &got), 0);
        assert_sources_equal(&got, &good);
        assert_int_equal(state_get_applied(s, BDF, NULL, NULL), -ENOENT);
        state_close(s);
}

/* ---- unknown keys ------------------------------------------------------------------------- */

static void test_unknown_keys_kept(void **state) {
        /* Written with ' for " (see dq()). */
        static const char before[] =
                "{ 'version': 1,\n"
                "  'daemon': { 'x': [ 1, 2, { 'y': null } ], 's': 'a/b' },\n"
                "  'gpus': {\n"
                "    '0000:c1:00.0': {\n"
                "      'partition': { 'compute': 'CPX' },\n"
                "      'power': {\n"
                "        'future': true,\n"
                "        'host': { 'uw': 600000000, 'setter': 'uid 0', 'set_usec': 10,\n"
                "                  'note': 'keep me' },\n"
                "        'apml': { 'uw': 700000000, 'set_usec': 11, 'bmc': { 'id': 3 } },\n"
                "        'vms': [\n"
                "          { 'key': 'vm1', 'uw': 500000000, 'set_usec': 12, 'extra': 1 },\n"
                "          { 'key': 'vm2', 'uw': 400000000, 'set_usec': 13, 'extra': 2,\n"
                "            'vf_bdf': '0000:c1:02.1' } ],\n"
                "        'applied': { 'uw': 400000000, 'usec': 14, 'by': 'amdsmid' } } },\n"
                "    '0000:c2:00.0': { 'other': 1 },\n"
                "    '0000:c4:00.0': { 'power': { 'later': 1 } } },\n"
                "  'zzz': 'last' }\n";
        static const char after[] =
                "{ 'version': 1,\n"
                "  'daemon': { 'x': [ 1, 2, { 'y': null } ], 's': 'a/b' },\n"
                "  'gpus': {\n"
                "    '0000:c1:00.0': {\n"
                "      'partition': { 'compute': 'CPX' },\n"
                "      'power': {\n"
                "        'future': true,\n"
                "        'host': { 'uw': 550000000, 'setter': 'uid 1000', 'set_usec': 20,\n"
                "                  'note': 'keep me' },\n"
                "        'vms': [\n"
                "          { 'key': 'vm1', 'uw': 450000000, 'setter': '', 'set_usec': 22,\n"
                "            'extra': 1, 'vf_bdf': '0000:c1:02.0' },\n"
                "          { 'key': 'vm3', 'uw': 300000000, 'setter': 'hook', 'set_usec': 23 } ],\n"
                "        'applied': { 'uw': 450000000, 'usec': 21, 'by': 'amdsmid' } } },\n"
                "    '0000:c2:00.0': { 'other': 1 },\n"
                "    '0000:c3:00.0': { 'power': {\n"
                "      'host': { 'uw': 1000000, 'setter': '', 'set_usec': 0 } } },\n"
                "    '0000:c4:00.0': { 'power': { 'later': 1 } } },\n"
                "  'zzz': 'last' }\n";
        char *text_before = dq(before), *text_after = dq(after);
        struct power_sources ps;
        struct state_store *s;
        char **l = NULL;

        write_file(in_dir("state.json"), text_before, strlen(text_before));
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_null(state_warning(s));
        assert_int_equal(state_get_power(s, BDF, &ps), 0);
        assert_true(ps.host.present);
        assert_string_equal(ps.host.setter, "uid 0");
        assert_true(ps.apml.present);
        assert_string_equal(ps.apml.setter, "");
        assert_int_equal(ps.n_vms, 2);
        assert_string_equal(ps.vms[1].vf_bdf, "0000:c1:02.1");

        assert_int_equal(power_sources_set(&ps, POWER_SOURCE_HOST, NULL, NULL, W(550), "uid 1000",
                                           20),
                         0);
        assert_int_equal(power_sources_clear(&ps, POWER_SOURCE_APML, NULL), 1);
        assert_int_equal(power_sources_clear(&ps, POWER_SOURCE_VM, "vm2"), 1);
        assert_int_equal(power_sources_set(&ps, POWER_SOURCE_VM, "vm1", "0000:c1:02.0", W(450),
                                           NULL, 22),
                         0);
        assert_int_equal(power_sources_set(&ps, POWER_SOURCE_VM, "vm3", NULL, W(300), "hook", 23),
                         1);
        assert_int_equal(state_set_power(s, BDF, &ps), 0);
        assert_int_equal(state_set_applied(s, BDF, W(450), 21), 0);

        /* A GPU with only keys of others stays; one whose power object holds unknown keys too. */
        power_sources_init(&ps);
        assert_int_equal(state_set_power(s, "0000:c2:00.0", &ps), 0);
        assert_int_equal(state_set_power(s, "0000:c4:00.0", &ps), 0);
        assert_int_equal(state_set_applied(s, "0000:c4:00.0", POWER_UW_UNKNOWN, 0), 0);
        assert_int_equal(power_sources_set(&ps, POWER_SOURCE_HOST, NULL, NULL, W(1), NULL, 0), 1);
        assert_int_equal(state_set_power(s, "0000:c3:00.0", &ps), 0);

        /* Only GPUs with a source or an applied cap are listed. */
        assert_int_equal(state_list_gpus(s, &l), 2);
        assert_string_equal(l[0], BDF);
        assert_string_equal(l[1], "0000:c3:00.0");
        free(l[0]);
        free(l[1]);
        free(l);

        assert_int_equal(state_commit(s), 0);
        state_close(s);
        assert_json_file_equal(in_dir("state.json"), text_after);

        /* And once more through a reader and a writer that changes nothing. */
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_null(state_warning(s));
        assert_int_equal(state_commit(s), 0);
        state_close(s);
        assert_json_file_equal(in_dir("state.json"), text_after);
        free(text_before);
        free(text_after);
}

/* ---- damage ------------------------------------------------------------------------------- */

#define DOC(gpu) "{\"version\":1,\"gpus\":{\"0000:c1:00.0\":" gpu "}}"
#define POWER(p) DOC("{\"power\":" p "}")
#define HOST(fields) POWER("{\"host\":{" fields "}}")
#define VMS(list) POWER("{\"vms\":[" list "]}")
#define VM(key) "{\"key\":\"" key "\",\"uw\":5000000,\"set_usec\":1}"
#define K16 "kkkkkkkkkkkkkkkk"
#define K128 K16 K16 K16 K16 K16 K16 K16 K16
#define S256 K128 K128

struct corrupt_case {
        const char *name;
        const char *data;
        size_t len;
        const char *why; /* in the warning; for a record, in "where: problem" or where.problem */
        bool file;       /* the file cannot be read as a whole */
};

#define FILECASE(name, lit, why) { name, lit, sizeof(lit) - 1, why, true }
#define CASE(name, lit, why) { name, lit, sizeof(lit) - 1, why, false }

static const struct corrupt_case corrupt_cases[] = {
        FILECASE("not JSON", "hello\n", "not valid JSON"),
        FILECASE("empty file", "", "empty file"),
        FILECASE("truncated", "{\"version\": 1, \"gpus\": {\"0000:c1:00.0\": {\"power\": {\"host\": "
                          "{\"uw\": 6",
             "ends too early"),
        FILECASE("truncated in a string", "{\"version\": 1, \"gpus\": {\"0000:c1", "ends too early"),
        FILECASE("array at the top", "[1, 2]\n", "the top level is not an object (array)"),
        FILECASE("string at the top", "\"state\"", "the top level is not an object (string)"),
        FILECASE("text after", "{\"version\": 1} {}", "text after the document"),
        FILECASE("NUL byte", "{\"version\": 1}\n\0\n", "NUL byte at byte 15"),
        FILECASE("bad UTF-8", "{\"version\": 1, \"x\": \"\xff\xfe\"}", "not valid JSON"),
        FILECASE("trailing comma", "{\"version\": 1,}", "not valid JSON at byte 14"),
        FILECASE("comment", "{\"version\": 1 /* c */}", "not valid JSON"),
        FILECASE("version 0", "{\"version\": 0}", "version: 0 is not a version"),
        FILECASE("version -1", "{\"version\": -1}", "version: -1 is not a version"),
        FILECASE("version \"1\"", "{\"version\": \"1\"}", "version: not an integer (string)"),
        FILECASE("version 1.0", "{\"version\": 1.0}", "version: not an integer (double)"),
        FILECASE("version missing", "{\"gpus\": {}}", "version: missing"),
        CASE("gpus array", "{\"version\": 1, \"gpus\": []}", "gpus: not an object (array)"),
        CASE("upper-case BDF", "{\"version\":1,\"gpus\":{\"0000:C1:00.0\":{}}}",
             "gpus.0000:C1:00.0: '0000:C1:00.0' is not a PCI address"),
        CASE("short BDF", "{\"version\":1,\"gpus\":{\"c1:00.0\":{}}}",
             "gpus.c1:00.0: 'c1:00.0' is not a PCI address"),
        CASE("function 8", "{\"version\":1,\"gpus\":{\"0000:c1:00.8\":{}}}",
             "'0000:c1:00.8' is not a PCI address"),
        CASE("gpu not an object", DOC("7"), "gpus.0000:c1:00.0: not an object (int)"),
        CASE("power not an object", POWER("[]"), "gpus.0000:c1:00.0.power: not an object (array)"),
        CASE("host not an object", POWER("{\"host\":600}"),
             "gpus.0000:c1:00.0.power.host: not an object (int)"),
        CASE("uw string", HOST("\"uw\":\"600W\",\"set_usec\":1"),
             "gpus.0000:c1:00.0.power.host.uw: not an integer (string)"),
        CASE("uw double", HOST("\"uw\":600000000.5,\"set_usec\":1"),
             "power.host.uw: not an integer (double)"),
        CASE("uw 0", HOST("\"uw\":0,\"set_usec\":1"), "power.host.uw: 0 µW is less than 1 W"),
        CASE("uw below 1 W", HOST("\"uw\":999999,\"set_usec\":1"), "less than 1 W"),
        CASE("uw too big", HOST("\"uw\":4294967296,\"set_usec\":1"),
             "power.host.uw: 4294967296 µW is more than 4294967295 µW"),
        CASE("uw huge", HOST("\"uw\":18446744073709551615,\"set_usec\":1"), "more than"),
        /* json-c would clamp it: the record could not be written back as it was read */
        FILECASE("uw beyond 64 bits", HOST("\"uw\":18446744073709551616,\"set_usec\":1"),
                 "an integer beyond 64 bits at byte 59"),
        FILECASE("negative beyond 64 bits", "{\"version\":1,\"x\":-9223372036854775809}",
                 "an integer beyond 64 bits at byte 17"),
        CASE("uw negative", HOST("\"uw\":-5,\"set_usec\":1"), "power.host.uw: negative (-5)"),
        CASE("uw missing", HOST("\"set_usec\":1"), "power.host.uw: missing"),
        CASE("set_usec missing", HOST("\"uw\":5000000"), "power.host.set_usec: missing"),
        CASE("set_usec string", HOST("\"uw\":5000000,\"set_usec\":\"now\""),
             "power.host.set_usec: not an integer (string)"),
        CASE("setter number", HOST("\"uw\":5000000,\"set_usec\":1,\"setter\":0"),
             "power.host.setter: not a string (int)"),
        CASE("setter too long", HOST("\"uw\":5000000,\"set_usec\":1,\"setter\":\"" S256 "\""),
             "power.host.setter: longer than 255 bytes"),
        CASE("setter with NUL", HOST("\"uw\":5000000,\"set_usec\":1,\"setter\":\"a\\u0000b\""),
             "power.host.setter: contains a NUL character"),
        CASE("apml uw 0", POWER("{\"apml\":{\"uw\":0,\"set_usec\":1}}"), "power.apml.uw: 0 µW"),
        CASE("vms not an array", POWER("{\"vms\":{}}"), "power.vms: not an array (object)"),
        CASE("vm not an object", VMS("1"), "power.vms[0]: not an object (int)"),
        CASE("duplicate VM key", VMS(VM("vm1") "," VM("vm2") "," VM("vm1")),
             "power.vms[2].key: 'vm1' appears twice"),
        CASE("too-long VM key", VMS(VM(K128)), "power.vms[0].key: longer than 127 bytes"),
        CASE("empty VM key", VMS(VM("")), "power.vms[0].key: empty"),
        CASE("VM key missing", VMS("{\"uw\":5000000,\"set_usec\":1}"), "power.vms[0].key: missing"),
        CASE("bad vf_bdf", VMS("{\"key\":\"a\",\"vf_bdf\":\"../x\",\"uw\":5000000,\"set_usec\":1}"),
             "power.vms[0].vf_bdf: '../x' is not a PCI address"),
        CASE("vm uw string", VMS(VM("a") ",{\"key\":\"b\",\"uw\":\"1\",\"set_usec\":1}"),
             "power.vms[1].uw: not an integer (string)"),
        CASE("applied not an object", POWER("{\"applied\":true}"),
             "power.applied: not an object (boolean)"),
        CASE("applied usec missing", POWER("{\"applied\":{\"uw\":5000000}}"),
             "power.applied.usec: missing"),
        CASE("applied uw 0", POWER("{\"applied\":{\"uw\":0,\"usec\":1}}"), "power.applied.uw: 0"),
};

/* A file damaged as a whole: read as empty, never written over, kept aside only when the
 * damage is dropped. */
static void check_corrupt(const char *name, const char *data, size_t len, const char *why) {
        struct state_store *s;
        char names[16][256], expect[PATH_MAX + 512], first[256];
        json_object *dropped = NULL;
        char *content;
        size_t clen;
        struct power_sources ps;

        remove_corrupt();
        write_file(in_dir("state.json"), data, len);

        /* A reader: empty, says why, leaves the file where it is. */
        assert_int_equal(state_open(STATE_READ, 0, &s), 0);
        if (!state_warning(s))
                fail_msg("%s: no warning", name);
        snprintf(expect, sizeof(expect), "%s is damaged (", in_dir("state.json"));
        if (strncmp(state_warning(s), expect, strlen(expect)) != 0 ||
            !strstr(state_warning(s), why) ||
            !strstr(state_warning(s), "): left as it is, reading an empty state"))
                fail_msg("%s: warning '%s' (expected '%s')", name, state_warning(s), why);
        assert_empty(s, BDF);
        assert_int_equal(state_damage_count(s), 1);
        assert_string_equal(state_damage_find(s, BDF)->where, "");
        assert_int_equal(state_commit(s), -EBADF);
        /* a dry run of the drop names it and changes nothing */
        assert_int_equal(state_drop_damaged(s, BDF, &dropped), 1);
        assert_int_equal(json_object_array_length(dropped), 1);
        json_object_put(dropped);
        state_close(s);
        assert_int_equal(list_corrupt(names, 16), 0);

        /* A writer: empty, nothing can be changed or committed, the file stays. */
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_non_null(state_warning(s));
        assert_int_equal(state_can_commit(s), -EUCLEAN);
        power_sources_init(&ps);
        assert_int_equal(power_sources_set(&ps, POWER_SOURCE_HOST, NULL, NULL, W(500), NULL, 1), 1);
        assert_int_equal(state_set_power(s, BDF, &ps), -EUCLEAN);
        assert_int_equal(state_commit(s), -EUCLEAN);
        state_close(s);
        assert_int_equal(list_corrupt(names, 16), 0);
        content = read_file(in_dir("state.json"), &clen);
        assert_non_null(content);
        assert_int_equal(clen, len);
        assert_memory_equal(content, data, len);
        free(content);

        /* Dropping the damage keeps the file aside intact, named in the list. */
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_int_equal(state_drop_damaged(s, BDF, &dropped), 1);
        assert_false(exists(in_dir("state.json")));
        assert_int_equal(list_corrupt(names, 16), 1);
        snprintf(first, sizeof(first), "%s", names[0]);
        assert_string_equal(json_object_get_string(json_object_object_get(
                                    json_object_array_get_idx(dropped, 0), "kept_as")),
                            in_dir(names[0]));
        json_object_put(dropped);
        assert_int_equal(state_damage_count(s), 0);
        assert_int_equal(state_can_commit(s), 0);
        assert_empty(s, BDF);
        state_close(s);
        content = read_file(in_dir(names[0]), &clen);
        assert_non_null(content);
        assert_int_equal(clen, len);
        assert_memory_equal(content, data, len);
        free(content);
        /* state.json.corrupt-YYYYmmddTHHMMSSZ */
        assert_int_equal(strlen(names[0]), strlen("state.json.corrupt-20261202T181500Z"));
        assert_int_equal(names[0][strlen(names[0]) - 1], 'Z');
        assert_int_equal(names[0][27], 'T');

        /* The same damage again (within the same second, usually): another name. */
        write_file(in_dir("state.json"), data, len);
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_int_equal(state_drop_damaged(s, NULL, NULL), 1);
        assert_int_equal(list_corrupt(names, 16), 2);
        assert_string_not_equal(names[0], names[1]);
        assert_true(strcmp(names[0], first) == 0 || strcmp(names[1], first) == 0);
        for (size_t i = 0; i < 2; i++) {
                content = read_file(in_dir(names[i]), &clen);
                assert_non_null(content);
                assert_int_equal(clen, len);
                assert_memory_equal(content, data, len);
                free(content);
        }

        /* The writer starts afresh: what it commits loads without a warning. */
        assert_int_equal(state_set_power(s, BDF, &ps), 0);
        assert_int_equal(state_commit(s), 0);
        state_close(s);
        assert_int_equal(state_open(STATE_READ, 0, &s), 0);
        assert_null(state_warning(s));
        assert_int_equal(state_get_power(s, BDF, &ps), 0);
        assert_int_equal(ps.host.uw, W(500));
        state_close(s);
        assert_int_equal(list_corrupt(names, 16), 2);
}

/* Whether a damaged record of @s says @why, as "where: problem" or "where.problem". */
static bool damage_says(const struct state_store *s, const char *why) {
        for (size_t i = 0; i < state_damage_count(s); i++) {
                const struct state_damage *d = state_damage_get(s, i);
                char combined[1024];

                snprintf(combined, sizeof(combined), "%s: %s", d->where, d->problem);
                if (strstr(combined, why))
                        return true;
                snprintf(combined, sizeof(combined), "%s.%s", d->where, d->problem);
                if (strstr(combined, why))
                        return true;
        }
        return false;
}

#define BDF2 "0000:c2:00.0"

/* A damaged record: named, kept verbatim through commits, the other records read and
 * changeable, its GPU's records refused until dropped. */
static void check_record(const char *name, const char *data, size_t len, const char *why) {
        static const char other[] = "\"" BDF2 "\":{\"power\":{\"host\":{\"uw\":500000000,"
                                    "\"set_usec\":1}}},";
        const char *at = strstr(data, "\"gpus\":{");
        char doc[32768], names[16][256];
        const struct state_damage *d;
        struct state_store *s;
        struct power_sources ps, mine;
        json_object *dropped = NULL;
        bool global;
        size_t n;

        remove_corrupt();
        /* another GPU's intact record beside the damage, when the document has a "gpus" object */
        if (at) {
                size_t head = (size_t) (at - data) + strlen("\"gpus\":{");

                assert_true(len + sizeof(other) < sizeof(doc));
                memcpy(doc, data, head);
                memcpy(doc + head, other, sizeof(other) - 1);
                memcpy(doc + head + sizeof(other) - 1, data + head, len - head);
                n = len + sizeof(other) - 1;
                if (doc[head + sizeof(other) - 1] == '}') /* "gpus":{} : no trailing comma */
                        doc[head + sizeof(other) - 2] = ' ';
        } else {
                memcpy(doc, data, len);
                n = len;
        }
        write_file(in_dir("state.json"), doc, n);

        assert_int_equal(state_open(STATE_READ, 0, &s), 0);
        if (!state_warning(s) || !strstr(state_warning(s), "the record "))
                fail_msg("%s: warning '%s'", name, state_warning(s) ?: "(none)");
        assert_true(state_damage_count(s) >= 1);
        if (!damage_says(s, why))
                fail_msg("%s: no damaged record says '%s' (first: %s: %s)", name, why,
                         state_damage_get(s, 0)->where, state_damage_get(s, 0)->problem);
        d = state_damage_find(s, BDF);
        assert_non_null(d);
        global = d->bdf[0] == '\0';
        if (at && !global) {
                assert_int_equal(state_get_power(s, BDF2, &ps), 0);
                assert_true(ps.host.present);
                assert_int_equal(ps.host.uw, W(500));
        }
        state_close(s);

        /* A writer: the damaged GPU is refused, another one changes; the damage is written back
         * as it was. */
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_int_equal(list_corrupt(names, 16), 0);
        power_sources_init(&mine);
        assert_int_equal(power_sources_set(&mine, POWER_SOURCE_HOST, NULL, NULL, W(400), NULL, 1), 1);
        assert_int_equal(state_set_power(s, BDF, &mine), -EUCLEAN);
        assert_int_equal(state_set_applied(s, BDF, W(400), 1), -EUCLEAN);
        assert_int_equal(state_set_power(s, BDF2, &mine), global ? -EUCLEAN : 0);
        assert_int_equal(state_commit(s), 0);
        state_close(s);
        assert_int_equal(state_open(STATE_READ, 0, &s), 0);
        if (!damage_says(s, why))
                fail_msg("%s: the damaged record was not written back", name);
        if (at && !global) {
                assert_int_equal(state_get_power(s, BDF2, &ps), 0);
                assert_int_equal(ps.host.uw, W(400));
        }
        state_close(s);

        /* Dropped: gone, the rest kept; the GPU changes again. */
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_true(state_drop_damaged(s, BDF, &dropped) >= 1);
        assert_true(json_object_array_length(dropped) >= 1);
        json_object_put(dropped);
        assert_null(state_damage_find(s, BDF));
        assert_int_equal(state_set_power(s, BDF, &mine), 0);
        assert_int_equal(state_commit(s), 0);
        state_close(s);
        assert_int_equal(state_open(STATE_READ, 0, &s), 0);
        assert_null(state_damage_find(s, BDF));
        assert_int_equal(state_get_power(s, BDF, &ps), 0);
        assert_int_equal(ps.host.uw, W(400));
        if (at && !global) {
                assert_int_equal(state_get_power(s, BDF2, &ps), 0);
                assert_int_equal(ps.host.uw, W(400));
        }
        state_close(s);
        assert_int_equal(list_corrupt(names, 16), 0);
        assert_int_equal(unlink(in_dir("state.json")), 0);
}

static void test_corrupt(void **state) {
        for (size_t i = 0; i < sizeof(corrupt_cases) / sizeof(corrupt_cases[0]); i++)
                (corrupt_cases[i].file ? check_corrupt : check_record)(
                        corrupt_cases[i].name, corrupt_cases[i].data, corrupt_cases[i].len,
                        corrupt_cases[i].why);
}

static void test_corrupt_too_many_vms(void **state) {
        char doc[16384];
        size_t n;

        n = (size_t) snprintf(doc, sizeof(doc),
                              "{\"version\":1,\"gpus\":{\"0000:c1:00.0\":{\"power\":{\"vms\":[");
        for (unsigned i = 0; i <= POWER_VM_MAX; i++)
                n += (size_t) snprintf(doc + n, sizeof(doc) - n,
                                       "%s{\"key\":\"vm%u\",\"uw\":5000000,\"set_usec\":1}",
                                       i ? "," : "", i);
        n += (size_t) snprintf(doc + n, sizeof(doc) - n, "]}}}}");
        assert_true(n < sizeof(doc));
        check_record("65 VMs", doc, n, "power.vms[64]: more than 64 VMs");
}

/* The largest valid values load (the boundaries of the checks above). */
static void test_boundaries_load(void **state) {
        static const char doc[] =
                "{\"version\":1,\"gpus\":{\"0000:c1:00.0\":{\"power\":{"
                "\"host\":{\"uw\":4294967295,\"set_usec\":18446744073709551615,\"setter\":\"" K128
                K16 K16 K16 K16 K16 K16 K16 "kkkkkkkkkkkkkkk\"},"
                "\"apml\":{\"uw\":1000000,\"set_usec\":0},"
                "\"vms\":[{\"key\":\"" K16 K16 K16 K16 K16 K16 K16
                "kkkkkkkkkkkkkkk\",\"vf_bdf\":\"ffff:ff:1f.7\",\"uw\":1000000,\"set_usec\":0},"
                "{\"key\":\"b\",\"vf_bdf\":\"\",\"uw\":1000000,\"set_usec\":0}],"
                "\"applied\":{\"uw\":4294967295,\"usec\":0}}}}}";
        struct power_sources ps;
        struct state_store *s;
        uint64_t uw;

        write_file(in_dir("state.json"), doc, sizeof(doc) - 1);
        assert_int_equal(state_open(STATE_READ, 0, &s), 0);
        assert_null(state_warning(s));
        assert_int_equal(state_get_power(s, BDF, &ps), 0);
        assert_int_equal(ps.host.uw, POWER_WRITE_MAX_UW);
        assert_int_equal(ps.host.set_usec, UINT64_MAX);
        assert_int_equal(strlen(ps.host.setter), POWER_SETTER_MAX - 1);
        assert_int_equal(ps.apml.uw, POWER_FLOOR_UW);
        assert_int_equal(ps.n_vms, 2);
        assert_string_equal(ps.vms[0].key, "b");
        assert_int_equal(strlen(ps.vms[1].key), POWER_KEY_MAX - 1);
        assert_string_equal(ps.vms[1].vf_bdf, "ffff:ff:1f.7");
        assert_int_equal(state_get_applied(s, BDF, &uw, NULL), 0);
        assert_int_equal(uw, POWER_WRITE_MAX_UW);
        state_close(s);
}

static void test_newer_version(void **state) {
        static const char doc[] =
                "{ \"version\": 2, \"gpus\": { \"whatever\": 5 }, \"new\": [] }\n";
        struct power_sources ps;
        struct state_store *s;
        char names[4][256], *content;

        write_file(in_dir("state.json"), doc, sizeof(doc) - 1);
        for (int mode = STATE_READ; mode <= STATE_WRITE; mode++) {
                assert_int_equal(state_open((enum state_mode) mode, 0, &s), 0);
                assert_non_null(state_warning(s));
                assert_non_null(strstr(state_warning(s), "of version 2, newer than"));
                assert_non_null(strstr(state_warning(s), in_dir("state.json")));
                assert_null(strstr(state_warning(s), "corrupt"));
                assert_empty(s, BDF);
                fill_sources(&ps, 1, 0);
                assert_int_equal(state_set_power(s, BDF, &ps), 0); /* in memory only */
                assert_int_equal(state_commit(s),
                                 mode == STATE_WRITE ? -EPROTONOSUPPORT : -EBADF);
                state_close(s);
                content = read_file(in_dir("state.json"), NULL);
                assert_non_null(content);
                assert_string_equal(content, doc);
                free(content);
                assert_int_equal(list_corrupt(names, 4), 0);
                assert_false(exists(in_dir(".state.json.tmp")));
        }
}

/* ---- commit ------------------------------------------------------------------------------- */

static void test_commit_read_mode(void **state) {
        struct power_sources ps;
        struct state_store *s;

        assert_int_equal(state_open(STATE_READ, 0, &s), 0);
        fill_sources(&ps, 1, 0);
        assert_int_equal(state_set_power(s, BDF, &ps), 0);
        assert_int_equal(state_commit(s), -EBADF);
        state_close(s);
        assert_false(exists(in_dir("state.json")));
        assert_false(exists(in_dir(".state.json.tmp")));
        assert_int_equal(state_commit(NULL), -EINVAL);
}

static void test_commit_failure_keeps_old(void **state) {
        struct power_sources a, b, got;
        struct state_store *s;
        char *before, *after;

        fill_sources(&a, 2, 0);
        fill_sources(&b, 5, 1);
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_int_equal(state_set_power(s, BDF, &a), 0);
        assert_int_equal(state_commit(s), 0);
        before = read_file(in_dir("state.json"), NULL);

        /* The temp file cannot be created: the old file stays, the error comes back. */
        assert_int_equal(mkdir(in_dir(".state.json.tmp"), 0755), 0);
        assert_int_equal(state_set_power(s, BDF, &b), 0);
        assert_int_equal(state_commit(s), -EISDIR);
        after = read_file(in_dir("state.json"), NULL);
        assert_string_equal(before, after);
        free(after);
        assert_int_equal(rmdir(in_dir(".state.json.tmp")), 0);

        /* A stale temp file (a writer killed mid-write) does not get in the way. */
        write_file(in_dir(".state.json.tmp"), "{\"garbage", 9);
        assert_int_equal(state_commit(s), 0);
        state_close(s);
        assert_false(exists(in_dir(".state.json.tmp")));
        assert_int_equal(state_open(STATE_READ, 0, &s), 0);
        assert_null(state_warning(s));
        assert_int_equal(state_get_power(s, BDF, &got), 0);
        assert_sources_equal(&got, &b);
        state_close(s);
        free(before);
}

/* ---- the lock ----------------------------------------------------------------------------- */

static void test_read_without_lock(void **state) {
        static const char doc[] = "{\"version\":1,\"gpus\":{\"0000:c1:00.0\":{\"power\":"
                                  "{\"host\":{\"uw\":5000000,\"set_usec\":1}}}}}";
        struct power_sources ps;
        struct state_store *s;

        /* No lock file (written by an older tool, or a directory the reader cannot write). */
        write_file(in_dir("state.json"), doc, sizeof(doc) - 1);
        assert_int_equal(state_open(STATE_READ, 0, &s), 0);
        assert_null(state_warning(s));
        assert_int_equal(state_get_power(s, BDF, &ps), 0);
        assert_int_equal(ps.host.uw, W(5));
        state_close(s);
        assert_false(exists(in_dir("state.lock")));
}

static uint64_t mono_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void test_lock_in_process(void **state) {
        struct state_store *a, *b, *c;
        uint64_t t0;

        /* Two opens are two open file descriptions: they exclude each other like processes. */
        assert_int_equal(state_open(STATE_WRITE, 0, &a), 0);
        b = (struct state_store *) 0x1;
        assert_int_equal(state_open(STATE_WRITE, 0, &b), -EBUSY);
        assert_ptr_equal(b, (struct state_store *) 0x1);
        assert_int_equal(state_open(STATE_READ, 0, &b), -EBUSY);
        t0 = mono_ms();
        assert_int_equal(state_open(STATE_WRITE, 120, &b), -EBUSY);
        assert_true(mono_ms() - t0 >= 115);
        state_close(a);

        /* Readers share; a writer waits for all of them. */
        assert_int_equal(state_open(STATE_READ, 0, &a), 0);
        assert_int_equal(state_open(STATE_READ, 0, &b), 0);
        assert_int_equal(state_open(STATE_WRITE, 0, &c), -EBUSY);
        state_close(a);
        assert_int_equal(state_open(STATE_WRITE, 0, &c), -EBUSY);
        state_close(b);
        assert_int_equal(state_open(STATE_WRITE, 0, &c), 0);
        state_close(c);
}

static void test_lock_other_process(void **state) {
        int held[2], release[2], status;
        struct state_store *s;
        uint64_t t0;
        pid_t pid;
        char c;

        assert_int_equal(pipe(held), 0);
        assert_int_equal(pipe(release), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct state_store *x;

                if (state_open(STATE_WRITE, 0, &x) < 0)
                        _exit(2);
                if (write(held[1], "h", 1) != 1)
                        _exit(3);
                if (read(release[0], &c, 1) != 1)
                        _exit(4);
                usleep(200 * 1000);
                state_close(x);
                _exit(0);
        }
        assert_int_equal(read(held[0], &c, 1), 1);
        assert_int_equal(state_open(STATE_WRITE, 0, &s), -EBUSY);
        assert_int_equal(state_open(STATE_READ, 0, &s), -EBUSY);
        assert_int_equal(state_open(STATE_READ, 50, &s), -EBUSY);

        /* Waiting: the child lets go after 200 ms. */
        assert_int_equal(write(release[1], "r", 1), 1);
        t0 = mono_ms();
        assert_int_equal(state_open(STATE_WRITE, 5000, &s), 0);
        assert_true(mono_ms() - t0 >= 150);
        state_close(s);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        close(held[0]);
        close(held[1]);
        close(release[0]);
        close(release[1]);
}

/* ---- many writers ------------------------------------------------------------------------- */

#define N_CHILDREN 8
#define N_ROUNDS 20
#define N_BDFS 4

static void bdf_of(unsigned i, char buf[POWER_BDF_MAX]) {
        snprintf(buf, POWER_BDF_MAX, "0000:%02x:00.0", 0xc1 + i % N_BDFS);
}

static int concurrent_child(unsigned child) {
        for (unsigned j = 0; j < N_ROUNDS; j++) {
                struct power_sources ps;
                struct state_store *s;
                char bdf[POWER_BDF_MAX], key[32];

                bdf_of(child * N_ROUNDS + j, bdf);
                snprintf(key, sizeof(key), "child%u-key%02u", child, j);
                if (state_open(STATE_WRITE, 10000, &s) < 0)
                        return 2;
                if (state_warning(s))
                        return 3;
                if (state_get_power(s, bdf, &ps) < 0)
                        return 4;
                if (power_sources_set(&ps, POWER_SOURCE_VM, key, NULL, W(100 + j), "test",
                                      child) != 1)
                        return 5;
                if (state_set_power(s, bdf, &ps) < 0)
                        return 6;
                if (state_commit(s) < 0)
                        return 7;
                state_close(s);
        }
        return 0;
}

static void test_concurrent_writers(void **state) {
        pid_t pids[N_CHILDREN];
        struct state_store *s;
        size_t total = 0;

        for (unsigned i = 0; i < N_CHILDREN; i++) {
                pids[i] = fork();
                assert_true(pids[i] >= 0);
                if (pids[i] == 0)
                        _exit(concurrent_child(i));
        }
        for (unsigned i = 0; i < N_CHILDREN; i++) {
                int status;

                assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
                assert_true(WIFEXITED(status));
                assert_int_equal(WEXITSTATUS(status), 0);
        }

        assert_int_equal(state_open(STATE_READ, 0, &s), 0);
        assert_null(state_warning(s));
        for (unsigned b = 0; b < N_BDFS; b++) {
                struct power_sources ps;
                char bdf[POWER_BDF_MAX];

                bdf_of(b, bdf);
                assert_int_equal(state_get_power(s, bdf, &ps), 0);
                total += ps.n_vms;
        }
        assert_int_equal(total, N_CHILDREN * N_ROUNDS);
        for (unsigned i = 0; i < N_CHILDREN; i++)
                for (unsigned j = 0; j < N_ROUNDS; j++) {
                        struct power_sources ps;
                        const struct power_source *vm;
                        char bdf[POWER_BDF_MAX], key[32];

                        bdf_of(i * N_ROUNDS + j, bdf);
                        snprintf(key, sizeof(key), "child%u-key%02u", i, j);
                        assert_int_equal(state_get_power(s, bdf, &ps), 0);
                        vm = power_sources_find_vm(&ps, key);
                        if (!vm)
                                fail_msg("%s lost on %s", key, bdf);
                        assert_int_equal(vm->uw, W(100 + j));
                        assert_int_equal(vm->set_usec, i);
                }
        state_close(s);
}

/* ---- crash safety ------------------------------------------------------------------------- */

#define BDF_B "0000:c2:00.0"
#define CRASH_ROUNDS 50

/* Commit n: N = n % 65 VMs vm00..vm(N-1) at (N + 1) W, host (N + 1) W, all set at n, and
 * BDF_B's applied cap (N + 1) W at n. */
static int crash_commit(uint64_t n) {
        unsigned nv = (unsigned) (n % (POWER_VM_MAX + 1));
        struct power_sources ps;
        struct state_store *s;
        char setter[64];

        power_sources_init(&ps);
        snprintf(setter, sizeof(setter), "commit %" PRIu64, n);
        if (power_sources_set(&ps, POWER_SOURCE_HOST, NULL, NULL, W(nv + 1), setter, n) < 0)
                return -1;
        for (unsigned i = 0; i < nv; i++) {
                char key[16];

                snprintf(key, sizeof(key), "vm%02u", i);
                if (power_sources_set(&ps, POWER_SOURCE_VM, key, NULL, W(nv + 1), setter, n) < 0)
                        return -1;
        }
        if (state_open(STATE_WRITE, 10000, &s) < 0)
                return -1;
        if (state_set_power(s, BDF, &ps) < 0 || state_set_applied(s, BDF_B, W(nv + 1), n) < 0 ||
            state_commit(s) < 0) {
                state_close(s);
                return -1;
        }
        state_close(s);
        return 0;
}

/* Checks that s holds what some crash_commit(n) wrote; returns n. */
static uint64_t crash_check(const struct state_store *s) {
        struct power_sources ps;
        uint64_t n, uw, usec;
        unsigned nv;
        char setter[64];

        assert_int_equal(state_get_power(s, BDF, &ps), 0);
        assert_true(ps.host.present);
        n = ps.host.set_usec;
        nv = (unsigned) (n % (POWER_VM_MAX + 1));
        snprintf(setter, sizeof(setter), "commit %" PRIu64, n);
        assert_string_equal(ps.host.setter, setter);
        assert_int_equal(ps.host.uw, W(nv + 1));
        assert_false(ps.apml.present);
        assert_int_equal(ps.n_vms, nv);
        for (unsigned i = 0; i < nv; i++) {
                char key[16];

                snprintf(key, sizeof(key), "vm%02u", i);
                assert_string_equal(ps.vms[i].key, key);
                assert_int_equal(ps.vms[i].uw, W(nv + 1));
                assert_int_equal(ps.vms[i].set_usec, n);
                assert_string_equal(ps.vms[i].setter, setter);
        }
        assert_int_equal(state_get_applied(s, BDF_B, &uw, &usec), 0);
        assert_int_equal(uw, W(nv + 1));
        assert_int_equal(usec, n);
        return n;
}

static void test_crash_safety(void **state) {
        unsigned seed = (unsigned) time(NULL) ^ (unsigned) getpid();

        for (unsigned round = 0; round < CRASH_ROUNDS; round++) {
                uint64_t base = (uint64_t) round * 1000000, n;
                struct state_store *s;
                char names[4][256], c;
                int started[2], status;
                pid_t pid;

                assert_int_equal(pipe(started), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        close(started[0]);
                        if (crash_commit(base) < 0)
                                _exit(2);
                        if (write(started[1], "s", 1) != 1)
                                _exit(3);
                        for (uint64_t k = base + 1;; k++)
                                if (crash_commit(k) < 0)
                                        _exit(4);
                }
                close(started[1]);
                assert_int_equal(read(started[0], &c, 1), 1);
                close(started[0]);
                usleep((useconds_t) (rand_r(&seed) % 3000));
                assert_int_equal(kill(pid, SIGKILL), 0);
                assert_int_equal(waitpid(pid, &status, 0), pid);
                if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
                        fail_msg("round %u: the writer ended on its own (status %d)", round,
                                 status);

                /* What is there is one complete commit of this round, loaded without a word. */
                assert_int_equal(state_open(STATE_WRITE, 1000, &s), 0);
                if (state_warning(s))
                        fail_msg("round %u: %s", round, state_warning(s));
                n = crash_check(s);
                assert_true(n >= base);
                assert_int_equal(list_corrupt(names, 4), 0);
                /* A temp file the kill left behind does not get in the way of a commit. */
                assert_int_equal(state_commit(s), 0);
                state_close(s);
                assert_false(exists(in_dir(".state.json.tmp")));
        }
}

/* Something else than a regular file at state.json: never read (a FIFO would hang the
 * opener), never followed, never renamed aside nor replaced; readers see an empty state and a
 * warning naming the path and what it is; writers cannot commit. */
static void test_not_regular(void **state) {
        static const char *const kinds[] = { "fifo", "dir", "link", "link-fifo" };
        static const char *const names[] = { "a FIFO", "a directory", "a symbolic link",
                                             "a symbolic link" };
        struct state_store *s;
        struct stat st;

        write_file(in_dir("target.json"), "{ \"version\": 1 }\n", 18);
        assert_int_equal(mkfifo(in_dir("target.fifo"), 0644), 0);
        for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
                char want[PATH_MAX + 64];

                (void) unlink(in_dir("state.json"));
                (void) rmdir(in_dir("state.json"));
                if (strcmp(kinds[k], "fifo") == 0)
                        assert_int_equal(mkfifo(in_dir("state.json"), 0644), 0);
                else if (strcmp(kinds[k], "dir") == 0)
                        assert_int_equal(mkdir(in_dir("state.json"), 0755), 0);
                else
                        assert_int_equal(symlink(strcmp(kinds[k], "link") == 0 ? "target.json"
                                                                               : "target.fifo",
                                                 in_dir("state.json")),
                                         0);
                snprintf(want, sizeof(want), "%s is %s, not a regular file", in_dir("state.json"),
                         names[k]);
                for (int mode = STATE_READ; mode <= STATE_WRITE; mode++) {
                        alarm(10); /* a hang fails the test */
                        assert_int_equal(state_open((enum state_mode) mode, 0, &s), 0);
                        alarm(0);
                        assert_non_null(state_warning(s));
                        assert_non_null(strstr(state_warning(s), want));
                        assert_empty(s, BDF);
                        assert_true(state_can_commit(s) < 0);
                        assert_true(state_commit(s) < 0);
                        state_close(s);
                        assert_int_equal(lstat(in_dir("state.json"), &st), 0);
                        assert_false(S_ISREG(st.st_mode));
                }
        }
}

/* An older amdsmi's 0644 lock file is tightened to 0600 by a writer; readers never lock one
 * that others can open (whoever opened it could block them). A FIFO or link there refuses. */
static void test_lock_modes(void **state) {
        struct state_store *s;
        struct stat st;

        write_file(in_dir("state.lock"), "", 0);
        assert_int_equal(chmod(in_dir("state.lock"), 0644), 0);
        assert_int_equal(state_open(STATE_WRITE, 0, &s), 0);
        assert_int_equal(stat(in_dir("state.lock"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        state_close(s);

        assert_int_equal(unlink(in_dir("state.lock")), 0);
        assert_int_equal(mkfifo(in_dir("state.lock"), 0600), 0);
        alarm(10);
        assert_int_equal(state_open(STATE_WRITE, 0, &s), -EBADFD);
        assert_int_equal(state_open(STATE_READ, 0, &s), 0); /* reads without the lock */
        alarm(0);
        state_close(s);
        assert_int_equal(unlink(in_dir("state.lock")), 0);
        write_file(in_dir("elsewhere"), "", 0);
        assert_int_equal(symlink("elsewhere", in_dir("state.lock")), 0);
        assert_int_equal(state_open(STATE_WRITE, 0, &s), -ELOOP);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_state_dir, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing_is_empty, setup, teardown),
                cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
                cmocka_unit_test_setup_teardown(test_replace_and_remove, setup, teardown),
                cmocka_unit_test_setup_teardown(test_invalid_arguments, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unknown_keys_kept, setup, teardown),
                cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
                cmocka_unit_test_setup_teardown(test_corrupt_too_many_vms, setup, teardown),
                cmocka_unit_test_setup_teardown(test_boundaries_load, setup, teardown),
                cmocka_unit_test_setup_teardown(test_newer_version, setup, teardown),
                cmocka_unit_test_setup_teardown(test_commit_read_mode, setup, teardown),
                cmocka_unit_test_setup_teardown(test_commit_failure_keeps_old, setup, teardown),
                cmocka_unit_test_setup_teardown(test_read_without_lock, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lock_in_process, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lock_other_process, setup, teardown),
                cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
                cmocka_unit_test_setup_teardown(test_crash_safety, setup, teardown),
                cmocka_unit_test_setup_teardown(test_not_regular, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lock_modes, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
