/*
 * archive_view.h - the `archive` command of the TUI and the REPL: the
 * innovation archive's search results on the viewer page, one entry in
 * full, and an entry brought into the session as an idea or a candidate.
 */
#ifndef KL_ARCHIVE_VIEW_H
#define KL_ARCHIVE_VIEW_H

#include "actions.h"

/*
 * Run `archive WORDS...` (c's text arguments): `archive QUERY` pages the
 * matching entries; `archive show ID` pages one; `archive idea ID` proposes
 * it as an idea (origin archive) and `archive cand ID` adds its code as a
 * human candidate and evaluates it (both need a live session).  0, or -1
 * after saying why through f's hooks.
 */
int archive_view_run(struct actions_front *f, const struct commands_line *c);

#endif
