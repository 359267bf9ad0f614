/*
 * init_at_level initialises MPI for the C benchmarks at the thread level
 * named by $THREAD_LEVEL: single, funneled, serialized or multiple. The
 * default is serialized, the level comm/mpi asks for (a Go process is
 * multithreaded and a goroutine may move between OS threads), so that Go
 * and C are compared at the same level: Open MPI 4.1 makes every call
 * dearer at any level above single (a small message costs about 0.05 µs
 * more), whoever calls it. It returns the level's name, or NULL after
 * printing why on rank 0 when the name is unknown or the library gives
 * less than asked.
 */
#ifndef HEAT_THREAD_LEVEL_H
#define HEAT_THREAD_LEVEL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *init_at_level(int *argc, char ***argv) {
	static const struct {
		const char *name;
		int level;
	} levels[] = {
	    {"single", MPI_THREAD_SINGLE},
	    {"funneled", MPI_THREAD_FUNNELED},
	    {"serialized", MPI_THREAD_SERIALIZED},
	    {"multiple", MPI_THREAD_MULTIPLE},
	};
	const char *want = getenv("THREAD_LEVEL");
	if (want == NULL || *want == 0) {
		want = "serialized";
	}
	int k = -1;
	for (int i = 0; i < (int)(sizeof levels / sizeof levels[0]); i++) {
		if (strcmp(want, levels[i].name) == 0) {
			k = i;
		}
	}
	int provided = MPI_THREAD_SINGLE;
	MPI_Init_thread(argc, argv, k < 0 ? MPI_THREAD_SINGLE : levels[k].level, &provided);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (k < 0 || provided < levels[k].level) {
		if (rank == 0) {
			fprintf(stderr, k < 0 ? "THREAD_LEVEL=%s: want single, funneled, serialized or multiple\n"
			                      : "THREAD_LEVEL=%s: this MPI gives less\n",
			        want);
		}
		return NULL;
	}
	return levels[k].name;
}

#endif
