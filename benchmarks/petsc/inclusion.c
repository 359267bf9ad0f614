/*
 * inclusion.c: PETSc's side of benchmarks/petsc.sh. It solves heat's "square
 * inclusion" Poisson problem with PETSc 3.18 and measures, per solver
 * configuration, the iterations, the accuracy of the answer and the time of
 * the hierarchy's assembly, of KSPSetUp and of KSPSolve (PetscTime).
 *
 * The problem, discretised exactly as heat does it: the unit square, N×N
 * cells (N = 1024 unless -n N or a first argument N), cell centres
 * x_i = (i + 1/2)/N; k = k_in (1e6, -k_in) on the cells whose centre lies in
 * [3/8, 5/8)², 1 elsewhere; ∇·(k∇u) = f with f = −1 and u = 0 on the four
 * faces. Finite volumes: the face between cells i and j has
 * k_f = 2·k_i·k_j/(k_i + k_j) (k_i where they are equal), a physical face
 * the cell's own k_i with the ghost −u_i, i.e. the term 2·k_i·(0 − u_i).
 * Multiplied by −h² (in 2D the cell's integral of the equation), row i is
 *   (A u)_i = Σ_faces c_f·(u_i − u_nb) [+ 2·k_i·u_i per physical face] = h²,
 * A SPD: the same u as heat's Σ k_f (u_nb − u_i)/h² = f.
 *
 * -config selects the preconditioner of KSPCG:
 *   redisc    PCMG on a hierarchy of DMDAs (DMCoarsen with DMDA_Q0: cell-
 *             centred, N/2 per level down to 4×4, -levels L fewer), each
 *             level's A rediscretised from coarse k: -coarse_k cell (the
 *             default): the arithmetic mean of the fine cells' k under a
 *             coarse cell, then the face rule above; -coarse_k face: the
 *             mean of the fine face coefficients under a coarse face (heat's
 *             choice). Interpolation (-interp): constant, the default here,
 *             is PETSc's own DMCreateInterpolation for DMDA_Q0 (piecewise
 *             constant, as heat's mgcg uses); linear is this file's
 *             cell-centred bilinear one (3/4, 1/4 per axis, ghost −U at a
 *             physical face), which with rediscretised levels and a 10⁶
 *             jump makes a poor preconditioner (64²: 277 iterations against
 *             11). Restriction: PCMG's default, the interpolation's
 *             transpose (sums over the children, what the integrated rows
 *             above expect).
 *   galerkin  the same PCMG, coarse A = PᵀAP (PETSc's -pc_mg_galerkin
 *             both), -interp linear by default (constant: 18 iterations
 *             against 11 at 64²); no coarse rediscretisation.
 *   hypre     PCHYPRE BoomerAMG on the assembled A.
 *   gamg      PCGAMG (PETSc's own smoothed aggregation).
 * The smoothers, tolerances and everything else stay PETSc's defaults unless
 * given on the command line (KSPSetFromOptions is called last); the program
 * prints what the levels actually use.
 *
 * Printed, after the solve (not timed): iterations and the converged reason,
 * ‖b−Ax‖₂/‖b‖₂, ‖b−Ax‖∞/‖b‖∞ (heat's "residual"), the normwise backward
 * error ‖b−Ax‖∞/(‖A‖∞‖x‖∞+‖b‖∞) and the componentwise one
 * max_i |b−Ax|_i/((|A||x|)_i+|b_i|) (heat's backward_error and
 * component_error), the solution's min, max, mean, √Σu² and the value of cell
 * (N/2, N/2), and with -compare FILE.npy (heat's snapshot) the largest
 * difference from heat's field relative to its max. -true_monitor prints the
 * true residuals every iteration (slow: for the stall study only). -resolve
 * times a second KSPSolve from zero, to see what the first pays for lazy
 * setup (measured at 1024²: nothing under PCMG, whose Chebyshev eigenvalue
 * estimates fall in KSPSetUp; 0.2 s under hypre on 1 rank). -k_in 1: the
 * uniform problem. The last line, RESULT key=value ..., is for the script.
 *
 * Every line here is this benchmark's own; build and run: benchmarks/petsc.sh.
 */
#include <petscdmda.h>
#include <petscksp.h>
#include <petsctime.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct {
  PetscInt  N;      /* fine cells per axis */
  PetscReal kin;    /* k inside the inclusion */
  PetscBool facek;  /* coarse coefficients: mean of fine faces (else of cell k) */
  PetscReal *kfine; /* per fine index along an axis: 1 inside [3/8, 5/8), 0 outside */
  double    *kmap;  /* -kmap FILE.npy: k of every cell, C order (y, x); NULL: the inclusion */
} Problem;

