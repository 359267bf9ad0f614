package solver

import (
	"fmt"

	"heat/decomp"
	"heat/internal/exactsum"
	"heat/operator"
)

// The heat equation's energy account: the content Σ ρc·u·V against the
// time integral of what the step's arithmetic puts in — the flux through
// each physical face, k_i(g − u_i)/h per unit area (g the face's ghost), from
// held cells into their free neighbours, and the source Σ f·V over the
// cells the steps update. Each boundary cell (and held pair) keeps its own
// running integral, one float add a step, the same on every split; they
// are summed exactly (internal/exactsum) when read, so the totals have the
// same bits on every split, and the balance closes to the steps' rounding.

// EnergyBalance is the account since the solver started (a restart: since
// the restart).
type EnergyBalance struct {
	ContentStart, Content float64   // Σ ρc·u·V
	Faces                 []float64 // ∫ heat in through each face, axis-major (C order), low then high
	Held, Source          float64   // ∫ heat in from held cells, ∫ source power
}

// Inflow is the whole time integral of the heat put in.
func (e *EnergyBalance) Inflow() float64 {
	in := e.Held + e.Source
	for _, f := range e.Faces {
		in += f
	}
	return in
}

// faceCells are the cells beside one physical face of the box: the flat
// index of each, its ghost's offset, each face's coefficient k_f/h² (the
// boundary face's: the cell's k).
type faceCells struct {
	axis, side int
	cells      []int
	off        int
	b          []float64
	in         []float64 // each cell's ∫ dt·b(g − u)·V so far
}

// heldPair is a free cell and a held neighbour (in the box or a ghost),
// and their face's coefficient.
type heldPair struct {
	free, held int
	b          float64
	in         float64 // ∫ dt·b(u_held − u_free)·V so far
}

// energy is the solver's running account on this rank.
type energy struct {
	vol      float64
	faces    []faceCells
	held     []heldPair
	source   float64 // ∫ source power (the same on every rank)
	power    float64 // the source's power Σ f·V now (the same on every rank)
	pw       float64 // the weight in time of power's field (Spec.SourceWeight; 1 without)
	content0 float64
	// prior is what came in before a restart (Carry): added to the
	// integrals when read.
	prior *EnergyBalance
	// content's per worker: an exact accumulator, a row of weights.
	bins []*exactsum.Binned
	rows [][]float64
	// powKey names the source field power was taken of (powKeyed: set);
	// pbins are the workers' accumulators of it.
	powKey   string
	powKeyed bool
	pbins    []*exactsum.Binned
}

// newEnergy sets up the account (heat runs that step one step at a time)
// and takes the starting content. Collective.
func (s *Solver) newEnergy() error {
	if s.spec.Equation != Heat || s.spec.Ghost != 1 {
		return nil
	}
	e, err := s.boundary()
	if err != nil {
		return err
	}
	s.acct = e
	e.pw = s.weightAt(s.simTime)
	if err := s.setPower(s.sourceAt(s.simTime)); err != nil {
		return err
	}
	e.content0, err = s.content()
	return err
}

