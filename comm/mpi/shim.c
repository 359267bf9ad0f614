//go:build mpi && cgo

#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim.h"

/*
 * One request slot. Slots are allocated one by one and never move, because
 * a pending message may live in a slot's own buffer. A request that
 * heat_mpi_test saw complete keeps its outcome here: MPI has freed its
 * handle by then, and a later MPI_Waitall would only see a null request.
 */
typedef struct {
	MPI_Request req;
	int used;
	int recv;  /* a receive: its status has a count */
	int done;  /* completed by heat_mpi_test; err and count hold the outcome */
	int err;
	int count;
	int next;  /* next free slot, -1 ends the list */
	double small[HEAT_MPI_SMALL];
} slot_t;

static slot_t **table;
static int table_len;
static int free_head = -1;
static int in_use;

int heat_mpi_last_done;
int heat_mpi_last_err;
int heat_mpi_last_count;

/* The wait space (slots, errors, counts) and the scratch arrays of
 * heat_mpi_waitall, grown together. */
static int *wspace;
static MPI_Request *wreq;
static MPI_Status *wst;
static int wcap;

/* What an empty buffer points at: MPI wants a valid address even for 0 items. */
static double empty_buf[1];

int64_t heat_mpi_timeout_ns;
int heat_mpi_fault_tag = -1;
int64_t heat_mpi_last_waited_ns;
int64_t heat_mpi_spin_ns = HEAT_MPI_SPIN_NS;
int heat_mpi_last_napped;

/* The collective in progress, and its status: kept where a wait that gave
 * up left it. */
static MPI_Request creq = MPI_REQUEST_NULL;
static MPI_Status cst;

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* notice_waits reports whether a fault notice from another rank waits to
 * be received. */
static int notice_waits(void) {
	int flag = 0;
	if (heat_mpi_fault_tag >= 0) {
		MPI_Iprobe(MPI_ANY_SOURCE, heat_mpi_fault_tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	}
	return flag;
}

/*
 * poll completes the n requests at reqs (MPI_Testall, statuses into st)
 * and returns MPI_Testall's code once they have completed or it failed;
 * HEAT_MPI_TIMED_OUT once heat_mpi_timeout_ns (when > 0) have passed since
 * the call; HEAT_MPI_NOTICE when a fault notice waits. It tests without a
 * pause for heat_mpi_spin_ns and 1 ns for every byte of bytes (what the
 * requests move: a large message moves only while a rank calls MPI), as
 * MPI_Waitall would, so that a message that comes soon costs no more than
 * it did; then it sleeps between tests, a sixteenth of the time waited so
 * far (50 µs to 1 ms), so that a rank waiting long for another leaves its
 * core to the others. The time waited goes to heat_mpi_last_waited_ns. The
 * timeout is read at every pause: a shorter one set meanwhile (another
 * thread) counts at once.
 */
static int poll(int n, MPI_Request *reqs, MPI_Status *st, int64_t bytes) {
	int64_t start = 0, spin = heat_mpi_spin_ns + bytes;
	int napping = 0;
	heat_mpi_last_napped = 0;
	for (int64_t tests = 0;; tests++) {
		int flag = 0;
		int rc = MPI_Testall(n, reqs, &flag, st);
		if (flag || rc != MPI_SUCCESS) {
			heat_mpi_last_waited_ns = start ? now_ns() - start : 0;
			return rc;
		}
		/* The clock is read once the first tests have failed, then at
		 * every sixteenth while spinning (a short wait costs the tests
		 * alone), and after every nap. */
		if (tests < 16 || (tests % 16 != 0 && !napping)) {
			continue;
		}
		int64_t t = now_ns();
		if (start == 0) {
			start = t;
		}
		int64_t waited = t - start;
		heat_mpi_last_waited_ns = waited;
		if (waited < spin) {
			continue;
		}
		napping = 1;
		heat_mpi_last_napped = 1;
		int64_t limit = __atomic_load_n(&heat_mpi_timeout_ns, __ATOMIC_RELAXED);
		if (limit > 0 && waited >= limit) {
			return HEAT_MPI_TIMED_OUT;
		}
		if (notice_waits()) {
			return HEAT_MPI_NOTICE;
		}
		int64_t nap = waited / 16;
		nap = nap < 50000 ? 50000 : nap > 1000000 ? 1000000 : nap;
		struct timespec ts = {0, (long)nap};
		nanosleep(&ts, NULL);
	}
}

/* The signals Go turns into panics (nil dereference) or reports with its
 * own traceback. Open MPI leaves handlers it finds in place, but transports
 * it loads during MPI_Init may not: UCX installs crash handlers for exactly
 * these (UCX_ERROR_SIGNALS; the JVM breaks the same way, openucx/ucx#3337).
 * A Go nil dereference would then end in a UCX backtrace instead of a
 * recoverable panic, so heat_mpi_init puts Go's handlers back. */
static const int go_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define NSIG_KEPT ((int)(sizeof go_signals / sizeof go_signals[0]))

int heat_mpi_init(int *provided, int *serialized, int *rank, int *size, int *tag_ub) {
	struct sigaction saved[NSIG_KEPT];
	for (int i = 0; i < NSIG_KEPT; i++) {
		sigaction(go_signals[i], NULL, &saved[i]);
	}
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
	for (int i = 0; i < NSIG_KEPT; i++) {
		sigaction(go_signals[i], &saved[i], NULL);
	}
	if (rc != MPI_SUCCESS) {
		return rc;
	}
	*serialized = *provided >= MPI_THREAD_SERIALIZED;
	if ((rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)) != MPI_SUCCESS) {
		return rc;
	}
	if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, rank)) != MPI_SUCCESS) {
		return rc;
	}
	if ((rc = MPI_Comm_size(MPI_COMM_WORLD, size)) != MPI_SUCCESS) {
		return rc;
	}
	int *ub, flag = 0;
	if ((rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag)) != MPI_SUCCESS) {
		return rc;
	}
	*tag_ub = flag ? *ub : 32767; /* the least the standard allows */
	return MPI_SUCCESS;
}