/* heat's face rule: the harmonic mean, ki itself where equal, 0 at a hole. */
static PetscReal Harmonic(PetscReal ki, PetscReal kj)
{
  if (ki == kj) return ki;
  if (ki == 0 || kj == 0) return 0;
  return (2 * ki) * kj / (ki + kj);
}

/* k of fine cell (i, j). */
static PetscReal FineK(const Problem *p, PetscInt i, PetscInt j)
{
  if (p->kmap) return p->kmap[(size_t)j * p->N + i];
  return (p->kfine[i] != 0 && p->kfine[j] != 0) ? p->kin : 1.0;
}

/* k of coarse cell (ci, cj) of ratio r: the mean of its r×r fine cells' k. */
static PetscReal CellMeanK(const Problem *p, PetscInt r, PetscInt ci, PetscInt cj)
{
  PetscInt ox = 0, oy = 0;
  for (PetscInt a = 0; a < r; a++) {
    ox += p->kfine[r * ci + a] != 0;
    oy += p->kfine[r * cj + a] != 0;
  }
  if (ox * oy == r * r) return p->kin;
  if (ox * oy == 0) return 1.0;
  return 1.0 + (p->kin - 1.0) * (PetscReal)(ox * oy) / (PetscReal)(r * r);
}

/* The coefficient c of a face of cell (ci, cj) on the level of ratio r (r = 1:
   the fine grid), towards direction (dx, dy), one of (±1, 0), (0, ±1). A
   physical face returns the cell's boundary coefficient (its row adds 2c to
   the diagonal and has no neighbour). M = N/r cells per axis. */
static PetscReal FaceCoef(const Problem *p, PetscInt r, PetscInt ci, PetscInt cj, PetscInt dx, PetscInt dy)
{
  PetscInt  M = p->N / r, cin = ci + dx, cjn = cj + dy;
  PetscBool phys = (PetscBool)(cin < 0 || cin >= M || cjn < 0 || cjn >= M);
  if (r == 1 || !p->facek) {
    PetscReal ki = r == 1 ? FineK(p, ci, cj) : CellMeanK(p, r, ci, cj);
    if (phys) return ki;
    return Harmonic(ki, r == 1 ? FineK(p, cin, cjn) : CellMeanK(p, r, cin, cjn));
  }
  /* Mean of the r fine faces that make up this coarse face. */
  PetscReal s = 0;
  for (PetscInt a = 0; a < r; a++) {
    PetscInt i, j, in, jn;
    if (dx != 0) { /* fine cells of the coarse cell's column next to the face */
      i  = dx > 0 ? r * ci + r - 1 : r * ci;
      j  = r * cj + a;
      in = i + dx;
      jn = j;
    } else {
      i  = r * ci + a;
      j  = dy > 0 ? r * cj + r - 1 : r * cj;
      in = i;
      jn = j + dy;
    }
    s += phys ? FineK(p, i, j) : Harmonic(FineK(p, i, j), FineK(p, in, jn));
  }
  return s / r;
}

