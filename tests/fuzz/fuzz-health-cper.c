/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the CPER decoder (health/health-cper.c): the input as the debugfs ring file
 * (12-byte header, then ring bytes) and as a .cper file. Checks: decoding never fails but for
 * memory, every record returned is a whole record within the input (signature, signature end,
 * a length covering its header and descriptors), its sections lie within it, its text fields
 * are printable, and a follower's cursor never returns a record twice (a second read of the
 * same bytes returns nothing).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <amdsmi/amdsmi.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s, size_t max) {
        size_t n = strnlen(s, max);

        if (n == max)
                abort(); /* not terminated */
        for (size_t i = 0; i < n; i++)
                if (s[i] < 0x20 || s[i] > 0x7e)
                        abort();
}

static void check_batch(const struct amdsmi_cper_batch *b, const uint8_t *data, size_t size) {
        for (size_t i = 0; i < b->n_records; i++) {
                const struct amdsmi_cper_record *r = &b->records[i];

                if (r->length < 128 || r->length > size || memcmp(r->raw, "CPER", 4) != 0 ||
                    !memmem(data, size, r->raw, r->length))
                        abort();
                check_text(r->platform_id, sizeof(r->platform_id));
                check_text(r->creator_id, sizeof(r->creator_id));
                check_text(r->record_id, sizeof(r->record_id));
                if (strlen(r->notify_guid) != 36)
                        abort();
                if ((unsigned) r->notify >= _AMDSMI_CPER_NOTIFY_MAX)
                        abort();
                for (uint32_t k = 0; k < r->n_sections; k++) {
                        const struct amdsmi_cper_section *s = &r->sections[k];

                        if ((uint64_t) s->offset + s->length > r->length)
                                abort();
                        check_text(s->fru_text, sizeof(s->fru_text));
                        if ((unsigned) s->type >= _AMDSMI_CPER_SECTION_MAX)
                                abort();
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        for (int header = 0; header <= 1; header++) {
                struct amdsmi_cper_cursor cursor = AMDSMI_CPER_CURSOR_INIT;
                struct amdsmi_cper_batch *b = NULL;

                if (amdsmi_cper_decode(data, size, header, &cursor, &b) < 0)
                        abort();
                check_batch(b, data, size);
                if (b->reloaded || b->lost)
                        abort(); /* a fresh cursor has nothing to lose or compare */
                amdsmi_cper_batch_free(b);
                b = NULL;
                if (amdsmi_cper_decode(data, size, header, &cursor, &b) < 0)
                        abort();
                if (b->n_records != 0)
                        abort(); /* never the same record twice */
                amdsmi_cper_batch_free(b);
        }
        return 0;
}