const char *heat_mpi_thread_level_name(int level) {
	if (level == MPI_THREAD_SINGLE) {
		return "MPI_THREAD_SINGLE";
	}
	if (level == MPI_THREAD_FUNNELED) {
		return "MPI_THREAD_FUNNELED";
	}
	if (level == MPI_THREAD_SERIALIZED) {
		return "MPI_THREAD_SERIALIZED";
	}
	if (level == MPI_THREAD_MULTIPLE) {
		return "MPI_THREAD_MULTIPLE";
	}
	return "an unknown thread level";
}

int heat_mpi_finalize(void) {
	int rc = MPI_Finalize();
	for (int i = 0; i < table_len; i++) {
		free(table[i]);
	}
	free(table);
	free(wspace);
	free(wreq);
	free(wst);
	table = NULL;
	wspace = NULL;
	wreq = NULL;
	wst = NULL;
	table_len = wcap = in_use = 0;
	free_head = -1;
	return rc;
}

void heat_mpi_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

void heat_mpi_error_string(int code, char *buf, int len) {
	char s[MPI_MAX_ERROR_STRING];
	int n = 0;
	if (MPI_Error_string(code, s, &n) != MPI_SUCCESS) {
		n = 0;
	}
	if (n >= len) {
		n = len - 1;
	}
	memcpy(buf, s, (size_t)n);
	buf[n] = 0;
}

int heat_mpi_max_library_version(void) { return MPI_MAX_LIBRARY_VERSION_STRING; }

int heat_mpi_library_version(char *buf, int len) {
	if (len < MPI_MAX_LIBRARY_VERSION_STRING) {
		return MPI_ERR_ARG;
	}
	int n = 0;
	int rc = MPI_Get_library_version(buf, &n);
	buf[rc == MPI_SUCCESS ? n : 0] = 0;
	return rc;
}

/* take_slot returns a free slot, growing the table when none is left, or -1
 * when out of memory. */
static int take_slot(void) {
	if (free_head < 0) {
		int n = table_len ? 2 * table_len : 64;
		slot_t **t = realloc(table, (size_t)n * sizeof *t);
		if (t == NULL) {
			return -1;
		}
		table = t;
		for (int i = table_len; i < n; i++) {
			if ((table[i] = malloc(sizeof *table[i])) == NULL) {
				while (--i >= table_len) {
					free(table[i]);
				}
				return -1;
			}
		}
		for (int i = n - 1; i >= table_len; i--) {
			table[i]->used = 0;
			table[i]->next = free_head;
			free_head = i;
		}
		table_len = n;
	}
	int s = free_head;
	slot_t *sl = table[s];
	free_head = sl->next;
	sl->used = 1;
	sl->done = 0;
	sl->err = MPI_SUCCESS;
	sl->count = 0;
	in_use++;
	return s;
}

