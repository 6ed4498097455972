/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of amdsmi-sim's control protocol (sim/ctl.c): the input is what a client sends
 * on the control socket, served by the real server thread of a simulated mi300x-8 (its tree
 * built as `amdsmi-sim mount` builds it, nothing mounted). The machine's state carries over
 * from one input to the next, as in a long session. Checks the protocol of sim/ctl.h: the
 * answer is a sequence of complete responses, "ok LENGTH\n" and exactly LENGTH bytes, or
 * "error NAME NUMBER MESSAGE\n" with a known errno; there is at most one per request line;
 * and the server keeps answering (a "help" on a new connection after each input).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "fs.h"
#include "fuzz-util.h"
#include "machine.h"
#include "tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct sim_ctl *ctl;
static struct sockaddr_un addr = { .sun_family = AF_UNIX };

static void setup(void) {
        struct sim_machine *m = NULL;
        struct sim_fs *fs = NULL;
        struct sim_ctl_config cfg = { .socket_path = fuzz_path("ctl.sock") };
        int quiet = fuzz_quiet_begin();

        if (sim_machine_load("mi300x-8", &m) < 0 || sim_fs_new(&fs) < 0 ||
            sim_tree_build(m, fs) < 0 || sim_control_init(m) < 0) {
                fuzz_quiet_end(quiet);
                fprintf(stderr, "cannot build the simulated machine\n");
                abort();
        }
        m->frozen = true; /* no telemetry moving in between */
        if (sim_ctl_new(m, &cfg, &ctl) < 0 || sim_ctl_start(ctl) < 0) {
                fuzz_quiet_end(quiet);
                fprintf(stderr, "cannot start the control server\n");
                abort();
        }
        fuzz_quiet_end(quiet);
        snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sim_ctl_socket(ctl));
        /* the machine, the tree and the server live as long as the process */
}

/* Sends @size bytes, closes the sending side, and reads the whole answer (NUL-terminated). */
static char *exchange(const void *data, size_t size, size_t *ret_len) {
        size_t len = 0, cap = 4096;
        char *buf = malloc(cap + 1);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (!buf || fd < 0 || connect(fd, (struct sockaddr *) &addr, sizeof(addr)) < 0) {
                perror("control socket");
                abort();
        }
        /* the server reads at most 4096 bytes without a newline and then closes: a send may
         * fail with EPIPE then, which is an answer too */
        for (size_t off = 0; off < size;) {
                ssize_t k = send(fd, (const char *) data + off, size - off, MSG_NOSIGNAL);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                off += (size_t) k;
        }
        (void) shutdown(fd, SHUT_WR);
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t k;
                int n = poll(&p, 1, 30000);

                if (n < 0 && errno == EINTR)
                        continue; /* libFuzzer's SIGALRM (-timeout) */
                if (n <= 0) {
                        fprintf(stderr, "the control server did not answer within 30 s\n");
                        abort();
                }
                if (len == cap) {
                        cap *= 2;
                        buf = realloc(buf, cap + 1);
                        if (!buf)
                                abort();
                }
                k = recv(fd, buf + len, cap - len, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == ECONNRESET)
                        break;
                if (k < 0) {
                        perror("recv");
                        abort();
                }
                if (k == 0)
                        break;
                len += (size_t) k;
        }
        close(fd);
        buf[len] = '\0';
        *ret_len = len;
        return buf;
}

/* Checks @buf is a sequence of responses; returns how many. */
static size_t check_responses(const char *buf, size_t len) {
        size_t n = 0;

        for (const char *p = buf; p < buf + len; n++) {
                const char *nl = memchr(p, '\n', (size_t) (buf + len - p));
                char name[32];
                int num, consumed = 0;
                size_t body;

                if (!nl) {
                        fprintf(stderr, "a response without its newline: %s\n", p);
                        abort();
                }
                if (sscanf(p, "ok %zu%n", &body, &consumed) == 1 && p + consumed == nl) {
                        if (body > (size_t) (buf + len - (nl + 1))) {
                                fprintf(stderr, "ok %zu with fewer bytes following\n", body);
                                abort();
                        }
                        p = nl + 1 + body;
                        continue;
                }
                if (sscanf(p, "error %31s %d %n", name, &num, &consumed) == 2 && consumed > 0 &&
                    p + consumed < nl && name[0] == 'E' && num > 0 && num < 4096) {
                        p = nl + 1;
                        continue;
                }
                fprintf(stderr, "not a response: %.*s\n", (int) (nl - p), p);
                abort();
        }
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        size_t len, lines = 0, n;
        char *answer;

        if (size > 16384)
                return 0;
        if (!ctl)
                setup();
        for (size_t i = 0; i < size; i++)
                lines += data[i] == '\n';

        answer = exchange(data, size, &len);
        n = check_responses(answer, len);
        /* one per complete line, plus one refusal of what ends without a newline */
        if (n > lines + 1) {
                fprintf(stderr, "%zu responses to %zu lines\n", n, lines);
                abort();
        }
        free(answer);

        /* still serving */
        answer = exchange("help\n", 5, &len);
        if (strncmp(answer, "ok ", 3) != 0 || check_responses(answer, len) != 1)
                abort();
        free(answer);
        return 0;
}