/* Assembles the level's A on DMDA da of ratio r. */
static PetscErrorCode Assemble(DM da, const Problem *p, PetscInt r, Mat A)
{
  PetscInt          xs, ys, xm, ym;
  const PetscInt    dirs[4][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};
  PetscFunctionBeginUser;
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  for (PetscInt j = ys; j < ys + ym; j++) {
    for (PetscInt i = xs; i < xs + xm; i++) {
      MatStencil  row = {.i = i, .j = j}, col[5];
      PetscScalar v[5];
      PetscInt    n = 1;
      PetscReal   diag = 0;
      for (PetscInt d = 0; d < 4; d++) {
        PetscInt  in = i + dirs[d][0], jn = j + dirs[d][1];
        PetscReal c  = FaceCoef(p, r, i, j, dirs[d][0], dirs[d][1]);
        if (in < 0 || in >= p->N / r || jn < 0 || jn >= p->N / r) {
          diag += 2 * c;
        } else {
          diag += c;
          col[n].i = in;
          col[n].j = jn;
          v[n++]   = -c;
        }
      }
      col[0].i = i;
      col[0].j = j;
      v[0]     = diag;
      PetscCall(MatSetValuesStencil(A, 1, &row, n, col, v, INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(A, MAT_SPD, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* |A| (for the componentwise backward error): A's copy, each stored value
   replaced by its magnitude (the local diagonal and off-diagonal blocks of an
   MPIAIJ, or the SeqAIJ itself). */
static PetscErrorCode AbsValues(Mat A, Mat *B)
{
  Mat       part[2];
  PetscInt  nparts = 1;
  PetscBool mpi;
  PetscFunctionBeginUser;
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, B));
  PetscCall(PetscObjectTypeCompare((PetscObject)*B, MATMPIAIJ, &mpi));
  if (mpi) {
    PetscCall(MatMPIAIJGetSeqAIJ(*B, &part[0], &part[1], NULL));
    nparts = 2;
  } else {
    part[0] = *B;
  }
  for (PetscInt q = 0; q < nparts; q++) {
    MatInfo      info;
    PetscScalar *v;
    PetscCall(MatGetInfo(part[q], MAT_LOCAL, &info));
    PetscCall(MatSeqAIJGetArray(part[q], &v));
    for (PetscInt e = 0; e < (PetscInt)info.nz_used; e++) v[e] = PetscAbsScalar(v[e]);
    PetscCall(MatSeqAIJRestoreArray(part[q], &v));
  }
  PetscFunctionReturn(0);
}

/* PETSc's global (parallel) index of cell (i, j) of a DMDA: ranks own boxes,
   x fastest both among the ranks and in a box. */
typedef struct {
  PetscInt  m, M;
  PetscInt *ox, *oy;   /* owner column/row of each index */
  PetscInt *x0, *y0;   /* first index of each owner column/row */
  PetscInt *wx, *wy;   /* widths */
  PetscInt *start;     /* first global index of each rank */
} Layout;

static PetscErrorCode LayoutCreate(DM da, Layout *L)
{
  PetscInt        M, m, n;
  const PetscInt *lx, *ly;
  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, NULL, &M, NULL, NULL, &m, &n, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetOwnershipRanges(da, &lx, &ly, NULL));
  L->m = m;
  L->M = M;
  PetscCall(PetscMalloc7(M, &L->ox, M, &L->oy, m, &L->x0, n, &L->y0, m, &L->wx, n, &L->wy, m * n, &L->start));
  for (PetscInt a = 0, s = 0; a < m; s += lx[a++]) {
    L->x0[a] = s;
    L->wx[a] = lx[a];
    for (PetscInt i = s; i < s + lx[a]; i++) L->ox[i] = a;
  }
  for (PetscInt a = 0, s = 0; a < n; s += ly[a++]) {
    L->y0[a] = s;
    L->wy[a] = ly[a];
    for (PetscInt j = s; j < s + ly[a]; j++) L->oy[j] = a;
  }
  for (PetscInt q = 0, s = 0; q < m * n; q++) {
    L->start[q] = s;
    s += lx[q % m] * ly[q / m];
  }
  PetscFunctionReturn(0);
}

static PetscInt LayoutIndex(const Layout *L, PetscInt i, PetscInt j)
{
  PetscInt px = L->ox[i], py = L->oy[j];
  return L->start[py * L->m + px] + (j - L->y0[py]) * L->wx[px] + (i - L->x0[px]);
}

static PetscErrorCode LayoutDestroy(Layout *L)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree7(L->ox, L->oy, L->x0, L->y0, L->wx, L->wy, L->start));
  PetscFunctionReturn(0);
}

/* 1D cell-centred linear interpolation weights of fine index i from a coarse
   axis of Mc cells: the parent 3/4, its nearer neighbour 1/4, or at a
   physical face (neighbour outside) the ghost −U_parent: the parent 1/2. */
static PetscInt Weights1D(PetscInt i, PetscInt Mc, PetscInt idx[2], PetscReal w[2])
{
  PetscInt ci = i / 2, cj = (i % 2 == 0) ? ci - 1 : ci + 1;
  idx[0] = ci;
  if (cj < 0 || cj >= Mc) {
    w[0] = 0.5;
    return 1;
  }
  w[0]   = 0.75;
  idx[1] = cj;
  w[1]   = 0.25;
  return 2;
}

/* The interpolation from coarse DMDA dac to fine DMDA daf (Mf = 2 Mc). */
static PetscErrorCode Interpolation(DM daf, DM dac, Mat *P)
{
  Layout   Lf, Lc;
  PetscInt xs, ys, xm, ym, xsc, ysc, xmc, ymc, Mf, Mc;
  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(daf, NULL, &Mf, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetInfo(dac, NULL, &Mc, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCheck(Mf == 2 * Mc, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "levels of %" PetscInt_FMT " and %" PetscInt_FMT " cells", Mf, Mc);
  PetscCall(DMDAGetCorners(daf, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DMDAGetCorners(dac, &xsc, &ysc, NULL, &xmc, &ymc, NULL));
  PetscCall(LayoutCreate(daf, &Lf));
  PetscCall(LayoutCreate(dac, &Lc));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, xm * ym, xmc * ymc, Mf * Mf, Mc * Mc, 4, NULL, 4, NULL, P));
  for (PetscInt j = ys; j < ys + ym; j++) {
    PetscInt  iy[2], ny;
    PetscReal wy[2];
    ny = Weights1D(j, Mc, iy, wy);
    for (PetscInt i = xs; i < xs + xm; i++) {
      PetscInt    ix[2], nx, row = LayoutIndex(&Lf, i, j), cols[4], n = 0;
      PetscReal   wx[2];
      PetscScalar v[4];
      nx = Weights1D(i, Mc, ix, wx);
      for (PetscInt b = 0; b < ny; b++)
        for (PetscInt a = 0; a < nx; a++) {
          cols[n] = LayoutIndex(&Lc, ix[a], iy[b]);
          v[n++]  = wx[a] * wy[b];
        }
      PetscCall(MatSetValues(*P, 1, &row, n, cols, v, INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*P, MAT_FINAL_ASSEMBLY));
  PetscCall(LayoutDestroy(&Lf));
  PetscCall(LayoutDestroy(&Lc));
  PetscFunctionReturn(0);
}

/* Accuracy figures of iterate x. */
typedef struct {
  Mat       A, Aabs;
  Vec       b, r, m, w;
  PetscReal normA, normb2, normbinf;
} Checker;

typedef struct {
  PetscReal rel2, relinf, backward, component;
} Accuracy;

static PetscErrorCode Measure(Checker *c, Vec x, Accuracy *acc)
{
  PetscReal r2, rinf, xinf;
  PetscFunctionBeginUser;
  PetscCall(MatResidual(c->A, c->b, x, c->r)); /* r = b − A x */
  PetscCall(VecNorm(c->r, NORM_2, &r2));
  PetscCall(VecNorm(c->r, NORM_INFINITY, &rinf));
  PetscCall(VecNorm(x, NORM_INFINITY, &xinf));
  acc->rel2     = r2 / c->normb2;
  acc->relinf   = rinf / c->normbinf;
  acc->backward = rinf / (c->normA * xinf + c->normbinf);
  /* m = |A||x| + |b|, then max_i |r_i|/m_i (m > 0: b = h² everywhere) */
  PetscCall(VecCopy(x, c->w));
  PetscCall(VecAbs(c->w));
  PetscCall(MatMult(c->Aabs, c->w, c->m));
  PetscCall(VecCopy(c->b, c->w));
  PetscCall(VecAbs(c->w));
  PetscCall(VecAXPY(c->m, 1.0, c->w));
  PetscCall(VecAbs(c->r));
  PetscCall(VecPointwiseDivide(c->r, c->r, c->m));
  PetscCall(VecMax(c->r, NULL, &acc->component));
  PetscFunctionReturn(0);
}

static PetscErrorCode TrueMonitor(KSP ksp, PetscInt it, PetscReal rnorm, void *ctx)
{
  Checker *c = (Checker *)ctx;
  Vec      x;
  Accuracy a;
  PetscFunctionBeginUser;
  PetscCall(KSPBuildSolution(ksp, NULL, &x));
  PetscCall(Measure(c, x, &a));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  it %3" PetscInt_FMT "  ksp_norm %.3e  true |r|2/|b|2 %.3e  |r|inf/|b|inf %.3e  normwise %.3e  componentwise %.3e\n", it, (double)rnorm, (double)a.rel2,
                        (double)a.relinf, (double)a.backward, (double)a.component));
  PetscFunctionReturn(0);
}

/* Reads heat's snapshot (.npy, <f4 or <f8, C order [ny, nx]) on rank 0 and
   returns max |u − heat|/max |heat| against the natural-ordered u. */
static PetscErrorCode CompareNpy(const char *path, const PetscScalar *u, PetscInt N, PetscReal *rel)
{
  FILE         *f = fopen(path, "rb");
  unsigned char magic[10];
  uint32_t      hl;
  char         *hdr, *s;
  int           f8, ny = 0, nx = 0;
  PetscReal     dmax = 0, hmax = 0;
  PetscFunctionBeginUser;
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open %s", path);
  PetscCheck(fread(magic, 1, 8, f) == 8 && memcmp(magic, "\x93NUMPY", 6) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: not a .npy", path);
  if (magic[6] == 1) {
    unsigned char b2[2];
    PetscCheck(fread(b2, 1, 2, f) == 2, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "short read");
    hl = b2[0] | (uint32_t)b2[1] << 8;
  } else {
    unsigned char b4[4];
    PetscCheck(fread(b4, 1, 4, f) == 4, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "short read");
    hl = b4[0] | (uint32_t)b4[1] << 8 | (uint32_t)b4[2] << 16 | (uint32_t)b4[3] << 24;
  }
  PetscCall(PetscMalloc1(hl + 1, &hdr));
  PetscCheck(fread(hdr, 1, hl, f) == hl, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "short read");
  hdr[hl] = 0;
  PetscCheck(strstr(hdr, "'<f4'") || strstr(hdr, "'<f8'"), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: not little-endian float: %s", path, hdr);
  f8 = strstr(hdr, "'<f8'") != NULL;
  PetscCheck(strstr(hdr, "'fortran_order': False"), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: Fortran order", path);
  s = strstr(hdr, "'shape'");
  PetscCheck(s && (s = strchr(s, '(')) && sscanf(s, "(%d, %d)", &ny, &nx) == 2, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: no 2D shape", path);
  PetscCheck(ny == N && nx == N, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "%s is %dx%d, not %" PetscInt_FMT "x%" PetscInt_FMT, path, ny, nx, N, N);
  for (PetscInt q = 0; q < N * N; q++) {
    double v;
    if (f8) {
      PetscCheck(fread(&v, 8, 1, f) == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "short read");
    } else {
      float w;
      PetscCheck(fread(&w, 4, 1, f) == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "short read");
      v = w;
    }
    dmax = PetscMax(dmax, PetscAbsReal(PetscRealPart(u[q]) - v));
    hmax = PetscMax(hmax, PetscAbsReal(v));
  }
  fclose(f);
  PetscCall(PetscFree(hdr));
  *rel = dmax / hmax;
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Problem        p = {.N = 1024, .kin = 1e6, .facek = PETSC_FALSE};
  char           config[32] = "redisc", coarsek[16] = "cell", interp[16] = "", npy[PETSC_MAX_PATH_LEN] = "";
  PetscBool      monitor = PETSC_FALSE, resolve = PETSC_FALSE, view = PETSC_FALSE, cmp = PETSC_FALSE, mg, galerkin;
  PetscInt       L = 0, its, Lmax;
  PetscMPIInt    size;
  DM            *da;
  Mat            A, Aabs, *Al, *P;
  Vec            x, b;
  KSP            ksp;
  PC             pc;
  Checker        chk;
  Accuracy       acc;
  PetscLogDouble t0, t1, tasm, thier = 0, tsetup, tsolve, tsolve2 = -1;
  KSPConvergedReason reason;
  PetscReal      rtol, umax, umin, usum, ul2, ucentre = 0, cmprel = -1;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (argc > 1 && argv[1][0] != '-') p.N = atoi(argv[1]);
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &p.N, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-k_in", &p.kin, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-config", config, sizeof(config), NULL));
  {
    /* -kmap FILE.npy: a little-endian float64 N×N array (heat's maps.k). */
    char      kfile[PETSC_MAX_PATH_LEN];
    PetscBool has;
    PetscCall(PetscOptionsGetString(NULL, NULL, "-kmap", kfile, sizeof(kfile), &has));
    if (has) {
      FILE         *f = fopen(kfile, "rb");
      unsigned char head[10];
      PetscCheck(f && fread(head, 1, 10, f) == 10, PETSC_COMM_WORLD, PETSC_ERR_FILE_OPEN, "-kmap %s: cannot read", kfile);
      PetscCheck(fseek(f, 10 + head[8] + 256 * head[9], SEEK_SET) == 0, PETSC_COMM_WORLD, PETSC_ERR_FILE_READ, "-kmap %s: no data", kfile);
      p.kmap = malloc(sizeof(double) * (size_t)p.N * p.N);
      PetscCheck(fread(p.kmap, sizeof(double), (size_t)p.N * p.N, f) == (size_t)p.N * p.N, PETSC_COMM_WORLD, PETSC_ERR_FILE_READ, "-kmap %s: not %d×%d float64", kfile, (int)p.N, (int)p.N);
      fclose(f);
    }
  }
  PetscCall(PetscOptionsGetString(NULL, NULL, "-coarse_k", coarsek, sizeof(coarsek), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-interp", interp, sizeof(interp), NULL));
  if (!interp[0]) PetscCall(PetscStrcpy(interp, strcmp(config, "galerkin") ? "constant" : "linear"));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-compare", npy, sizeof(npy), &cmp));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-true_monitor", &monitor, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-resolve", &resolve, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-view", &view, NULL));
  p.facek  = (PetscBool)(strcmp(coarsek, "face") == 0);
  mg       = (PetscBool)(strcmp(config, "redisc") == 0 || strcmp(config, "galerkin") == 0);
  galerkin = (PetscBool)(strcmp(config, "galerkin") == 0);
  PetscCheck(mg || !strcmp(config, "hypre") || !strcmp(config, "gamg"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-config redisc|galerkin|hypre|gamg, not %s", config);
  PetscCheck(!strcmp(interp, "constant") || !strcmp(interp, "linear"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-interp constant|linear, not %s", interp);
  PetscCheck(p.facek || !strcmp(coarsek, "cell"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-coarse_k cell|face, not %s", coarsek);
  PetscCheck(p.N >= 4, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "N = %" PetscInt_FMT, p.N);

  /* The inclusion's extent per axis, by heat's test on the cell centre. */
  PetscCall(PetscMalloc1(p.N, &p.kfine));
  for (PetscInt i = 0; i < p.N; i++) {
    double x = ((double)i + 0.5) * (1.0 / (double)p.N);
    p.kfine[i] = (x >= 0.375 && x < 0.625) ? 1 : 0;
  }
  /* Levels: halve while even and the coarse grid keeps 4×4 cells. */
  Lmax = 1;
  for (PetscInt M = p.N; M % 2 == 0 && M / 2 >= 4; M /= 2) Lmax++;
  L = Lmax;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-levels", &L, NULL));
  PetscCheck(L >= 1 && L <= Lmax, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-levels %" PetscInt_FMT ": 1 to %" PetscInt_FMT, L, Lmax);
  if (!mg) L = 1;

  /* The fine level: A, b = h² (−f·h², f = −1). */
  PetscCall(PetscMalloc3(L, &da, L, &Al, L, &P));
  PetscCall(PetscTime(&t0));
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, p.N, p.N, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da[0]));
  PetscCall(DMDASetInterpolationType(da[0], DMDA_Q0)); /* cell-centred coarsening: M/2 */
  PetscCall(DMSetFromOptions(da[0]));
  PetscCall(DMSetUp(da[0]));
  PetscCall(DMCreateMatrix(da[0], &A));
  PetscCall(Assemble(da[0], &p, 1, A));
  PetscCall(DMCreateGlobalVector(da[0], &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecSet(b, 1.0 / ((PetscReal)p.N * p.N)));
  PetscCall(PetscTime(&t1));
  tasm = t1 - t0;

  /* The hierarchy: coarse DMDAs, interpolations, rediscretised operators. */
  PetscCall(PetscTime(&t0));
  for (PetscInt l = 1; l < L; l++) {
    PetscInt M;
    PetscCall(DMCoarsen(da[l - 1], PETSC_COMM_WORLD, &da[l]));
    PetscCall(DMDASetInterpolationType(da[l], DMDA_Q0));
    PetscCall(DMDAGetInfo(da[l], NULL, &M, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    PetscCheck(M == p.N >> l, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "DMCoarsen gave %" PetscInt_FMT " cells, not %" PetscInt_FMT, M, p.N >> l);
    if (!strcmp(interp, "linear")) PetscCall(Interpolation(da[l - 1], da[l], &P[l]));
    else PetscCall(DMCreateInterpolation(da[l], da[l - 1], &P[l], NULL)); /* PETSc's DMDA_Q0: piecewise constant */
    if (!galerkin) {
      PetscCall(DMCreateMatrix(da[l], &Al[l]));
      PetscCall(Assemble(da[l], &p, (PetscInt)1 << l, Al[l]));
    }
  }
  PetscCall(PetscTime(&t1));
  thier = t1 - t0;

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  if (mg) {
    PetscCall(PCSetType(pc, PCMG));
    PetscCall(PCMGSetLevels(pc, L, NULL));
    /* PCMG numbers its levels from the coarsest (0); da[l] is level L−1−l. */
    for (PetscInt l = 1; l < L; l++) PetscCall(PCMGSetInterpolation(pc, L - l, P[l]));
    if (galerkin) {
      PetscCall(PCMGSetGalerkin(pc, PC_MG_GALERKIN_BOTH));
    } else {
      for (PetscInt l = 1; l < L; l++) {
        KSP sm;
        PetscCall(PCMGGetSmoother(pc, L - 1 - l, &sm));
        PetscCall(KSPSetOperators(sm, Al[l], Al[l]));
      }
    }
  } else if (!strcmp(config, "hypre")) {
#if defined(PETSC_HAVE_HYPRE)
    PetscCall(PCSetType(pc, PCHYPRE));
    PetscCall(PCHYPRESetType(pc, "boomeramg"));
#else
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_SUP, "this PETSc has no hypre");
#endif
  } else {
    PetscCall(PCSetType(pc, PCGAMG));
  }
  PetscCall(KSPSetFromOptions(ksp));

  /* The accuracy checker: |A| for the componentwise error, ‖A‖∞, ‖b‖. */
  PetscCall(AbsValues(A, &Aabs));
  chk.A    = A;
  chk.Aabs = Aabs;
  chk.b    = b;
  PetscCall(VecDuplicate(b, &chk.r));
  PetscCall(VecDuplicate(b, &chk.m));
  PetscCall(VecDuplicate(b, &chk.w));
  PetscCall(MatNorm(A, NORM_INFINITY, &chk.normA));
  PetscCall(VecNorm(b, NORM_2, &chk.normb2));
  PetscCall(VecNorm(b, NORM_INFINITY, &chk.normbinf));
  if (monitor) PetscCall(KSPMonitorSet(ksp, TrueMonitor, &chk, NULL));

  PetscCall(VecSet(x, 0));
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSetUp(ksp));
  PetscCall(PetscTime(&t1));
  tsetup = t1 - t0;
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscTime(&t1));
  tsolve = t1 - t0;
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  if (resolve) {
    Vec y;
    PetscCall(VecDuplicate(x, &y));
    PetscCall(VecSet(y, 0));
    PetscCall(KSPMonitorCancel(ksp));
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSolve(ksp, b, y));
    PetscCall(PetscTime(&t1));
    tsolve2 = t1 - t0;
    PetscCall(VecDestroy(&y));
  }
  PetscCall(KSPGetTolerances(ksp, &rtol, NULL, NULL, NULL));

  /* What the solver was. */
  {
    KSPNormType nt;
    PCType      pct;
    PetscCall(KSPGetNormType(ksp, &nt));
    PetscCall(PCGetType(pc, &pct));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "inclusion N=%" PetscInt_FMT " k_in=%g ranks=%d config=%s: KSPCG + %s, rtol %g on the %s residual norm\n", p.N, (double)p.kin, size, config, pct, (double)rtol, KSPNormTypes[nt]));
    if (mg) {
      KSP         sm;
      PC          spc;
      KSPType     st;
      PCType      sp;
      PetscInt    maxit;
      PetscInt    nlev;
      PCMGCycleType ct = PC_MG_CYCLE_V;
      PetscCall(PCMGGetLevels(pc, &nlev));
      PetscCall(PCMGGetSmoother(pc, nlev - 1, &sm));
      PetscCall(KSPGetType(sm, &st));
      PetscCall(KSPGetPC(sm, &spc));
      PetscCall(PCGetType(spc, &sp));
      PetscCall(KSPGetTolerances(sm, NULL, NULL, NULL, &maxit));
      PetscCall(PetscOptionsGetEnum(NULL, NULL, "-pc_mg_cycle_type", PCMGCycleTypes, (PetscEnum *)&ct, NULL));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  PCMG %" PetscInt_FMT " levels (%" PetscInt_FMT "^2 to %" PetscInt_FMT "^2), %s-cycle, %s interpolation, coarse ops %s, level smoother %s/%s x%" PetscInt_FMT " pre and post\n", nlev, p.N, p.N >> (nlev - 1),
                            ct == PC_MG_CYCLE_W ? "W" : "V", interp, galerkin ? "Galerkin PtAP" : (p.facek ? "rediscretised (mean of fine faces)" : "rediscretised (mean of cell k)"), st, sp, maxit));
    }
  }
  if (view) PetscCall(KSPView(ksp, PETSC_VIEWER_STDOUT_WORLD));

  PetscCall(Measure(&chk, x, &acc));
  PetscCall(VecMax(x, NULL, &umax));
  PetscCall(VecMin(x, NULL, &umin));
  PetscCall(VecSum(x, &usum));
  PetscCall(VecNorm(x, NORM_2, &ul2));
  {
    /* The field in natural order on rank 0: the centre cell, heat's field. */
    Vec                nat, x0;
    VecScatter         sc;
    PetscMPIInt        rank;
    PetscCall(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    PetscCall(DMDACreateNaturalVector(da[0], &nat));
    PetscCall(DMDAGlobalToNaturalBegin(da[0], x, INSERT_VALUES, nat));
    PetscCall(DMDAGlobalToNaturalEnd(da[0], x, INSERT_VALUES, nat));
    PetscCall(VecScatterCreateToZero(nat, &sc, &x0));
    PetscCall(VecScatterBegin(sc, nat, x0, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(sc, nat, x0, INSERT_VALUES, SCATTER_FORWARD));
    if (rank == 0) {
      const PetscScalar *u;
      PetscCall(VecGetArrayRead(x0, &u));
      ucentre = PetscRealPart(u[(p.N / 2) * p.N + p.N / 2]);
      if (cmp) PetscCall(CompareNpy(npy, u, p.N, &cmprel));
      PetscCall(VecRestoreArrayRead(x0, &u));
    }
    PetscCallMPI(MPI_Bcast(&ucentre, 1, MPIU_REAL, 0, PETSC_COMM_WORLD));
    PetscCallMPI(MPI_Bcast(&cmprel, 1, MPIU_REAL, 0, PETSC_COMM_WORLD));
    PetscCall(VecScatterDestroy(&sc));
    PetscCall(VecDestroy(&x0));
    PetscCall(VecDestroy(&nat));
  }

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %" PetscInt_FMT " iterations (%s); |b-Ax|2/|b|2 %.3e, |b-Ax|inf/|b|inf %.3e, normwise backward |b-Ax|inf/(|A|inf|x|inf+|b|inf) %.3e, componentwise %.3e\n", its, KSPConvergedReasons[reason],
                        (double)acc.rel2, (double)acc.relinf, (double)acc.backward, (double)acc.component));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  time: fine assembly %.3f s, hierarchy %.3f s, KSPSetUp %.3f s, KSPSolve %.3f s", tasm, thier, tsetup, tsolve));
  if (resolve) PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", second KSPSolve %.3f s", tsolve2));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n  u: min %.9g max %.9g mean %.9g l2 %.9g centre cell (%" PetscInt_FMT ",%" PetscInt_FMT ") %.9g", (double)umin, (double)umax, (double)(usum / ((PetscReal)p.N * p.N)), (double)ul2, p.N / 2, p.N / 2, (double)ucentre));
  if (cmp) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "; max|u-heat|/max|heat| %.3e", (double)cmprel));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "RESULT config=%s interp=%s coarse_k=%s ranks=%d N=%" PetscInt_FMT " kin=%g rtol=%g its=%" PetscInt_FMT " reason=%s rel2=%.3e relinf=%.3e backward=%.3e component=%.3e t_assembly=%.4f t_hierarchy=%.4f t_setup=%.4f t_solve=%.4f t_solve2=%.4f umin=%.12g umax=%.12g umean=%.12g ul2=%.12g ucentre=%.12g cmp=%.3e\n",
                        config, mg ? interp : "-", mg && !galerkin ? coarsek : "-", size, p.N, (double)p.kin, (double)rtol, its, KSPConvergedReasons[reason], (double)acc.rel2, (double)acc.relinf, (double)acc.backward, (double)acc.component, tasm, thier, tsetup, tsolve, tsolve2, (double)umin, (double)umax,
                        (double)(usum / ((PetscReal)p.N * p.N)), (double)ul2, (double)ucentre, (double)cmprel));

  PetscCall(KSPDestroy(&ksp));
  for (PetscInt l = 1; l < L; l++) {
    PetscCall(MatDestroy(&P[l]));
    if (!galerkin) PetscCall(MatDestroy(&Al[l]));
    PetscCall(DMDestroy(&da[l]));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&Aabs));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&chk.r));
  PetscCall(VecDestroy(&chk.m));
  PetscCall(VecDestroy(&chk.w));
  PetscCall(DMDestroy(&da[0]));
  PetscCall(PetscFree3(da, Al, P));
  PetscCall(PetscFree(p.kfine));
  PetscCall(PetscFinalize());
  return 0;
}
