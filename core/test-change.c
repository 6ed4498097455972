/* SPDX-License-Identifier: MIT */
/* The change runner (core/change.c): the lock step's words and waits, change_run()'s order,
 * and the in-process history journal. In temporary RUNTIME_DIRECTORY, STATE_DIRECTORY and
 * CONFIGURATION_DIRECTORY. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "change.h"

#define GPU_A "0000:05:00.0"
#define GPU_B "0000:26:00.0"

static char tmpdir[] = "/tmp/test-change.XXXXXX";
static char path[4200];

static const char *in_dir(const char *name) {
        snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
        return path;
}

static int setup(void **state) {
        if (!mkdtemp(tmpdir))
                return -1;
        setenv("RUNTIME_DIRECTORY", tmpdir, 1);
        setenv("STATE_DIRECTORY", tmpdir, 1);
        setenv("CONFIGURATION_DIRECTORY", tmpdir, 1);
        return 0;
}

static int teardown(void **state) {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

static void init_locks(struct gpu_lock *locks, size_t n) {
        for (size_t i = 0; i < n; i++)
                locks[i] = (struct gpu_lock) GPU_LOCK_INIT;
}

/* A GPU held elsewhere: the refusal names it and its holder, in the caller's words if any. */
static void test_busy_words(void **state) {
        const char *bdfs[] = { GPU_B, GPU_A };
        struct gpu_lock other = GPU_LOCK_INIT, locks[2];
        char msg[4600], want[128];

        assert_int_equal(gpu_lock_acquire(&other, GPU_B, NULL), 0);

        init_locks(locks, 2);
        assert_int_equal(change_lock(&(struct change_lock){ .bdfs = bdfs, .n = 2 }, locks, msg,
                                     sizeof(msg)),
                         -EBUSY);
        snprintf(want, sizeof(want), "GPU %s is being changed by PID %ld", GPU_B, (long) getpid());
        assert_string_equal(msg, want);
        /* all or none: GPU A is free again */
        assert_int_equal(locks[0].fd, -1);
        assert_int_equal(locks[1].fd, -1);

        init_locks(locks, 1);
        assert_int_equal(change_lock(&(struct change_lock){ .bdfs = &bdfs[0],
                                                            .n = 1,
                                                            .who = "GPU 1 (" GPU_B ")" },
                                     locks, msg, sizeof(msg)),
                         -EBUSY);
        snprintf(want, sizeof(want), "GPU 1 (%s) is being changed by PID %ld", GPU_B,
                 (long) getpid());
        assert_string_equal(msg, want);

        /* held by the caller (amdsmid's job), or a dry run: nothing is taken, nothing waits */
        init_locks(locks, 2);
        assert_int_equal(change_lock(&(struct change_lock){ .bdfs = bdfs,
                                                            .n = 2,
                                                            .wait_ms = 60000,
                                                            .held = true },
                                     locks, msg, sizeof(msg)),
                         0);
        assert_int_equal(locks[0].fd, -1);
        assert_int_equal(locks[1].fd, -1);
        gpu_lock_release(&other);

        /* free now: both taken, in BDF order */
        init_locks(locks, 2);
        assert_int_equal(change_lock(&(struct change_lock){ .bdfs = bdfs, .n = 2 }, locks, msg,
                                     sizeof(msg)),
                         0);
        assert_string_equal(locks[0].bdf, GPU_A);
        assert_string_equal(locks[1].bdf, GPU_B);
        assert_int_equal(gpu_lock_acquire(&other, GPU_A, NULL), -EBUSY);
        change_unlock(locks, 2);
        assert_int_equal(gpu_lock_acquire(&other, GPU_A, NULL), 0);
        gpu_lock_release(&other);
}

/* A child holds @bdf for @ms, then exits; returns once it holds it. */
static pid_t hold_in_child(const char *bdf, unsigned ms) {
        int p[2];
        char c;
        pid_t pid;

        assert_int_equal(pipe(p), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct gpu_lock l = GPU_LOCK_INIT;

                close(p[0]);
                if (gpu_lock_acquire(&l, bdf, NULL) < 0)
                        _exit(1);
                (void) !write(p[1], "x", 1);
                usleep(ms * 1000);
                _exit(0);
        }
        close(p[1]);
        assert_int_equal(read(p[0], &c, 1), 1);
        close(p[0]);
        return pid;
}

