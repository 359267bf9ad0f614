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
 * buffer: heat_mpi_isend_small copies buf there, and a deferred small
 * receive (below) arrives there, for Go to copy the values out once the
 * request has completed. That costs a copy of at most 1 KiB instead of
 * pinning the Go buffer. A larger buffer
 * is pinned by Go and passed as an integer, so that cgo need not check it. */
#define HEAT_MPI_SMALL 128
int heat_mpi_isend(uintptr_t buf, int count, int dest, int tag);
int heat_mpi_irecv(uintptr_t buf, int count, int src, int tag);
/* heat_mpi_isend_small tests the send at once: a small message usually
 * leaves in the call (eagerly), and then the slot is released at once and
 * heat_mpi_last_done is 1, with the outcome in heat_mpi_last_err, so that
 * waiting for it costs no call. */
int heat_mpi_isend_small(const double *buf, int count, int dest, int tag);
extern int heat_mpi_last_done;
/* Small receives are deferred: Go writes count, src and tag of entry i <
 * heat_mpi_ndeferred into heat_mpi_deferred itself, with no call, and the
 * next function here that posts, waits, tests or communicates first posts
 * them in order (flush), writes each entry's slot (or minus an MPI error
 * code) and the slot's buffer, where the values arrive, and sets
 * heat_mpi_ndeferred to 0. Posting order, and so MPI's matching order, is
 * kept; a small message that arrives first waits as unexpected (eager)
 * until then. heat_mpi_waitall and heat_mpi_test name the request of entry
 * i by the slot -2 - i. heat_mpi_deferred_space makes room for n entries
 * (NULL when out of memory; the array moves when it grows). */
typedef struct {
	int count, src, tag, slot;
	double *buf;
} heat_mpi_deferred_t;
extern heat_mpi_deferred_t *heat_mpi_deferred;
extern int heat_mpi_ndeferred;
heat_mpi_deferred_t *heat_mpi_deferred_space(int n);
/* heat_mpi_test returns 1 once slot has completed, with its error code and
 * received count in heat_mpi_last_err and heat_mpi_last_count (the outcome
 * is also kept for heat_mpi_waitall, which still has to release the slot),
 * 0 while it has not (2 when a fault notice waits, see below), or minus an
 * MPI error code. */
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
 * error keeps its slot and gets the count HEAT_MPI_STILL_PENDING. It
 * returns HEAT_MPI_TIMED_OUT or HEAT_MPI_NOTICE (below) when it gave up:
 * then every slot stays, every count is HEAT_MPI_STILL_PENDING, and each
 * error code is instead 1 if that request had completed, 0 if not. */
int heat_mpi_waitall(int n, int64_t bytes);
#define HEAT_MPI_STILL_PENDING (-2)

/* Every wait (heat_mpi_waitall, the collectives) tests its requests
 * without a pause for heat_mpi_spin_ns plus 1 ns for each of the bytes it
 * moves (heat_mpi_waitall's bytes: the caller's sum over the requests;
 * the collectives count theirs), then sleeps between tests; it
 * gives up with HEAT_MPI_TIMED_OUT once it has lasted heat_mpi_timeout_ns
 * (0: never; Go stores it atomically, the waits load it atomically, so it
 * may change during one), and with HEAT_MPI_NOTICE once a message with
 * the tag heat_mpi_fault_tag waits (another rank's notice that it gave
 * up; -1: none looked for). heat_mpi_last_waited_ns is how long the last
 * wait lasted. */
#define HEAT_MPI_SPIN_NS 1000000
extern int64_t heat_mpi_spin_ns; /* HEAT_MPI_SPIN_NS at most; Go adapts it */
extern int heat_mpi_last_napped;  /* the last wait slept between tests */
#define HEAT_MPI_TIMED_OUT (-1001)
#define HEAT_MPI_NOTICE (-1002)
extern int64_t heat_mpi_timeout_ns;
extern int heat_mpi_fault_tag;
extern int64_t heat_mpi_last_waited_ns;
/* heat_mpi_pending is the number of slots in use. */
int heat_mpi_pending(void);

/* Collectives on MPI_COMM_WORLD, nonblocking ones waited for like
 * heat_mpi_waitall: an MPI error code, or HEAT_MPI_TIMED_OUT or
 * HEAT_MPI_NOTICE, and then the collective stays in progress, its buffers
 * in use, until heat_mpi_collective_finish (MPI_Wait, for tests) or the
 * end of the job. */
int heat_mpi_allgather_i64(const int64_t *in, int n, int64_t *out);
int heat_mpi_allgather_f64(const double *in, int n, double *out);
int heat_mpi_bcast(void *buf, int n, int root);
int heat_mpi_gatherv(const void *send, int n, void *recv, const int *counts, const int *displs, int root,
                     int64_t total);
int heat_mpi_collective_finish(void);

/* Fault notices. heat_mpi_notify sends a copy of the n values at msg to
 * every rank but self with the tag heat_mpi_fault_tag, never waited for
 * (the job is ending). heat_mpi_notice receives one waiting notice into buf
 * (at most cap values) and returns its length, with its sender in *src; 0
 * when none waits; HEAT_MPI_DROPPED for a message of another length,
 * received and dropped; or minus an MPI error code. */
#define HEAT_MPI_DROPPED (-1003)
int heat_mpi_notify(const double *msg, int n, int self, int size);
int heat_mpi_notice(double *buf, int cap, int *src);

#endif
