/*
 * editor.h - handing a file to the user's editor ($VISUAL, else $EDITOR,
 * else vi) without stopping the engine: the editor runs as a child on the
 * terminal while the caller's loop keeps serving workers.
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

/*
 * Run the editor on zPath with the terminal (the caller has given it up,
 * e.g. with screen_suspend(), and stopped reading stdin), running loop l
 * until the editor exits.  Returns its exit status (0: it exited normally),
 * or -1 + err when it could not be started or was killed by a signal.
 */
int editor_run(struct loop *l, const char *zPath, char *err);

#endif