static void release_slot(int s) {
	table[s]->used = 0;
	table[s]->next = free_head;
	free_head = s;
	in_use--;
}

static int valid_slot(int s) { return s >= 0 && s < table_len && table[s]->used; }

/* post starts a send or receive of count values at buf in a new slot. */
static int post(int recv, void *buf, int count, int peer, int tag, int s) {
	slot_t *sl = table[s];
	sl->recv = recv;
	int rc = recv ? MPI_Irecv(buf, count, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &sl->req)
	              : MPI_Isend(buf, count, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &sl->req);
	if (rc != MPI_SUCCESS) {
		release_slot(s);
		return -rc;
	}
	return s;
}

heat_mpi_deferred_t *heat_mpi_deferred;
int heat_mpi_ndeferred;
static int deferred_cap;

heat_mpi_deferred_t *heat_mpi_deferred_space(int n) {
	if (n > deferred_cap) {
		heat_mpi_deferred_t *d = realloc(heat_mpi_deferred, (size_t)n * sizeof *d);
		if (d == NULL) {
			return NULL;
		}
		heat_mpi_deferred = d;
		deferred_cap = n;
	}
	return heat_mpi_deferred;
}

static void free_errored(MPI_Request *req);

/* flush posts the deferred small receives, in the order Go made them. */
static void flush(void) {
	for (int i = 0; i < heat_mpi_ndeferred; i++) {
		heat_mpi_deferred_t *e = &heat_mpi_deferred[i];
		e->buf = NULL;
		int s = e->count > HEAT_MPI_SMALL ? -1 : take_slot();
		if (s < 0) {
			e->slot = e->count > HEAT_MPI_SMALL ? -MPI_ERR_COUNT : -MPI_ERR_NO_MEM;
			continue;
		}
		e->buf = table[s]->small;
		e->slot = post(1, table[s]->small, e->count, e->src, e->tag, s);
	}
	heat_mpi_ndeferred = 0;
}

/* resolve turns the name of a deferred request (-2 - i) into its slot, or
 * minus the MPI error of its posting; other slots stay. */
static int resolve(int slot) { return slot <= -2 ? heat_mpi_deferred[-2 - slot].slot : slot; }

int heat_mpi_isend(uintptr_t buf, int count, int dest, int tag) {
	flush();
	int s = take_slot();
	return s < 0 ? -MPI_ERR_NO_MEM : post(0, count ? (void *)buf : empty_buf, count, dest, tag, s);
}

int heat_mpi_irecv(uintptr_t buf, int count, int src, int tag) {
	flush();
	int s = take_slot();
	return s < 0 ? -MPI_ERR_NO_MEM : post(1, count ? (void *)buf : empty_buf, count, src, tag, s);
}

int heat_mpi_isend_small(const double *buf, int count, int dest, int tag) {
	flush();
	heat_mpi_last_done = 0;
	if (count > HEAT_MPI_SMALL) {
		return -MPI_ERR_COUNT;
	}
	int s = take_slot();
	if (s < 0) {
		return -MPI_ERR_NO_MEM;
	}
	memcpy(table[s]->small, buf, (size_t)count * sizeof *buf);
	s = post(0, table[s]->small, count, dest, tag, s);
	if (s < 0) {
		return s;
	}
	MPI_Status st;
	int flag = 0;
	int rc = MPI_Test(&table[s]->req, &flag, &st);
	if (flag) {
		free_errored(&table[s]->req);
		heat_mpi_last_done = 1;
		heat_mpi_last_err = rc;
		release_slot(s);
	}
	return s;
}

/* free_errored frees a request that completed with an error: MPI may leave
 * such a request allocated (Open MPI does) instead of freeing it. */
static void free_errored(MPI_Request *req) {
	if (*req != MPI_REQUEST_NULL) {
		MPI_Request_free(req);
	}
}

