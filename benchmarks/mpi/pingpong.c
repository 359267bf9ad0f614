/*
 * pingpong: one-way latency and bandwidth between ranks 0 and 1 in plain
 * MPI C, the same loop as benchmarks.PingPong (Go): rank 0 sends the ping,
 * posts the receive of the pong and waits for both (MPI_Isend, MPI_Irecv,
 * MPI_Waitall); rank 1 receives, then sends it back.
 * A tenth as many warm-up round trips come first; other ranks wait at the
 * barriers. The one-way time is half the mean round trip, on rank 0's clock.
 * MPI runs at the thread level $THREAD_LEVEL names (thread_level.h; by
 * default serialized, comm/mpi's).
 *
 *   mpicc -O3 -o pingpong pingpong.c
 *   mpirun -np 2 ./pingpong [iters_8B [iters_8MiB]]
 *   mpirun -np 2 -x THREAD_LEVEL=single ./pingpong
 *
 * prints, per size, one line in the format of benchmarks/mpi/pingpong (Go):
 *   pingpong impl=c bytes=8 iters=20000 latency_us=0.512 bandwidth_MBps=15.6
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "thread_level.h"

enum { TAG = 31000 };

/* rounds runs n round trips of count doubles between ranks 0 and 1. */
static void rounds(int rank, double *out, double *in, int count, int n) {
	MPI_Request reqs[2];
	for (int i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Isend(out, count, MPI_DOUBLE, 1, TAG, MPI_COMM_WORLD, &reqs[0]);
			MPI_Irecv(in, count, MPI_DOUBLE, 1, TAG, MPI_COMM_WORLD, &reqs[1]);
			MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
		} else if (rank == 1) {
			MPI_Irecv(in, count, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, &reqs[0]);
			MPI_Waitall(1, reqs, MPI_STATUSES_IGNORE);
			MPI_Isend(out, count, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, &reqs[0]);
			MPI_Waitall(1, reqs, MPI_STATUSES_IGNORE);
		}
	}
}

/* one_way is the one-way time in seconds of a bytes-long message over
 * iters round trips, as every rank learns it from rank 0. */
static double one_way(int rank, int bytes, int iters) {
	int count = bytes / 8;
	double *out = malloc((size_t)count * sizeof *out + 8);
	double *in = malloc((size_t)count * sizeof *in + 8);
	if (out == NULL || in == NULL) {
		fprintf(stderr, "pingpong: out of memory for %d bytes\n", bytes);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int i = 0; i < count; i++) {
		out[i] = i;
		in[i] = 0;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	rounds(rank, out, in, count, iters / 10 + 1);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	rounds(rank, out, in, count, iters);
	double t = (MPI_Wtime() - t0) / (2.0 * iters);
	MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	free(out);
	free(in);
	return t;
}

int main(int argc, char **argv) {
	const char *level = init_at_level(&argc, &argv);
	if (level == NULL) {
		MPI_Finalize();
		return 2;
	}
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2) {
		if (rank == 0) {
			fprintf(stderr, "pingpong: needs 2 ranks, the world has %d\n", size);
		}
		MPI_Finalize();
		return 2;
	}
	const int bytes[2] = {8, 8 << 20};
	int iters[2] = {20000, 200};
	for (int k = 0; k < 2 && k + 1 < argc; k++) {
		iters[k] = atoi(argv[k + 1]);
		if (iters[k] < 1) {
			if (rank == 0) {
				fprintf(stderr, "pingpong: round trips must be >= 1, got %s\n", argv[k + 1]);
			}
			MPI_Finalize();
			return 2;
		}
	}
	if (rank == 0) {
		char lib[MPI_MAX_LIBRARY_VERSION_STRING];
		int n;
		MPI_Get_library_version(lib, &n);
		for (int i = 0; i < n; i++) {
			if (lib[i] == '\n') {
				lib[i] = 0;
				break;
			}
		}
		printf("# impl=c library=%s thread_level=%s\n", lib, level);
	}
	for (int k = 0; k < 2; k++) {
		double t = one_way(rank, bytes[k], iters[k]);
		if (rank == 0) {
			printf("pingpong impl=c bytes=%d iters=%d latency_us=%.3f bandwidth_MBps=%.1f\n", bytes[k], iters[k],
			       t * 1e6, bytes[k] / t / 1e6);
			fflush(stdout);
		}
	}
	MPI_Finalize();
	return 0;
}
