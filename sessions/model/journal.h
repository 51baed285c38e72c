/*
 * journal.h - the session journal: an append-only file of JSON events, one
 * per line, flushed per event.  Reading tolerates a truncated last line (a
 * crash mid-write) and reports malformed lines without stopping.
 */
#ifndef KL_JOURNAL_H
#define KL_JOURNAL_H

#include <cJSON.h>
#include <stddef.h>

struct journal;

/* the longest line (one event) the reader parses; a longer one is reported
 * as a bad line (a source or a log is limited far below this) */
#define JOURNAL_LINE_MAX ((size_t)256 << 20)
#define JOURNAL_LINE_MAX_S "256 MiB"

/*
 * Open (creating if needed) zPath for appending, holding an exclusive
 * advisory lock (flock) on it until journal_close(): one writer per journal.
 * Refuses a path that is not a regular file (a FIFO, a device) before
 * opening it.  NULL + err naming the path; when another process holds the
 * lock, err names it (pid and command line) and errno is EBUSY.
 */
struct journal *journal_open(const char *zPath, char *err);
void journal_close(struct journal *j);

/* append one event (a JSON object) as a line and flush it to the file;
 * 0 or -1 + err.  A failed write is cut back so the journal still ends on
 * a whole line.  The event is not consumed. */
int journal_append(struct journal *j, const cJSON *ev, char *err);

/* called for each event read: the parsed event, the line's text as it is
 * in the file (zLine, nLine bytes, without the newline; valid during the
 * call), and its 1-based line number */
typedef void (*journal_event_fn)(const cJSON *ev, const char *zLine, size_t nLine, int line,
                                 void *arg);
/* called for each line that is not a JSON object (truncated: 1 for a last
 * line without its newline, i.e. a write cut short) */
typedef void (*journal_bad_fn)(int line, const char *zWhy, int truncated, void *arg);

/* read zPath, calling fn for each event and bad for each bad line.
 * Returns the number of events, or -1 + err if the file cannot be read. */
int journal_read(const char *zPath, journal_event_fn fn, journal_bad_fn bad, void *arg, char *err);

#endif
