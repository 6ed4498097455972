/* SPDX-License-Identifier: MIT */
#include "history.h"
