/*
 * halo: the time of one ghost exchange of a 2D field, in plain MPI C, to
 * set heat's halo package over comm/mpi (benchmarks/mpi/halo, Go) against.
 * An n x n field (default 4096 x 4096) is split over the ranks as heat
 * splits it (MPI_Dims_create's process grid, ranks in C order, remainders
 * spread one cell at a time, no periodic wrap), with one ghost layer. Each
 * exchange does what halo.Plan's Start and Finish do with faces only: post
 * a receive per neighbour, send each face (a row straight from the field, a
 * column packed), wait for all, unpack.
 * The first exchange is checked: every ghost must hold its neighbour's
 * cell. Time per exchange is the slowest rank's mean over reps exchanges,
 * after 10 warm-up ones.
 *
 * MPI runs at the thread level $THREAD_LEVEL names (thread_level.h; by
 * default serialized, comm/mpi's).
 *
 *   mpicc -O3 -o halo halo.c
 *   mpirun -np 4 ./halo [n [reps]]
 *
 * prints one line in the format of benchmarks/mpi/halo (Go):
 *   halo impl=c n=4096 ranks=4 dims=2x2 reps=200 us_per_exchange=41.7
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "thread_level.h"

/* Faces, named by the direction a message sent through them travels. */
enum { NORTH, SOUTH, WEST, EAST, FACES };

/* split gives part i of n cells in parts pieces as [*lo, *hi), the
 * remainder spread over the first parts (decomp.Split). */
static void split(int n, int parts, int i, int *lo, int *hi) {
	int q = n / parts, r = n % parts;
	*lo = i * q + (i < r ? i : r);
	*hi = *lo + q + (i < r);
}

typedef struct {
	int n, ny, nx, y0, x0, stride;
	double *u;                    /* (ny+2) x (nx+2), one ghost layer */
	int peer[FACES];              /* neighbour through each face, or -1 */
	int len[FACES];               /* values per face */
	double *sbuf[FACES], *rbuf[FACES];
} field_t;

/* at is the flat index of local cell (y, x), each in -1..n. */
static int at(const field_t *f, int y, int x) { return (y + 1) * f->stride + x + 1; }

/* face walks the cells of face d (inside = the box's own cells, else its
 * ghosts) and copies them to or from buf. */
static void face(field_t *f, int d, int inside, double *buf, int pack) {
	int y = 0, x = 0, dy = 0, dx = 0;
	switch (d) {
	case NORTH: y = inside ? 0 : -1; dx = 1; break;
	case SOUTH: y = inside ? f->ny - 1 : f->ny; dx = 1; break;
	case WEST: x = inside ? 0 : -1; dy = 1; break;
	case EAST: x = inside ? f->nx - 1 : f->nx; dy = 1; break;
	}
	for (int k = 0; k < f->len[d]; k++, y += dy, x += dx) {
		if (pack) {
			buf[k] = f->u[at(f, y, x)];
		} else {
			f->u[at(f, y, x)] = buf[k];
		}
	}
}

/* opposite is the face a message sent through face d arrives at. */
static int opposite(int d) { return d ^ 1; }

static void exchange(field_t *f) {
	MPI_Request reqs[2 * FACES];
	int k = 0;
	for (int d = 0; d < FACES; d++) {
		if (f->peer[d] >= 0) {
			/* The neighbour across face d sends towards us: through its
			 * opposite face. */
			MPI_Irecv(f->rbuf[d], f->len[d], MPI_DOUBLE, f->peer[d], opposite(d), MPI_COMM_WORLD, &reqs[k++]);
		}
	}
	for (int d = 0; d < FACES; d++) {
		if (f->peer[d] < 0) {
			continue;
		}
		/* A north or south face is one run of a row: sent from the field,
		 * as halo.Plan sends a contiguous face; the others are packed. */
		const double *buf = f->sbuf[d];
		if (d == NORTH || d == SOUTH) {
			buf = &f->u[at(f, d == NORTH ? 0 : f->ny - 1, 0)];
		} else {
			face(f, d, 1, f->sbuf[d], 1);
		}
		MPI_Isend(buf, f->len[d], MPI_DOUBLE, f->peer[d], d, MPI_COMM_WORLD, &reqs[k++]);
	}
	MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE);
	for (int d = 0; d < FACES; d++) {
		if (f->peer[d] >= 0) {
			face(f, d, 0, f->rbuf[d], 0);
		}
	}
}

