// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm tracepoint definitions: the one place CREATE_TRACE_POINTS is set.
 * The events are declared in sdsm_trace.h.
 */
#include "sdsm.h"

#define CREATE_TRACE_POINTS
#include "sdsm_trace.h"
