/*
 * editor.h - handing a file to the user's editor ($VISUAL, else $EDITOR,
 * else vi) without stopping the engine: the editor runs as a child on the
 * terminal, a state of the caller's one loop, which keeps serving workers
 * and calls back when it ends.
 */
#ifndef KL_EDITOR_H
#define KL_EDITOR_H

#include "loop.h"

/*
 * Write text to a new private directory under $TMPDIR as a file named
 * zName (its extension tells the editor the language).  Returns the path
 * (caller frees; editor_cleanup() removes it), or NULL + err.
 */
char *editor_tempfile(const char *zName, const char *zText, char *err);
/* remove the file and its private directory */
void editor_cleanup(const char *zPath);

/* the editor ended: rc is its exit status (0: it exited normally), or -1
 * and zErr says why (it was killed by a signal, could not be run, or could
 * not be waited for) */
typedef void (*editor_done_fn)(void *arg, int rc, const char *zErr);

/*
 * Start the editor on zPath with the terminal (the caller has given it up,
 * e.g. with screen_suspend(), and stopped reading stdin) and return at
 * once: done(arg, ...) is called from loop l when the editor ends (its
 * pidfd on the loop; where the kernel has none, a timer of the loop looks
 * every 50 ms).  0, or -1 + err when it could not be started (done is then
 * never called).
 */
int editor_start(struct loop *l, const char *zPath, editor_done_fn done, void *arg, char *err);

#endif
