/*
 * sandbox.c - how bubblewrap is told to show a directory (sandbox.h).
 */
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "util.h"

const char *const sandbox_system[] = {"/usr",
                                      "/lib",
                                      "/lib32",
                                      "/lib64",
                                      "/libx32",
                                      "/bin",
                                      "/sbin",
                                      "/etc/ld.so.cache",
                                      "/etc/ld.so.conf",
                                      "/etc/ld.so.conf.d",
                                      "/etc/alternatives",
                                      "/etc/localtime",
                                      NULL};
const size_t sandbox_nSystem = sizeof sandbox_system / sizeof *sandbox_system - 1;

static int under(const char *z, const char *const *azRo, size_t nRo)
{
	for (size_t i = 0; i < nRo; i++) {
		size_t n = strlen(azRo[i]);
		if (!strncmp(z, azRo[i], n) && (z[n] == '/' || z[n] == 0))
			return 1;
	}
	return 0;
}

int sandbox_dir_args(const char *zDir, const char *const *azRo, size_t nRo, char **v)
{
	char *real = realpath(zDir, NULL);
	int n = 0;
	if (!real)
		return 0;
	if (!under(real, azRo, nRo)) {
		v[n++] = xstrdup("--ro-bind-try");
		v[n++] = xstrdup(real);
		v[n++] = xstrdup(real);
	}
	if (strcmp(real, zDir) && !under(zDir, azRo, nRo)) {
		v[n++] = xstrdup("--ro-bind-try");
		v[n++] = xstrdup(real);
		v[n++] = xstrdup(zDir);
	}
	free(real);
	return n;
}
