/*
 * suggest.c - the nearest word to a typo (suggest.h).
 */
#include "suggest.h"

#include <ctype.h>
#include <string.h>

#define SUGGEST_MAX 64

static int min3(int a, int b, int c)
{
	int m = a < b ? a : b;
	return m < c ? m : c;
}

int suggest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la >= SUGGEST_MAX || lb >= SUGGEST_MAX)
		return (int)(la > lb ? la : lb);
	/* d[i][j]: the distance between a's first i bytes and b's first j */
	int d[SUGGEST_MAX][SUGGEST_MAX];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int ca = tolower((unsigned char)a[i - 1]);
		for (size_t j = 1; j <= lb; j++) {
			int cb = tolower((unsigned char)b[j - 1]);
			int cost = ca != cb;
			d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < d[i][j])
				d[i][j] = d[i - 2][j - 2] + 1;
		}
	}
	return d[la][lb];
}

const char *suggest_nearest(const char *zWord, const char *const *az, size_t n)
{
	/* a flag's dashes are no letters of its name: "--round" is 5 long */
	size_t len = strlen(zWord) - strspn(zWord, "-");
	int limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	const char *best = NULL;
	int bestD = limit + 1, tie = 0;
	for (size_t i = 0; i < n; i++) {
		if (!az[i])
			continue;
		int dist = suggest_distance(zWord, az[i]);
		if (dist == 0)
			return NULL;
		if (dist < bestD) {
			best = az[i], bestD = dist, tie = 0;
		} else if (dist == bestD && best && strcmp(best, az[i])) {
			tie = 1;
		}
	}
	return best && !tie ? best : NULL;
}