static void reap(pid_t pid) {
        int status;

        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* wait_ms waits for a holder to finish, for one GPU and for several. */
static void test_wait(void **state) {
        const char *bdfs[] = { GPU_A, GPU_B };
        struct gpu_lock locks[2];
        char msg[4600], want[128];
        pid_t pid;

        /* no wait: refused at once, naming the child */
        pid = hold_in_child(GPU_B, 300);
        init_locks(locks, 2);
        assert_int_equal(change_lock(&(struct change_lock){ .bdfs = bdfs, .n = 2 }, locks, msg,
                                     sizeof(msg)),
                         -EBUSY);
        snprintf(want, sizeof(want), "GPU %s is being changed by PID %ld", GPU_B, (long) pid);
        assert_string_equal(msg, want);
        /* a wait longer than the holder: taken */
        assert_int_equal(change_lock(&(struct change_lock){ .bdfs = bdfs, .n = 2,
                                                            .wait_ms = 10000 },
                                     locks, msg, sizeof(msg)),
                         0);
        change_unlock(locks, 2);
        reap(pid);

        pid = hold_in_child(GPU_A, 300);
        init_locks(locks, 1);
        assert_int_equal(change_lock(&(struct change_lock){ .bdfs = bdfs, .n = 1,
                                                            .wait_ms = 10000 },
                                     locks, msg, sizeof(msg)),
                         0);
        change_unlock(locks, 1);
        reap(pid);
}

/* A lock file that is not ours: the failure names the file and what it is. */
static void test_lock_file_refused(void **state) {
        const char *bdf = "0000:65:00.0";
        struct gpu_lock lock = GPU_LOCK_INIT;
        char msg[4600], file[4300];

        /* the lock directory exists once a lock was taken */
        assert_int_equal(gpu_lock_acquire(&lock, bdf, NULL), 0);
        gpu_lock_release(&lock);
        assert_int_equal(gpu_lock_path(bdf, file, sizeof(file)), 0);
        assert_int_equal(unlink(file), 0);
        assert_int_equal(mkfifo(file, 0600), 0);

        assert_true(change_lock(&(struct change_lock){ .bdfs = &bdf, .n = 1 }, &lock, msg,
                                sizeof(msg)) < 0);
        assert_non_null(strstr(msg, "cannot take the change lock of GPU 0000:65:00.0: "));
        assert_non_null(strstr(msg, file));
        assert_non_null(strstr(msg, "FIFO"));

        assert_true(change_lock(&(struct change_lock){
                                        .bdfs = &bdf,
                                        .n = 1,
                                        .what = "the change locks of the GPUs under gim" },
                                &lock, msg, sizeof(msg)) < 0);
        assert_non_null(strstr(msg, "cannot take the change locks of the GPUs under gim: "));
        assert_non_null(strstr(msg, "FIFO"));
        assert_int_equal(unlink(file), 0);
}

struct run_probe {
        const char *bdf;
        int applied, refused, refused_r;
        int busy_inside; /* what another taker got while apply ran */
        char message[256];
};

static int probe_apply(void *userdata) {
        struct run_probe *p = userdata;
        struct gpu_lock l = GPU_LOCK_INIT;

        p->applied++;
        p->busy_inside = gpu_lock_acquire(&l, p->bdf, NULL);
        gpu_lock_release(&l);
        return 7;
}

static int probe_refused(void *userdata, int r, const char *message) {
        struct run_probe *p = userdata;

        p->refused++;
        p->refused_r = r;
        snprintf(p->message, sizeof(p->message), "%s", message);
        return r;
}

static const struct change_ops probe_ops = { .apply = probe_apply,
                                             .lock_failed = probe_refused };

/* change_run(): apply under the lock, the lock free after; no apply when the lock fails. */
static void test_run(void **state) {
        struct run_probe p = { .bdf = GPU_A };
        struct gpu_lock other = GPU_LOCK_INIT;
        const char *many[CHANGE_MAX_GPUS + 1];

        assert_int_equal(change_run(&(struct change_lock){ .bdfs = &p.bdf, .n = 1 }, &probe_ops,
                                    &p),
                         7);
        assert_int_equal(p.applied, 1);
        assert_int_equal(p.busy_inside, -EBUSY);
        assert_int_equal(p.refused, 0);
        assert_int_equal(gpu_lock_acquire(&other, GPU_A, NULL), 0);

        /* held elsewhere: refused through lock_failed, apply never runs */
        assert_int_equal(change_run(&(struct change_lock){ .bdfs = &p.bdf, .n = 1 }, &probe_ops,
                                    &p),
                         -EBUSY);
        assert_int_equal(p.applied, 1);
        assert_int_equal(p.refused, 1);
        assert_int_equal(p.refused_r, -EBUSY);
        assert_non_null(strstr(p.message, "is being changed by PID"));

        /* held by the caller: apply runs without taking it */
        assert_int_equal(change_run(&(struct change_lock){ .bdfs = &p.bdf, .n = 1, .held = true },
                                    &probe_ops, &p),
                         7);
        assert_int_equal(p.applied, 2);
        assert_int_equal(p.busy_inside, -EBUSY); /* still the other holder's */
        gpu_lock_release(&other);

        /* more GPUs than one change may lock: refused before anything is taken */
        for (size_t i = 0; i < CHANGE_MAX_GPUS + 1; i++)
                many[i] = GPU_A;
        assert_int_equal(change_run(&(struct change_lock){ .bdfs = many,
                                                           .n = CHANGE_MAX_GPUS + 1 },
                                    &probe_ops, &p),
                         -EINVAL);
        assert_int_equal(p.applied, 2);
        assert_int_equal(p.refused, 2);
        assert_non_null(strstr(p.message, "cannot be locked"));
}

static int notes;
static char last_note[1024];

static void count_notes(struct report *r, enum report_line kind, const char *text) {
        if (kind != REPORT_NOTE)
                return;
        notes++;
        snprintf(last_note, sizeof(last_note), "%s", text);
}

static char *read_file(const char *p) {
        FILE *f = fopen(p, "re");
        static char buf[65536];
        size_t n;

        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

/* The journal: records via "direct" with this process's uid and pid, amdsmid.conf's bound,
 * one warning per journal when the history cannot be appended to. */
static void test_journal(void **state) {
        struct report rep = { .print = count_notes };
        struct change_journal j = CHANGE_JOURNAL_INIT(&rep);
        char want[64];
        const char *text;
        FILE *f;

        f = fopen(in_dir("amdsmid.conf"), "we");
        assert_non_null(f);
        fputs("[daemon]\nhistory_max_kib = 32\n", f);
        fclose(f);

        assert_int_equal(change_journal_record(&j, (struct history_entry){
                                                           .gpu = GPU_A,
                                                           .change = "power_source",
                                                           .old_value = "host=none",
                                                           .new_value = "host=600W",
                                                           .message = "set",
                                                   }),
                         0);
        assert_int_equal(j.max_bytes, 32 * 1024);
        text = read_file(in_dir("history.jsonl"));
        assert_non_null(strstr(text, "\"via\":\"direct\""));
        assert_non_null(strstr(text, "\"gpu\":\"" GPU_A "\""));
        assert_non_null(strstr(text, "\"new\":\"host=600W\""));
        snprintf(want, sizeof(want), "\"pid\":%ld", (long) getpid());
        assert_non_null(strstr(text, want));
        assert_int_equal(notes, 0);

        /* a history that is not a regular file: refused, one warning for the run */
        assert_int_equal(unlink(in_dir("history.jsonl")), 0);
        assert_int_equal(mkfifo(in_dir("history.jsonl"), 0600), 0);
        for (int i = 0; i < 3; i++)
                assert_true(change_journal_record(&j, (struct history_entry){
                                                              .gpu = GPU_A,
                                                              .change = "num_vfs",
                                                              .result = -EIO,
                                                      }) < 0);
        assert_int_equal(notes, 1);
        assert_non_null(strstr(last_note, "warning: cannot append to the history: "));
        assert_non_null(strstr(last_note, "FIFO"));
        assert_int_equal(unlink(in_dir("history.jsonl")), 0);
        assert_int_equal(unlink(in_dir("amdsmid.conf")), 0);

        /* no amdsmid.conf: the default bound */
        j = CHANGE_JOURNAL_INIT(&rep);
        assert_int_equal(change_journal_record(&j, (struct history_entry){ .gpu = GPU_A,
                                                                           .change = "x" }),
                         0);
        assert_int_equal(j.max_bytes, (uint64_t) 1024 * 1024);
        report_clear(&rep);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_busy_words),
                cmocka_unit_test(test_wait),
                cmocka_unit_test(test_lock_file_refused),
                cmocka_unit_test(test_run),
                cmocka_unit_test(test_journal),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