/* finish records the outcome of slot s from the status of its completion. */
static void finish(slot_t *s, int err, MPI_Status *st) {
	s->done = 1;
	s->err = err;
	s->count = 0;
	if (s->recv && MPI_Get_count(st, MPI_DOUBLE, &s->count) != MPI_SUCCESS) {
		s->count = -1;
	}
}

int heat_mpi_test(int slot) {
	flush();
	slot = resolve(slot);
	if (slot < 0 && slot > -2) { /* never a slot Go names */
		return -MPI_ERR_REQUEST;
	}
	if (slot < 0) { /* a deferred receive that could not be posted */
		heat_mpi_last_err = -slot;
		heat_mpi_last_count = 0;
		return 1;
	}
	if (!valid_slot(slot)) {
		return -MPI_ERR_REQUEST;
	}
	slot_t *s = table[slot];
	if (!s->done) {
		MPI_Status st;
		int flag = 0;
		int rc = MPI_Test(&s->req, &flag, &st);
		if (rc != MPI_SUCCESS && !flag) {
			return -rc; /* the test itself failed */
		}
		if (!flag) {
			return notice_waits() ? 2 : 0;
		}
		/* rc is the request's own error, such as a truncated message. */
		free_errored(&s->req);
		finish(s, rc, &st);
	}
	heat_mpi_last_err = s->err;
	heat_mpi_last_count = s->count;
	return 1;
}

int *heat_mpi_wait_space(int n) {
	if (n > wcap) {
		int *sp = realloc(wspace, 3 * (size_t)n * sizeof *sp);
		if (sp == NULL) {
			return NULL;
		}
		wspace = sp;
		MPI_Request *r = realloc(wreq, (size_t)n * sizeof *r);
		if (r == NULL) {
			return NULL;
		}
		wreq = r;
		MPI_Status *st = realloc(wst, (size_t)n * sizeof *st);
		if (st == NULL) {
			return NULL;
		}
		wst = st;
		wcap = n;
	}
	return wspace;
}

int heat_mpi_waitall(int n, int64_t bytes) {
	if (n > wcap) {
		return MPI_ERR_ARG;
	}
	flush();
	int *slots = wspace;
	int *errs = wspace + n, *counts = wspace + 2 * n;
	for (int i = 0; i < n; i++) {
		slots[i] = resolve(slots[i]);
		if (slots[i] >= 0 && !valid_slot(slots[i])) {
			return MPI_ERR_REQUEST;
		}
	}
	for (int i = 0; i < n; i++) {
		/* A deferred receive that could not be posted: its error. */
		wreq[i] = slots[i] < 0 ? MPI_REQUEST_NULL : table[slots[i]]->done ? MPI_REQUEST_NULL : table[slots[i]]->req;
	}
	int rc = poll(n, wreq, wst, bytes);
	if (rc == HEAT_MPI_TIMED_OUT || rc == HEAT_MPI_NOTICE) {
		/* Nothing completes: every slot stays, and errs says which
		 * requests had completed, to name the peers of the others. */
		for (int i = 0; i < n; i++) {
			int done = 1;
			if (wreq[i] != MPI_REQUEST_NULL) {
				MPI_Request_get_status(wreq[i], &done, MPI_STATUS_IGNORE);
			}
			errs[i] = done;
			counts[i] = HEAT_MPI_STILL_PENDING;
		}
		return rc;
	}
	for (int i = 0; i < n; i++) {
		if (slots[i] < 0) {
			errs[i] = -slots[i];
			counts[i] = 0;
			continue;
		}
		slot_t *s = table[slots[i]];
		if (!s->done) {
			int err = MPI_SUCCESS;
			if (rc == MPI_ERR_IN_STATUS) {
				err = wst[i].MPI_ERROR;
			} else if (rc != MPI_SUCCESS) {
				err = rc;
			}
			int general = rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS;
			if (wreq[i] != MPI_REQUEST_NULL && (err == MPI_ERR_PENDING || general)) {
				/* Not completed (or unknown after a failure of the call
				 * itself): keep the slot, so it can be waited again. */
				s->req = wreq[i];
				errs[i] = err;
				counts[i] = HEAT_MPI_STILL_PENDING;
				continue;
			}
			free_errored(&wreq[i]);
			finish(s, err, &wst[i]);
		}
		errs[i] = s->err;
		counts[i] = s->count;
		release_slot(slots[i]);
	}
	return rc;
}

