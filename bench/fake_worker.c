/*
 * fake_worker.c - a stand-in kloop-worker for the pool simulation
 * (bench/pool_sim.sh): speaks the worker protocol and answers every
 * evaluation at once with a correct result, so that what is measured is the
 * runner's side (the pool, the protocol, the loop), not compiles or kernels.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "version.h"

int main(void)
{
	char line[1 << 16];
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf(
	    "{\"ev\":\"hello\",\"backend\":\"host\",\"device\":\"fake\",\"arch\":\"x\",\"pid\":%d,"
	    "\"version\":\"%s\",\"host\":\"sim\"}\n",
	    (int)getpid(), KLOOP_VERSION);
	while (fgets(line, sizeof line, stdin)) {
		if (strstr(line, "\"op\":\"task\"")) {
			printf(
			    "{\"ev\":\"task_ready\",\"reference\":\"reference.c\",\"task\":\"sim\","
			    "\"reference_timing\":{\"median_ms\":1.0}}\n");
		} else if (strstr(line, "\"op\":\"eval\"")) {
			const char *j = strstr(line, "\"job\":");
			int job = 0;
			if (j)
				sscanf(j + 6, "%d", &job);
			printf("{\"ev\":\"progress\",\"job\":%d,\"stage\":\"running\"}\n", job);
			printf(
			    "{\"ev\":\"result\",\"job\":%d,\"status\":\"correct\",\"reason\":\"\","
			    "\"correctness\":{},\"timing\":{\"median_ms\":0.5}}\n",
			    job);
		} else if (strstr(line, "\"op\":\"quit\"")) {
			break;
		}
	}
	return 0;
}
