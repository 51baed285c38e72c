/*
 * sandbox.h - how bubblewrap is told to show a directory to the sandboxed
 * compiler and runner (compile.c, cand.c).
 */
#ifndef KL_SANDBOX_H
#define KL_SANDBOX_H

#include <stddef.h>

/* what the sandboxed compiler and runner see of the system, read-only
 * (a NULL-terminated list; the compiler also sees /opt) */
extern const char *const sandbox_system[];
extern const size_t sandbox_nSystem;

/*
 * Make directory zDir visible read-only: "--ro-bind-try SRC DST" triples
 * written to v (room for 6 strings, each the caller's to free), binding its
 * real path, and binding it at zDir too unless zDir lies in one of the nRo
 * trees of azRo that are bound whole.  Binding onto a path that runs
 * through an absolute link inside such a tree fails: bubblewrap follows the
 * link outside the new root ("Can't mkdir parents": /usr/local/cuda ->
 * /etc/alternatives/cuda on the H100).  A missing zDir adds nothing.
 * Returns the number of strings written (0, 3 or 6).
 */
int sandbox_dir_args(const char *zDir, const char *const *azRo, size_t nRo, char **v);

#endif
