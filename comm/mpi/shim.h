/*
 * The C side of comm/mpi: every MPI handle lives here, so Go never holds an
 * MPI type (MPI_Request is a pointer in Open MPI and an int in MPICH). Go
 * names a pending request by a small int slot into the table in shim.c.
 * Every function returns an MPI error code (MPI_SUCCESS is 0); Go makes all
 * calls under one mutex, so nothing here locks.
 */
#ifndef HEAT_MPI_SHIM_H
#define HEAT_MPI_SHIM_H

#include <stdint.h>

/* heat_mpi_init calls MPI_Init_thread asking for MPI_THREAD_SERIALIZED
 * (*serialized tells whether it was provided), sets MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD and reads rank, size and MPI_TAG_UB. It keeps the Go
 * runtime's handlers of the fault signals (see shim.c). */
int heat_mpi_init(int *provided, int *serialized, int *rank, int *size, int *tag_ub);
/* heat_mpi_thread_level_name names an MPI_THREAD_* level. */
const char *heat_mpi_thread_level_name(int level);
int heat_mpi_finalize(void);
void heat_mpi_abort(int code);

/* heat_mpi_error_string writes MPI_Error_string(code) into buf (len bytes,
 * NUL-terminated). */
void heat_mpi_error_string(int code, char *buf, int len);
/* heat_mpi_library_version writes MPI_Get_library_version into buf. */
int heat_mpi_library_version(char *buf, int len);
int heat_mpi_max_library_version(void);

/* Point to point on MPI_DOUBLE. Each returns the slot that names the new
 * request until it is waited for, or minus an MPI error code.
 *
 * A message of up to HEAT_MPI_SMALL values travels through the slot's own
 * buffer: heat_mpi_isend_small copies buf there, and heat_mpi_irecv_small
 * receives there and leaves the buffer's address in heat_mpi_last_buffer
 * for Go to copy the values out once the request has completed. That costs
 * a copy of at most 1 KiB instead of pinning the Go buffer. A larger buffer
 * is pinned by Go and passed as an integer, so that cgo need not check it. */
#define HEAT_MPI_SMALL 128
int heat_mpi_isend(uintptr_t buf, int count, int dest, int tag);
int heat_mpi_irecv(uintptr_t buf, int count, int src, int tag);
int heat_mpi_isend_small(const double *buf, int count, int dest, int tag);
int heat_mpi_irecv_small(int count, int src, int tag);
extern double *heat_mpi_last_buffer;
/* heat_mpi_test returns 1 once slot has completed, with its error code and
 * received count in heat_mpi_last_err and heat_mpi_last_count (the outcome
 * is also kept for heat_mpi_waitall, which still has to release the slot),
 * 0 while it has not, or minus an MPI error code. */
int heat_mpi_test(int slot);
extern int heat_mpi_last_err, heat_mpi_last_count;
/* heat_mpi_wait_space returns room for a Waitall of n requests, 3n ints in
 * C memory: the caller writes the slots into the first n; heat_mpi_waitall
 * writes each request's error code into the next n and, for a receive, the
 * number of values that arrived into the last n. NULL when out of memory.
 * The room moves when it grows. */
int *heat_mpi_wait_space(int n);
/* heat_mpi_waitall completes the n slots written into the wait space. A
 * slot whose request completed is released; one still pending after an
 * error keeps its slot and gets the count HEAT_MPI_STILL_PENDING. */
int heat_mpi_waitall(int n);
#define HEAT_MPI_STILL_PENDING (-2)
/* heat_mpi_pending is the number of slots in use. */
int heat_mpi_pending(void);

/* Collectives on MPI_COMM_WORLD. */
int heat_mpi_allgather_i64(const int64_t *in, int n, int64_t *out);
int heat_mpi_allgather_f64(const double *in, int n, double *out);
int heat_mpi_bcast(void *buf, int n, int root);
int heat_mpi_gatherv(const void *send, int n, void *recv, const int *counts, const int *displs, int root);

#endif
