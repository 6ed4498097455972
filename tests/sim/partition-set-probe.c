/* SPDX-License-Identifier: MIT */
/* Placeholder: not written yet. */
#include <stdio.h>

int main(void) {
        fprintf(stderr, "not written yet\n");
        return 1;
}