int heat_mpi_pending(void) {
	flush();
	return in_use;
}

/* collective waits for the collective just started in creq (rc: the code
 * of starting it). */
static int collective(int rc, int64_t bytes) {
	if (rc != MPI_SUCCESS) {
		creq = MPI_REQUEST_NULL;
		heat_mpi_last_waited_ns = 0;
		return rc;
	}
	return poll(1, &creq, &cst, bytes);
}

int heat_mpi_allgather_i64(const int64_t *in, int n, int64_t *out) {
	flush();
	return collective(MPI_Iallgather(in, n, MPI_INT64_T, out, n, MPI_INT64_T, MPI_COMM_WORLD, &creq), 0);
}

int heat_mpi_allgather_f64(const double *in, int n, double *out) {
	flush();
	int size = 1;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	return collective(MPI_Iallgather(n ? in : empty_buf, n, MPI_DOUBLE, n ? out : empty_buf, n, MPI_DOUBLE,
	                                 MPI_COMM_WORLD, &creq),
	                  (int64_t)n * size * 8);
}

int heat_mpi_bcast(void *buf, int n, int root) {
	flush();
	return collective(MPI_Ibcast(n ? buf : (void *)empty_buf, n, MPI_BYTE, root, MPI_COMM_WORLD, &creq), n);
}

int heat_mpi_gatherv(const void *send, int n, void *recv, const int *counts, const int *displs, int root,
                     int64_t total) {
	flush();
	return collective(MPI_Igatherv(n ? send : (const void *)empty_buf, n, MPI_BYTE, recv ? recv : (void *)empty_buf,
	                               counts, displs, MPI_BYTE, root, MPI_COMM_WORLD, &creq),
	                  total);
}

int heat_mpi_collective_finish(void) {
	flush();
	return creq == MPI_REQUEST_NULL ? MPI_SUCCESS : MPI_Wait(&creq, &cst);
}

int heat_mpi_notify(const double *msg, int n, int self, int size) {
	flush();
	/* The copy stays until the job ends: the sends are never waited for. */
	double *copy = malloc((size_t)(n ? n : 1) * sizeof *copy);
	if (copy == NULL) {
		return MPI_ERR_NO_MEM;
	}
	memcpy(copy, msg, (size_t)n * sizeof *msg);
	int first = MPI_SUCCESS;
	for (int r = 0; r < size; r++) {
		if (r == self) {
			continue;
		}
		MPI_Request q;
		int rc = MPI_Isend(copy, n, MPI_DOUBLE, r, heat_mpi_fault_tag, MPI_COMM_WORLD, &q);
		if (rc == MPI_SUCCESS) {
			rc = MPI_Request_free(&q);
		}
		if (rc != MPI_SUCCESS && first == MPI_SUCCESS) {
			first = rc;
		}
	}
	return first;
}

int heat_mpi_notice(double *buf, int cap, int *src) {
	flush();
	int flag = 0;
	MPI_Status st;
	int rc = MPI_Iprobe(MPI_ANY_SOURCE, heat_mpi_fault_tag, MPI_COMM_WORLD, &flag, &st);
	if (rc != MPI_SUCCESS) {
		return -rc;
	}
	if (!flag) {
		return 0;
	}
	int n = 0;
	MPI_Get_count(&st, MPI_DOUBLE, &n);
	*src = st.MPI_SOURCE;
	if (n > cap || n < 1) {
		/* Not a notice of ours: take it out of the way. */
		double *junk = malloc((size_t)(n > 0 ? n : 1) * sizeof *junk);
		if (junk == NULL) {
			return -MPI_ERR_NO_MEM;
		}
		rc = MPI_Recv(junk, n, MPI_DOUBLE, st.MPI_SOURCE, heat_mpi_fault_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		free(junk);
		return rc == MPI_SUCCESS ? HEAT_MPI_DROPPED : -rc;
	}
	rc = MPI_Recv(buf, n, MPI_DOUBLE, st.MPI_SOURCE, heat_mpi_fault_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	return rc == MPI_SUCCESS ? n : -rc;
}
