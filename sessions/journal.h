/*
 * journal.h - the session journal: an append-only file of JSON events, one
 * per line, flushed per event.  Reading tolerates a truncated last line (a
 * crash mid-write) and reports malformed lines without stopping.
 */
#ifndef KL_JOURNAL_H
#define KL_JOURNAL_H

#include <cJSON.h>

struct journal;

/* open (creating if needed) zPath for appending; NULL + err naming the path */
struct journal *journal_open(const char *zPath, char *err);
void journal_close(struct journal *j);

/* append one event (a JSON object) as a line and flush it to the file;
 * 0 or -1 + err.  The event is not consumed. */
int journal_append(struct journal *j, const cJSON *ev, char *err);

/* called for each event read; line is 1-based */
typedef void (*journal_event_fn)(const cJSON *ev, int line, void *arg);
/* called for each line that is not a JSON object (truncated: 1 for a last
 * line without its newline, i.e. a write cut short) */
typedef void (*journal_bad_fn)(int line, const char *zWhy, int truncated, void *arg);

/* read zPath, calling fn for each event and bad for each bad line.
 * Returns the number of events, or -1 + err if the file cannot be read. */
int journal_read(const char *zPath, journal_event_fn fn, journal_bad_fn bad, void *arg, char *err);

#endif
