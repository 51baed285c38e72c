/*
 * splice_priv.h - what splice.c and splice_form.c share (private to them).
 */
#ifndef KL_SPLICE_PRIV_H
#define KL_SPLICE_PRIV_H

#include <stddef.h>

#include "unit.h"

/*
 * The merged source src[0..n) keeps target t's form: a PyTorch extension
 * (registration blocks: PYBIND11_MODULE, TORCH_LIBRARY...) has the same
 * blocks, as many of each (one way of registering, once), no kl_run of its
 * own beside them (kloop's ATen stand-in defines it) and every function
 * they bind; a source without them (a kernel) gets none.  0 or -1 + err.
 */
int splice_keeps_form(const struct unit *t, const char *src, size_t n, char *err);

#endif