/* check counts the ghosts of the faces that do not hold their global index. */
static long check(const field_t *f) {
	long bad = 0;
	for (int y = -1; y <= f->ny; y++) {
		for (int x = -1; x <= f->nx; x++) {
			int ghost = y < 0 || y >= f->ny || x < 0 || x >= f->nx;
			int corner = (y < 0 || y >= f->ny) && (x < 0 || x >= f->nx);
			int gy = f->y0 + y, gx = f->x0 + x;
			if (!ghost || corner || gy < 0 || gy >= f->n || gx < 0 || gx >= f->n) {
				continue;
			}
			bad += f->u[at(f, y, x)] != (double)gy * f->n + gx;
		}
	}
	return bad;
}

int main(int argc, char **argv) {
	if (init_at_level(&argc, &argv) == NULL) {
		MPI_Finalize();
		return 2;
	}
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int n = argc > 1 ? atoi(argv[1]) : 4096;
	int reps = argc > 2 ? atoi(argv[2]) : 200;
	int dims[2] = {0, 0};
	MPI_Dims_create(size, 2, dims);
	if (n < 2 * dims[0] || n < 2 * dims[1] || reps < 1) {
		if (rank == 0) {
			fprintf(stderr, "halo: need n >= 2 cells per rank along each axis (n=%d, dims %dx%d) and reps >= 1 (%d)\n",
			        n, dims[0], dims[1], reps);
		}
		MPI_Finalize();
		return 2;
	}
	int cy = rank / dims[1], cx = rank % dims[1];
	field_t f = {.n = n};
	int y1, x1;
	split(n, dims[0], cy, &f.y0, &y1);
	split(n, dims[1], cx, &f.x0, &x1);
	f.ny = y1 - f.y0;
	f.nx = x1 - f.x0;
	f.stride = f.nx + 2;
	f.u = calloc((size_t)(f.ny + 2) * f.stride, sizeof *f.u);
	f.peer[NORTH] = cy > 0 ? rank - dims[1] : -1;
	f.peer[SOUTH] = cy < dims[0] - 1 ? rank + dims[1] : -1;
	f.peer[WEST] = cx > 0 ? rank - 1 : -1;
	f.peer[EAST] = cx < dims[1] - 1 ? rank + 1 : -1;
	f.len[NORTH] = f.len[SOUTH] = f.nx;
	f.len[WEST] = f.len[EAST] = f.ny;
	for (int d = 0; d < FACES; d++) {
		f.sbuf[d] = malloc((size_t)f.len[d] * sizeof(double));
		f.rbuf[d] = malloc((size_t)f.len[d] * sizeof(double));
	}
	if (f.u == NULL) {
		fprintf(stderr, "halo: rank %d: out of memory for a %dx%d box\n", rank, f.ny, f.nx);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int y = 0; y < f.ny; y++) {
		for (int x = 0; x < f.nx; x++) {
			f.u[at(&f, y, x)] = (double)(f.y0 + y) * n + f.x0 + x;
		}
	}
	exchange(&f);
	long bad = check(&f), allbad = 0;
	MPI_Allreduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (allbad != 0) {
		if (rank == 0) {
			fprintf(stderr, "halo: %ld ghosts do not hold their neighbour's cell\n", allbad);
		}
		MPI_Finalize();
		return 1;
	}
	for (int i = 0; i < 10; i++) {
		exchange(&f);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < reps; i++) {
		exchange(&f);
	}
	double t = (MPI_Wtime() - t0) / reps, slowest = 0;
	MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("halo impl=c n=%d ranks=%d dims=%dx%d reps=%d us_per_exchange=%.1f\n", n, size, dims[0], dims[1], reps,
		       slowest * 1e6);
	}
	for (int d = 0; d < FACES; d++) {
		free(f.sbuf[d]);
		free(f.rbuf[d]);
	}
	free(f.u);
	MPI_Finalize();
	return 0;
}