// boundary is an account with its cells beside the physical faces and its
// held pairs set up, every integral zero. Collective in media.
func (s *Solver) boundary() (*energy, error) {
	nd := len(s.spec.Shape)
	h := s.spec.Spacing()
	e := &energy{vol: 1}
	for _, x := range h {
		e.vol *= x
	}
	k0 := s.faceK()
	for a := range nd {
		for side := range 2 {
			if s.hasNeighbour[a][side] || s.spec.Faces[a][side].Kind == Periodic {
				continue
			}
			f := faceCells{axis: a, side: side, off: -s.lay.Stride[a]}
			r := decomp.Box{Lo: make([]int, nd), Hi: append([]int(nil), s.lay.N...)}
			if side == 0 {
				r.Hi[a] = 1
			} else {
				r.Lo[a], f.off = s.lay.N[a]-1, s.lay.Stride[a]
			}
			s.lay.ForRows(r, func(start, n int) {
				for i := start; i < start+n; i++ {
					b := k0 / (h[a] * h[a])
					if s.media != nil {
						b = s.media.B[a][min(i, i+f.off)]
						if s.media.Free[i] == 0 {
							b = 0 // the steps do not update it
						}
					}
					f.cells, f.b = append(f.cells, i), append(f.b, b)
				}
			})
			f.in = make([]float64, len(f.cells))
			e.faces = append(e.faces, f)
		}
	}
	if s.media != nil {
		if err := s.heldPairs(e); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// heldPairs lists the faces between the box's free cells and held cells,
// its own or its neighbours' (the free mask's ghosts through the halo).
func (s *Solver) heldPairs(e *energy) error {
	m := s.media
	free := append([]float64(nil), m.Free...)
	if err := s.plan.Start(free); err != nil {
		return err
	}
	if err := s.plan.Finish(free); err != nil {
		return err
	}
	nd := len(s.spec.Shape)
	c := make([]int, nd)
	// The neighbour across (axis a, side) is a cell of the domain, not a
	// physical face's ghost.
	inDomain := func(a, side int) bool {
		return s.hasNeighbour[a][side] || (side == 0 && c[a] > 0) || (side == 1 && c[a] < m.Lay.N[a]-1)
	}
	m.Lay.ForRows(s.boxCells(), func(start, n int) {
		for i := start; i < start+n; i++ {
			if free[i] == 0 {
				continue
			}
			placed := false // c holds i's coordinates (taken only beside a cell that is not free)
			for a := range nd {
				st := m.Lay.Stride[a]
				for side, j := range [2]int{i - st, i + st} {
					if free[j] != 0 || m.K[j] == 0 {
						continue
					}
					if !placed {
						m.Lay.Coords(i, c)
						placed = true
					}
					if inDomain(a, side) {
						e.held = append(e.held, heldPair{free: i, held: j, b: m.B[a][min(i, j)]})
					}
				}
			}
		}
	})
	return nil
}

// content is the global Σ u·(ρc·V) of the current field (holes hold
// none), each product rounded once and summed exactly: the workers over
// their rows, each weight row made as it goes. Collective.
func (s *Solver) content() (float64, error) {
	e := s.acct
	if e.bins == nil {
		n := s.lay.N[len(s.lay.N)-1]
		e.bins, e.rows = make([]*exactsum.Binned, s.parts), make([][]float64, s.parts)
		for w := range e.bins {
			e.bins[w], e.rows[w] = new(exactsum.Binned), make([]float64, n)
		}
	}
	u, vol := s.u, e.vol
	s.team.Run(s.parts, func(w int) {
		b, wt := e.bins[w], e.rows[w]
		b.Reset()
		for _, r := range [2]*region{&s.inner, &s.rim} {
			for _, rw := range r.rows[r.share[w]:r.share[w+1]] {
				ws := wt[:rw.N]
				for j := range ws {
					ws[j] = vol
					if m := s.media; m != nil {
						ws[j] = 0
						if i := rw.Start + j; m.K[i] != 0 {
							ws[j] = float64(m.RhoC[i] * vol)
						}
					}
				}
				b.AddProducts(u[rw.Start:rw.Start+rw.N], ws)
			}
		}
	})
	var acc exactsum.Acc
	for _, b := range e.bins {
		acc.Merge(b.Sum())
	}
	return exactsum.Sum(s.c, &acc)
}

// sourceAt is the source at time t (nil: none).
func (s *Solver) sourceAt(t float64) Profile {
	if s.spec.SourceAt != nil {
		return s.spec.SourceAt(t)
	}
	return s.spec.Source
}

// weightAt is the source's weight in time at t (Spec.SourceWeight), 1
// without one.
func (s *Solver) weightAt(t float64) float64 {
	if w := s.spec.SourceWeight; w != nil {
		return w(t)
	}
	return 1
}

// setPower sets the source power Σ f·V over the cells the steps update.
// Collective.
func (s *Solver) setPower(p Profile) error {
	return s.setPowerKey(p, "", false)
}

// powerBins are n workers' accumulators of the source power, emptied.
func (e *energy) powerBins(n int) []*exactsum.Binned {
	if len(e.pbins) != n {
		e.pbins = make([]*exactsum.Binned, n)
		for w := range e.pbins {
			e.pbins[w] = new(exactsum.Binned)
		}
	}
	for _, b := range e.pbins {
		b.Reset()
	}
	return e.pbins
}

// setPowerSum sets the power to the workers' sums bins, of the field named
// key (keyed: key is one). Collective.
func (e *energy) setPowerSum(s *Solver, bins []*exactsum.Binned, key string, keyed bool) error {
	var acc exactsum.Acc
	for _, b := range bins {
		acc.Merge(b.Sum())
	}
	var err error
	e.power, err = exactsum.Sum(s.c, &acc)
	e.powKey, e.powKeyed = key, keyed
	return err
}

// powerAt sets the power of the source at time t (SourceAt), unless its
// key says it is the field the power was last taken of. Collective.
func (s *Solver) powerAt(t float64) error {
	s.acct.pw = s.weightAt(t)
	if k := s.spec.SourceKey; k != nil {
		if key := k(t); !s.acct.powKeyed || key != s.acct.powKey {
			return s.setPowerKey(s.spec.SourceAt(t), key, true)
		}
		return nil
	}
	return s.setPower(s.spec.SourceAt(t))
}

// setPowerKey is setPower of the field named key (keyed: key is one).
func (s *Solver) setPowerKey(p Profile, key string, keyed bool) error {
	e := s.acct
	if keyed && e.powKeyed && key == e.powKey {
		return nil
	}
	e.powKey, e.powKeyed = key, keyed
	var err error
	e.power, err = s.power(e, p)
	return err
}

// power is Σ p·V over the box's free cells, summed exactly over every
// rank (0 for no p). Collective.
func (s *Solver) power(e *energy, p Profile) (float64, error) {
	if p == nil {
		return 0, nil
	}
	var acc exactsum.Acc
	nd := len(s.spec.Shape)
	h := s.spec.Spacing()
	x, g := make([]float64, nd), make([]int, nd)
	s.lay.ForRows(s.boxCells(), func(start, n int) {
		for i := start; i < start+n; i++ {
			if s.media != nil && s.media.Free[i] == 0 {
				continue
			}
			s.lay.Global(i, g)
			for a := range nd {
				x[a] = (float64(g[a]) + 0.5) * h[a]
			}
			acc.Add(float64(p(x, g) * e.vol))
		}
	})
	return exactsum.Sum(s.c, &acc)
}

// account adds w·dt of the current flows of field u (its ghosts set: the
// physical faces' for the time the flows belong to, the halo's) to the
// integrals, and w·dt of the source power.
func (s *Solver) account(u []float64, w, dt float64) {
	e := s.acct
	c := w * dt * e.vol
	for k := range e.faces {
		f := &e.faces[k]
		for j, i := range f.cells {
			f.in[j] += float64(c * float64(f.b[j]*(u[i+f.off]-u[i])))
		}
	}
	for k := range e.held {
		p := &e.held[k]
		p.in += float64(c * float64(p.b*(u[p.held]-u[p.free])))
	}
	e.source += float64(w * dt * float64(e.power*e.pw))
}

// flows sums per face (2 per axis; no physical face: 0) and over the held
// pairs what of(face cell's or pair's index) gives, exactly and globally:
// the same bits on every split. Collective.
func (s *Solver) flows(e *energy, faceOf func(f *faceCells, j int) float64, heldOf func(p *heldPair) float64) (faces []float64, held float64, err error) {
	accs := make([]exactsum.Acc, 2*len(s.spec.Shape)+1)
	for k := range e.faces {
		f := &e.faces[k]
		for j := range f.cells {
			accs[2*f.axis+f.side].Add(faceOf(f, j))
		}
	}
	hacc := &accs[len(accs)-1]
	for k := range e.held {
		hacc.Add(heldOf(&e.held[k]))
	}
	ptrs := make([]*exactsum.Acc, len(accs))
	for k := range accs {
		ptrs[k] = &accs[k]
	}
	sums, err := exactsum.SumAll(s.c, ptrs)
	if err != nil {
		return nil, 0, err
	}
	return sums[:len(sums)-1], sums[len(sums)-1], nil
}

// Energy is the account so far; nil where none is kept (Poisson, temporal
// blocking). Collective.
func (s *Solver) Energy() (*EnergyBalance, error) {
	b, err := s.Account()
	if b == nil || err != nil {
		return nil, err
	}
	if b.Content, err = s.content(); err != nil {
		return nil, err
	}
	return b, nil
}

// Account is the account so far without the content now (Content 0):
// what a checkpoint keeps so that a restart's account goes on from it
// (Carry). Collective.
func (s *Solver) Account() (*EnergyBalance, error) {
	e := s.acct
	if e == nil {
		return nil, nil
	}
	faces, held, err := s.flows(e, func(f *faceCells, j int) float64 { return f.in[j] }, func(p *heldPair) float64 { return p.in })
	if err != nil {
		return nil, err
	}
	if p := e.prior; p != nil {
		for i := range faces {
			faces[i] = float64(faces[i] + p.Faces[i])
		}
		held = float64(held + p.Held)
	}
	return &EnergyBalance{ContentStart: e.content0, Faces: faces, Held: held, Source: e.source}, nil
}

// Carry continues the account of the run a restart continues from its
// checkpoint's Account: the content at that run's start, what came in
// before. The source's integral goes on as the straight run's (one sum,
// the same on every rank: the same bits); the faces' and held cells'
// per-cell integrals start again, and their totals are added to prev's
// (the same to rounding). A prev of another grid is an error.
func (s *Solver) Carry(prev *EnergyBalance) error {
	e := s.acct
	if e == nil || prev == nil {
		return nil
	}
	if len(prev.Faces) != 2*len(s.spec.Shape) {
		return fmt.Errorf("solver: an energy account of %d faces for a grid of %d", len(prev.Faces), 2*len(s.spec.Shape))
	}
	e.content0, e.source, e.prior = prev.ContentStart, prev.Source, prev
	return nil
}

// Rates are the heat flows in now: through each face (axis-major, low then
// high), from held cells, and the source power. Collective.
func (s *Solver) Rates() (faces []float64, held, source float64, err error) {
	e := s.acct
	if e == nil {
		return nil, 0, 0, nil
	}
	faces, held, err = s.rates(e)
	return faces, held, float64(e.power * e.pw), err
}

// rates are the flows in now through each face and from held cells, over
// e's cells. Collective.
func (s *Solver) rates(e *energy) (faces []float64, held float64, err error) {
	// The current field's ghosts: the faces' at its time, the halo's (for
	// held neighbours on other ranks).
	if s.mg == nil {
		if err := s.setFaces(s.simTime); err != nil {
			return nil, 0, err
		}
		operator.ApplyFaces(s.faces, s.u)
	} else {
		operator.ApplyFaces(s.mg.FineFaces(), s.u)
	}
	if s.media != nil { // every rank of a media run: a rank's neighbour may hold cells
		if err := s.plan.Start(s.u); err != nil {
			return nil, 0, err
		}
		if err := s.plan.Finish(s.u); err != nil {
			return nil, 0, err
		}
	}
	u, v := s.u, e.vol
	return s.flows(e, func(f *faceCells, j int) float64 {
		i := f.cells[j]
		return float64(v * float64(f.b[j]*(u[i+f.off]-u[i])))
	}, func(p *heldPair) float64 {
		return float64(v * float64(p.b*(u[p.held]-u[p.free])))
	})
}

// Fluxes are a Poisson solution's flows, in the heat equation's signs:
// ∇·(k∇u) = f is a steady state whose source puts in −f per volume, so
// Faces + Held + Source is 0 at the exact solution.
type Fluxes struct {
	Faces  []float64 // in through each face, axis-major (C order), low then high; k(g − u)/h per area
	Held   float64   // in from held cells into their free neighbours
	Source float64   // −Σ f·V over the free cells
}

// Fluxes are the flows of a Poisson run's field now: what a capacitance
// (the held electrode's charge) or a heat-transfer coefficient is read
// from. Nil for heat runs (their account is Energy). Collective.
func (s *Solver) Fluxes() (*Fluxes, error) {
	if s.spec.Equation != Poisson {
		return nil, nil
	}
	e, err := s.boundary()
	if err != nil {
		return nil, err
	}
	faces, held, err := s.rates(e)
	if err != nil {
		return nil, err
	}
	f, err := s.power(e, s.sourceAt(s.simTime))
	if err != nil {
		return nil, err
	}
	return &Fluxes{Faces: faces, Held: held, Source: 0 - f}, nil // 0 − f: no −0 without a source
}

// boxCells is the box's own cells in local coordinates.
func (s *Solver) boxCells() decomp.Box {
	return decomp.Box{Lo: make([]int, len(s.lay.N)), Hi: s.lay.N}
}
