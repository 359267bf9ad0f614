// Package asmgen generates stencil's amd64 assembly kernels with avo: the
// AVX2 (4 cells a vector) and AVX-512 (8) variants of every row kernel, and
// of the variable-coefficient kernels (var.go), come from one generator, so
// they cannot drift apart. stencil's tests compare the committed
// kernel_amd64.s and its Go declarations with what Stencil returns, and
// rewrite them with -update (`go generate ./stencil`).
//
// Every kernel evaluates its generic twin's operations in the same order,
// each multiply and add rounded on its own (VMULPD, VADDPD, VSUBPD; never a
// fused multiply-add), so each lane computes the generic kernel's bits.
package asmgen

import (
	"fmt"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
	"github.com/mmcloughlin/avo/reg"
)

// isa is one vector instruction set: its register kind and width.
type isa struct {
	name  string // in the kernels' names: AVX2, AVX512
	lanes int    // float64 cells a vector
	reg   func(*build.Context) reg.VecVirtual
}

var isas = []isa{
	{"AVX2", 4, func(c *build.Context) reg.VecVirtual { return c.YMM() }},
	{"AVX512", 8, func(c *build.Context) reg.VecVirtual { return c.ZMM() }},
}

// zero clears v.
func (i isa) zero(c *build.Context, v reg.VecVirtual) {
	if i.lanes == 8 {
		c.VPXORQ(v, v, v)
	} else {
		c.VPXOR(v, v, v)
	}
}

// store writes v's lanes to m.
func (i isa) store(c *build.Context, v reg.VecVirtual, m operand.Mem) {
	if i.lanes == 8 {
		c.VMOVDQU64(v, m)
	} else {
		c.VMOVDQU(v, m)
	}
}

// fold returns the largest of v's lanes (unsigned 64-bit integers) in a
// general register, through a frame of the kernel's: the kernels return the
// maximum itself, so their callers pass no buffer (one passed through a
// function value escapes to the heap, an allocation a call).
func (i isa) fold(c *build.Context, v reg.VecVirtual) reg.GPVirtual {
	buf := c.AllocLocal(8 * i.lanes)
	i.store(c, v, buf)
	m, t := c.GP64(), c.GP64()
	c.MOVQ(buf, m)
	for l := 1; l < i.lanes; l++ {
		c.MOVQ(buf.Offset(8*l), t)
		c.CMPQ(t, m)
		c.CMOVQHI(t, m)
	}
	return m
}

// maxAbs folds |t| (as bits, sign cleared; t is overwritten) into the
// lanes' maxima m (umax).
func (i isa) maxAbs(c *build.Context, t, m, gt reg.VecVirtual) {
	c.VPSLLQ(operand.U8(1), t, t)
	c.VPSRLQ(operand.U8(1), t, t)
	i.umax(c, t, m, gt)
}

// umax folds t, bit patterns with the sign cleared, into the lanes' maxima
// m; AVX2 has no 64-bit integer max, but such patterns are non-negative as
// signed integers too, so a compare and a blend (gt its scratch) do.
func (i isa) umax(c *build.Context, t, m, gt reg.VecVirtual) {
	if i.lanes == 8 {
		c.VPMAXUQ(t, m, m)
		return
	}
	c.VPCMPGTQ(m, t, gt)
	c.VBLENDVPD(gt, t, m, m)
}

// and sets dst = x & mask, bit by bit (x a register or memory).
func (i isa) and(c *build.Context, x operand.Op, mask, dst reg.VecVirtual) {
	if i.lanes == 8 {
		c.VPANDQ(x, mask, dst)
	} else {
		c.VANDPD(x, mask, dst)
	}
}

// kernel is one row kernel: the update (heat step, Jacobi sweep) or the
// residual, in 2D or 3D, with or without a source.
type kernel struct {
	residual bool
	dims     int
	source   bool
	// check also keeps the largest |d[j] − c[j+1]| (the change of each
	// cell) over all rows, as the bits of its magnitude, lane by lane in
	// out: the run's max|Δu| check in the same pass as the update.
	check bool
	// stream stores with non-temporal stores (VMOVNTPD), past the caches:
	// a grid far larger than them then needs no read of the destination
	// before it is written (16 bytes a cell, not 24). d must be aligned
	// to a vector, and the writer must fence (SFENCE) before another core
	// reads what it wrote: once a sweep, not once a row (a fence a row cost
	// 3D 128³ four fifths of its speed).
	stream bool
}

func (k kernel) name(i isa) string {
	op := "heat"
	if k.residual {
		op = "residual"
	}
	src := ""
	if k.source && !k.residual {
		src = "Src"
	}
	nt := ""
	if k.stream {
		nt = "NT"
	}
	if k.check {
		nt += "Chk"
	}
	return fmt.Sprintf("%s%dD%s%s%s", op, k.dims, src, nt, i.name)
}

// operands are the row pointers the kernel reads, after d and c.
func (k kernel) operands() []string {
	ops := []string{"s", "n"}
	if k.dims == 3 {
		ops = append(ops, "l", "u")
	}
	if k.source || k.residual {
		ops = append(ops, "f")
	}
	return ops
}

// weights are the coefficient arguments.
func (k kernel) weights() []string {
	w := []string{"c0", "cx", "cy"}
	if k.dims == 3 {
		w = append(w, "cz")
	}
	if k.source && !k.residual {
		w = append(w, "cf")
	}
	return w
}

func (k kernel) signature() string {
	out := ""
	if k.check {
		out = " uint64"
	}
	edges := ""
	if k.edges() {
		edges = ", edges int, tw, te float64"
	}
	return fmt.Sprintf("func(d, c, %s *float64, cells, rows, stride int, %s float64%s)%s", strings.Join(k.operands(), ", "), strings.Join(k.weights(), ", "), edges, out)
}

// edges reports whether the kernel sets the x ghosts of its rows from the
// rows' end cells (the update and check kernels; not the residual, whose
// ghosts come from the exchange, nor the streaming ones, whose rows are
// cut into aligned pieces: stencil sets their edges before).
func (k kernel) edges() bool { return !k.residual && !k.stream }

// Edge flags of the edges argument: bit 0 sets c[0] of each row, bit 1
// makes it Dirichlet (tw − c[1]) rather than Neumann (c[1]); bits 2 and 3
// the same for c[cells+1] from c[cells] (te − c[cells]).
const (
	edgeWest, edgeWestDirichlet = 1, 2
	edgeEast, edgeEastDirichlet = 4, 8
)

func (k kernel) doc(i isa) []string {
	var formula string
	z := ""
	if k.dims == 3 {
		z = " + cz·(l[j] + u[j])"
	}
	if k.residual {
		formula = fmt.Sprintf("d[j] = f[j] − (c0·c[j+1] − (cx·(c[j] + c[j+2]) + cy·(s[j] + n[j])%s))", z)
	} else {
		src := ""
		if k.source {
			src = " + cf·f[j]"
		}
		formula = fmt.Sprintf("d[j] = c0·c[j+1] + cx·(c[j] + c[j+2]) + cy·(s[j] + n[j])%s%s", z, src)
	}
	stores := ""
	if k.stream {
		stores = fmt.Sprintf(", non-temporal stores, d aligned to %d bytes", 8*i.lanes)
	}
	if k.check {
		stores += "; returns the bits of the largest |d[j] − c[j+1]|"
	}
	doc := []string{
		fmt.Sprintf("%s sets, for j in [0, cells), %d cells a vector (%s%s;", k.name(i), i.lanes, i.name, stores),
		fmt.Sprintf("%s, c one cell before the row):", cellsRule(k, i)),
		"",
		"\t" + formula,
		"",
		"summed left to right, each product rounded on its own; then the same for",
		"each of rows−1 more rows, every operand stride cells further on (rows ≥ 1).",
	}
	if k.edges() {
		doc = append(doc, "Before each row, by edges: bit 0 sets c[0] = c[1] (bit 1: tw − c[1]), bit 2",
			"sets c[cells+1] = c[cells] (bit 3: te − c[cells]).")
	}
	return doc
}

// cellsRule is what a kernel's cells must be.
func cellsRule(k kernel, i isa) string {
	if k.stream {
		return fmt.Sprintf("cells a multiple of %d", i.lanes)
	}
	return fmt.Sprintf("cells >= %d", i.lanes)
}

// kernels are every kernel stencil uses.
func kernels() []kernel {
	var ks []kernel
	for _, dims := range []int{2, 3} {
		ks = append(ks, kernel{dims: dims}, kernel{dims: dims, source: true}, kernel{residual: true, dims: dims},
			kernel{dims: dims, check: true}, kernel{dims: dims, source: true, check: true})
	}
	// Only 2D streams: 3D's short rows measured 2–4× slower streamed.
	ks = append(ks, kernel{dims: 2, stream: true}, kernel{dims: 2, source: true, stream: true})
	return ks
}

// emit writes one kernel: a loop over whole vectors, the index in bytes.
//
// The row c is read once, a centre vector at a time: the west and east
// neighbours of a vector are shuffled out of it and the centre vectors
// before and after it (VALIGNQ on AVX-512; VPERM2F128 and VSHUFPD on AVX2),
// so that a vector costs two loads fewer than reading them unaligned from
// memory (2D 256² in cache ran ~20% faster). Before the first vector the
// west ghost c[0] is broadcast in place of a previous vector, after the last
// the east one c[cells+1] in place of the next: no read outside the row.
func emit(c *build.Context, k kernel, i isa) {
	function(c, k.name(i), k.signature(), k.doc(i)...)
	ptr := func(name string) operand.Mem { return operand.Mem{Base: pointer(c, name)} }
	d, src := ptr("d"), ptr("c")
	ops := map[string]operand.Mem{}
	for _, o := range k.operands() {
		ops[o] = ptr(o)
	}
	cells := c.Load(c.Param("cells"), c.GP64())
	rows := c.Load(c.Param("rows"), c.GP64())
	stride := c.Load(c.Param("stride"), c.GP64())
	c.SHLQ(operand.U8(3), stride)
	// The weights are broadcast straight from the arguments: a legacy-SSE
	// load (MOVSD) between vector code costs a state transition, which
	// measured ~230 ns a call (a 256-cell row ran at a quarter speed).
	w := map[string]reg.VecVirtual{}
	for _, name := range k.weights() {
		w[name] = broadcast(c, i, name)
	}
	var macc reg.VecVirtual
	if k.check {
		macc = i.reg(c)
		i.zero(c, macc)
	}
	// idx runs over the row's whole vectors in bytes, to end; a stream
	// kernel's cells are whole vectors, the others' any count >= lanes,
	// the cells after the whole vectors done by one more, overlapping
	// vector ending at the row's end (its cells computed again from the
	// same operands, to the same bits: d never aliases an operand).
	idx, end := c.GP64(), c.GP64()
	c.MOVQ(cells, end)
	c.SHLQ(operand.U8(3), end)
	var tailOff reg.GPVirtual
	if !k.stream {
		tailOff = c.GP64()
		c.MOVQ(end, tailOff)
		c.SUBQ(operand.U32(8*i.lanes), tailOff)
		c.ANDQ(operand.I32(-int32(8*i.lanes)), end)
	}
	at := func(m operand.Mem, disp int) operand.Mem {
		m.Index, m.Scale, m.Disp = idx, 1, disp
		return m
	}
	step := 8 * i.lanes
	// The centre vector at byte offset off from the index: c[j+1], ….
	centre := func(off int) operand.Mem { return at(src, off+8) }
	// Two vectors an iteration while a third follows them, then one while
	// a second follows, then the last: the two bodies' loads and
	// arithmetic overlap (measured faster than one a pass on rows in L2).
	row, two, one, last, done := k.name(i)+"_row", k.name(i)+"_two", k.name(i)+"_one", k.name(i)+"_last", k.name(i)+"_done"
	lim2, lim1 := c.GP64(), c.GP64()
	c.MOVQ(end, lim2)
	c.SUBQ(operand.U32(2*step), lim2)
	c.MOVQ(end, lim1)
	c.SUBQ(operand.U32(step), lim1)
	nb := newNeighbours(c, i)
	c.Label(row)
	if k.edges() {
		emitEdges(c, k.name(i), src, tailOff, step)
	}
	c.XORQ(idx, idx)
	// Before the first vector: the west ghost, and the first centre.
	c.VBROADCASTSD(operand.Mem{Base: src.Base}, nb.prev)
	c.VMOVUPD(centre(0), nb.cur)
	nb.start()
	c.Label(two)
	c.CMPQ(idx, lim2)
	c.JGE(operand.LabelRef(one))
	x1, x2 := i.reg(c), i.reg(c)
	c.VMOVUPD(centre(step), x1)
	c.VMOVUPD(centre(2*step), x2)
	wst, est := nb.next(x1)
	body(c, k, i, w, d, ops, at, 0, macc, wst, nb.cur, est)
	wst2, est2 := nb.after(x1, x2)
	body(c, k, i, w, d, ops, at, step, macc, wst2, x1, est2)
	nb.advance(x1, x2)
	c.ADDQ(operand.U32(2*step), idx)
	c.JMP(operand.LabelRef(two))
	c.Label(one)
	c.CMPQ(idx, lim1)
	c.JGE(operand.LabelRef(last))
	x3 := i.reg(c)
	c.VMOVUPD(centre(step), x3)
	wst3, est3 := nb.next(x3)
	body(c, k, i, w, d, ops, at, 0, macc, wst3, nb.cur, est3)
	nb.advance1(x3)
	c.ADDQ(operand.U32(step), idx)
	c.JMP(operand.LabelRef(one))
	c.Label(last)
	// The last vector: the east ghost after it.
	x4 := i.reg(c)
	c.VBROADCASTSD(centre(step), x4)
	wst4, est4 := nb.next(x4)
	body(c, k, i, w, d, ops, at, 0, macc, wst4, nb.cur, est4)
	if !k.stream {
		// The overlapping tail vector, its neighbours read unaligned.
		c.CMPQ(tailOff, idx)
		c.JE(operand.LabelRef(done))
		c.MOVQ(tailOff, idx)
		tw, tm, te := i.reg(c), i.reg(c), i.reg(c)
		c.VMOVUPD(centre(-8), tw)
		c.VMOVUPD(centre(0), tm)
		c.VMOVUPD(centre(8), te)
		body(c, k, i, w, d, ops, at, 0, macc, tw, tm, te)
	}
	c.Label(done)
	// The next row: every operand a stride on.
	c.DECQ(rows)
	c.JZ(operand.LabelRef(k.name(i) + "_end"))
	c.ADDQ(stride, d.Base)
	c.ADDQ(stride, src.Base)
	for _, o := range k.operands() {
		c.ADDQ(stride, ops[o].Base)
	}
	c.JMP(operand.LabelRef(row))
	c.Label(k.name(i) + "_end")
	if k.check {
		c.Store(i.fold(c, macc), c.ReturnIndex(0))
	}
	c.VZEROUPPER()
	c.RET()
}

// emitEdges sets a row's x ghosts from its end cells, as the edges argument
// asks: c[0] from c[1], c[cells+1] from c[cells] (tailOff + step is the
// byte offset of c[cells]), a Dirichlet ghost as twice the face value less
// the cell (one subtraction, as the Go code's), in VEX scalar code (a
// legacy-SSE instruction between vector code costs a state transition).
func emitEdges(c *build.Context, name string, src operand.Mem, tailOff reg.GPVirtual, step int) {
	edges := param(c, "edges")
	side := func(flag, dirichlet int, twice string, ghost, cell operand.Mem) {
		skip, store := fmt.Sprintf("%s_%s_skip", name, twice), fmt.Sprintf("%s_%s_store", name, twice)
		c.TESTQ(operand.U32(flag), edges)
		c.JZ(operand.LabelRef(skip))
		x := c.XMM()
		c.VMOVSD(cell, x)
		c.TESTQ(operand.U32(dirichlet), edges)
		c.JZ(operand.LabelRef(store))
		t := c.XMM()
		c.VMOVSD(param(c, twice), t)
		c.VSUBSD(x, t, x)
		c.Label(store)
		c.VMOVSD(x, ghost)
		c.Label(skip)
	}
	at := func(disp int) operand.Mem { return operand.Mem{Base: src.Base, Index: tailOff, Scale: 1, Disp: disp} }
	side(edgeWest, edgeWestDirichlet, "tw", operand.Mem{Base: src.Base}, operand.Mem{Base: src.Base, Disp: 8})
	side(edgeEast, edgeEastDirichlet, "te", at(step+8), at(step))
}

// param is argument name as a memory operand.
func param(c *build.Context, name string) operand.Mem {
	m, err := c.Param(name).Resolve()
	if err != nil {
		panic(err) // every caller's signature declares it
	}
	return m.Addr
}

// neighbours forms the west and east neighbour vectors of a row's centre
// vectors from the centres around them. cur is the current centre vector;
// prev, on AVX-512, the one before it, and on AVX2 the 128-bit halves
// (prev's upper, cur's lower) that both of cur's neighbours are shuffled
// from (VPERM2F128 once a vector).
type neighbours struct {
	c         *build.Context
	i         isa
	prev, cur reg.VecVirtual
	pending   reg.VecVirtual // AVX2: the halves after cur's, from the last around
}

func newNeighbours(c *build.Context, i isa) *neighbours {
	return &neighbours{c: c, i: i, prev: i.reg(c), cur: i.reg(c)}
}

// start turns prev (the vector before the row's first) into what next
// expects.
func (n *neighbours) start() {
	if n.i.lanes == 4 {
		n.c.VPERM2F128(operand.U8(0x21), n.cur, n.prev, n.prev)
	}
}

// next returns cur's west and east neighbours, nxt the centre vector after
// cur.
func (n *neighbours) next(nxt reg.VecVirtual) (west, east reg.VecVirtual) {
	return n.around(n.prev, n.cur, nxt)
}

// around is west and east of b between a (AVX-512: the vector before b;
// AVX2: the halves a's upper and b's lower) and the next vector e.
func (n *neighbours) around(a, b, e reg.VecVirtual) (west, east reg.VecVirtual) {
	c := n.c
	west, east = n.i.reg(c), n.i.reg(c)
	if n.i.lanes == 8 {
		c.VALIGNQ(operand.U8(7), a, b, west) // (a7, b0 … b6)
		c.VALIGNQ(operand.U8(1), b, e, east) // (b1 … b7, e0)
		return west, east
	}
	t := n.i.reg(c)
	c.VPERM2F128(operand.U8(0x21), e, b, t) // (b2, b3, e0, e1)
	c.VSHUFPD(operand.U8(5), b, a, west)    // (a3, b0, b1, b2)
	c.VSHUFPD(operand.U8(5), t, b, east)    // (b1, b2, b3, e0)
	n.pending = t
	return west, east
}

// after is the neighbours of x1, the vector after cur, with x2 after it.
func (n *neighbours) after(x1, x2 reg.VecVirtual) (west, east reg.VecVirtual) {
	if n.i.lanes == 8 {
		return n.around(n.cur, x1, x2)
	}
	return n.around(n.pending, x1, x2)
}

// advance moves on by two vectors: x2 becomes the current one.
func (n *neighbours) advance(x1, x2 reg.VecVirtual) {
	if n.i.lanes == 8 {
		n.c.VMOVAPD(x1, n.prev)
	} else {
		n.c.VMOVAPD(n.pending, n.prev)
	}
	n.c.VMOVAPD(x2, n.cur)
}

// advance1 moves on by one vector: x becomes the current one.
func (n *neighbours) advance1(x reg.VecVirtual) {
	if n.i.lanes == 8 {
		n.c.VMOVAPD(n.cur, n.prev)
	} else {
		n.c.VMOVAPD(n.pending, n.prev)
	}
	n.c.VMOVAPD(x, n.cur)
}

// body computes one vector of cells at byte offset off from the index, from
// the row's west, centre and east vectors there.
func body(c *build.Context, k kernel, i isa, w map[string]reg.VecVirtual, d operand.Mem, ops map[string]operand.Mem,
	at func(operand.Mem, int) operand.Mem, off int, macc, west, mid, east reg.VecVirtual) {
	// addAxis adds wt·(a + b) into acc, t its scratch.
	addAxis := func(acc, t reg.VecVirtual, a, b operand.Mem, wt string) {
		c.VMOVUPD(a, t)
		c.VADDPD(b, t, t)
		c.VMULPD(t, w[wt], t)
		c.VADDPD(t, acc, acc)
	}
	// x = cx·(w + e)
	x := i.reg(c)
	c.VADDPD(east, west, x)
	c.VMULPD(x, w["cx"], x)
	acc, y := i.reg(c), i.reg(c)
	if k.residual {
		// The residual's inner sum first: x + cy·(s + n) [+ cz·(l + u)];
		// then acc = c0·m − x and d = f − acc.
		addAxis(x, y, at(ops["s"], off), at(ops["n"], off), "cy")
		if k.dims == 3 {
			addAxis(x, y, at(ops["l"], off), at(ops["u"], off), "cz")
		}
		c.VMULPD(mid, w["c0"], acc)
		c.VSUBPD(x, acc, acc)
		c.VMOVUPD(at(ops["f"], off), x)
		c.VSUBPD(acc, x, x)
		c.VMOVUPD(x, at(d, off))
		return
	}
	// acc = c0·m + x, then + cy·(s + n) [+ cz·(l + u)] [+ cf·f].
	c.VMULPD(mid, w["c0"], acc)
	c.VADDPD(x, acc, acc)
	addAxis(acc, y, at(ops["s"], off), at(ops["n"], off), "cy")
	if k.dims == 3 {
		addAxis(acc, y, at(ops["l"], off), at(ops["u"], off), "cz")
	}
	if k.source {
		c.VMULPD(at(ops["f"], off), w["cf"], y)
		c.VADDPD(y, acc, acc)
	}
	if k.check {
		// |acc − m| as bits, into the lanes' maxima (as emitMax does).
		c.VSUBPD(mid, acc, y)
		i.maxAbs(c, y, macc, x) // x is free by now
	}
	if k.stream {
		c.VMOVNTPD(acc, at(d, off))
		return
	}
	c.VMOVUPD(acc, at(d, off))
}

// broadcast loads float64 argument name into every lane of a new register
// (straight from the argument: a legacy-SSE load between vector code costs
// a state transition).
func broadcast(c *build.Context, i isa, name string) reg.VecVirtual {
	v := i.reg(c)
	c.VBROADCASTSD(param(c, name), v)
	return v
}

// pointer loads pointer argument name.
func pointer(c *build.Context, name string) reg.GPVirtual {
	return c.Load(c.Param(name), c.GP64()).(reg.GPVirtual)
}

// elementwise writes the loop of a kernel over argument cells (a multiple
// of the lanes), one vector a pass: body gets the operand at the current
// cell of each pointer.
func elementwise(c *build.Context, i isa, name string, body func(at func(reg.GPVirtual) operand.Mem)) {
	twofold(c, i, name, func(at, _ func(reg.GPVirtual, int) operand.Mem) {
		body(func(base reg.GPVirtual) operand.Mem { return at(base, 0) })
	})
}

// twofold writes the loop of a kernel between a coarse row of argument
// cells (a multiple of the lanes) and a fine row of twice as many, one
// coarse vector a pass: body gets the operands at the current coarse and
// fine cell of a pointer, plus a displacement in bytes.
func twofold(c *build.Context, i isa, name string, body func(coarse, fine func(reg.GPVirtual, int) operand.Mem)) {
	end := c.Load(c.Param("cells"), c.GP64())
	c.SHLQ(operand.U8(3), end)
	idx, fine := c.GP64(), c.GP64()
	c.XORQ(idx, idx)
	c.XORQ(fine, fine)
	loop, done := name+"_loop", name+"_done"
	c.Label(loop)
	c.CMPQ(idx, end)
	c.JAE(operand.LabelRef(done))
	at := func(index reg.GPVirtual) func(reg.GPVirtual, int) operand.Mem {
		return func(base reg.GPVirtual, disp int) operand.Mem {
			return operand.Mem{Base: base, Index: index, Scale: 1, Disp: disp}
		}
	}
	body(at(idx), at(fine))
	c.ADDQ(operand.U32(8*i.lanes), idx)
	c.ADDQ(operand.U32(16*i.lanes), fine)
	c.JMP(operand.LabelRef(loop))
	c.Label(done)
}

// function starts kernel name: its attributes, doc and signature.
func function(c *build.Context, name, sig string, doc ...string) {
	c.Function(name)
	c.Attributes(attr.NOSPLIT)
	c.Pragma("noescape")
	c.Doc(doc...)
	c.SignatureExpr(sig)
}

// emitMax writes the max-norm kernel of i: the bit pattern of the largest
// |a[j] − b[j]| (diff) or |a[j]|, for j in [0, cells). With the sign bit
// cleared, the bit patterns of doubles order as their values and every NaN
// lies above +Inf, so an integer max finds the largest magnitude or a NaN
// (stencil's generic maxAbsBits does the same).
func emitMax(c *build.Context, i isa, diff bool) {
	name, sig := "maxAbs"+i.name, "func(a *float64, cells int) uint64"
	what := "|a[j]|"
	if diff {
		name, sig, what = "maxAbsDiff"+i.name, "func(a, b *float64, cells int) uint64", "|a[j] − b[j]|"
	}
	function(c, name, sig, fmt.Sprintf("%s returns the bits of the largest %s (sign bit cleared),", name, what),
		fmt.Sprintf("for j in [0, cells), cells a multiple of %d.", i.lanes))
	a := pointer(c, "a")
	var b reg.GPVirtual
	if diff {
		b = pointer(c, "b")
	}
	m := i.reg(c)
	i.zero(c, m)
	elementwise(c, i, name, func(at func(reg.GPVirtual) operand.Mem) {
		t := i.reg(c)
		c.VMOVUPD(at(a), t)
		if diff {
			c.VSUBPD(at(b), t, t)
		}
		i.maxAbs(c, t, m, i.reg(c))
	})
	c.Store(i.fold(c, m), c.ReturnIndex(0))
	c.VZEROUPPER()
	c.RET()
}

// emitStepError writes the step controller's error estimate over a row
// (stencil.Set.StepError): the bits of the largest |u[j] − v[j]| / (den·(atol
// + rtol·max(|w[j]|, |u[j]|))), and with keep next[j] = u[j].
func emitStepError(c *build.Context, i isa, keep bool) {
	name, sig := "stepError"+i.name, "func(u, v, w *float64, cells int, den, atol, rtol float64) uint64"
	if keep {
		name, sig = "stepErrorKeep"+i.name, "func(u, v, w, next *float64, cells int, den, atol, rtol float64) uint64"
	}
	doc := []string{fmt.Sprintf("%s returns the bits (sign cleared) of the largest", name),
		"|u[j] − v[j]| / (den·(atol + rtol·max(|w[j]|, |u[j]|))) for j in [0, cells),",
		fmt.Sprintf("cells a multiple of %d, each operation rounded on its own (a NaN", i.lanes),
		"sorts above every number; VMAXPD gives |w[j]| where either is NaN)."}
	if keep {
		doc = append(doc, "It also sets next[j] = u[j].")
	}
	function(c, name, sig, doc...)
	u, v, w := pointer(c, "u"), pointer(c, "v"), pointer(c, "w")
	var next reg.GPVirtual
	if keep {
		next = pointer(c, "next")
	}
	den, atol, rtol := broadcast(c, i, "den"), broadcast(c, i, "atol"), broadcast(c, i, "rtol")
	mask, _, m, _, _ := backwardRegs(c, i)
	elementwise(c, i, name, func(at func(reg.GPVirtual) operand.Mem) {
		x, t, d := i.reg(c), i.reg(c), i.reg(c)
		c.VMOVUPD(at(u), x)
		if keep {
			c.VMOVUPD(x, at(next))
		}
		i.and(c, at(w), mask, t)
		i.and(c, x, mask, d)
		c.VMAXPD(t, d, t)
		c.VMULPD(rtol, t, t)
		c.VADDPD(t, atol, t)
		c.VMULPD(t, den, t)
		c.VSUBPD(at(v), x, d)
		i.and(c, d, mask, d)
		c.VDIVPD(t, d, d)
		i.maxAbs(c, d, m, i.reg(c))
	})
	c.Store(i.fold(c, m), c.ReturnIndex(0))
	c.VZEROUPPER()
	c.RET()
}

// emitMix writes the weighted sum of two rows of i: d[j] = wa·a[j] +
// wb·b[j], or with add d[j] = d[j] + (wa·a[j] + wb·b[j]) (the multigrid's
// linear prolongation), for j in [0, cells), cells a multiple of the lanes.
func emitMix(c *build.Context, i isa, add bool) {
	name, formula := "mix"+i.name, "d[j] = wa·a[j] + wb·b[j]"
	if add {
		name, formula = "mixAdd"+i.name, "d[j] = d[j] + (wa·a[j] + wb·b[j])"
	}
	function(c, name, "func(d, a, b *float64, cells int, wa, wb float64)",
		fmt.Sprintf("%s sets, for j in [0, cells), cells a multiple of %d (%s):", name, i.lanes, i.name), "", "\t"+formula, "",
		"each product rounded on its own.")
	d, a, b := pointer(c, "d"), pointer(c, "a"), pointer(c, "b")
	wa, wb := broadcast(c, i, "wa"), broadcast(c, i, "wb")
	elementwise(c, i, name, func(at func(reg.GPVirtual) operand.Mem) {
		x, y := i.reg(c), i.reg(c)
		c.VMULPD(at(a), wa, x)
		c.VMULPD(at(b), wb, y)
		c.VADDPD(y, x, x)
		if add {
			c.VADDPD(at(d), x, x)
		}
		c.VMOVUPD(x, at(d))
	})
	c.VZEROUPPER()
	c.RET()
}

// emitReflect writes the Dirichlet ghost layer's kernel: d[j] = t − m[j]
// (t twice the face's value, m the mirror cells), for j in [0, cells), cells
// a multiple of the lanes.
func emitReflect(c *build.Context, i isa) {
	name := "reflect" + i.name
	function(c, name, "func(d, m *float64, cells int, t float64)",
		fmt.Sprintf("%s sets d[j] = t − m[j] for j in [0, cells), cells a multiple of %d.", name, i.lanes))
	d, m := pointer(c, "d"), pointer(c, "m")
	t := broadcast(c, i, "t")
	elementwise(c, i, name, func(at func(reg.GPVirtual) operand.Mem) {
		x := i.reg(c)
		c.VSUBPD(at(m), t, x)
		c.VMOVUPD(x, at(d))
	})
	c.VZEROUPPER()
	c.RET()
}

// emitMoments writes the diagnostics' pass over a row: for j in [0, cells),
// cells a multiple of 8, cell j into lane j mod 8 of m's minima, maxima,
// sums and sums of squares (stencil.Moments: four arrays of eight lanes
// from m on). VMINPD x, lo returns lo unless x < lo, so a NaN is never
// taken, as in the generic loop's comparisons.
func emitMoments(c *build.Context, i isa) {
	name := "moments" + i.name
	function(c, name, "func(x *float64, cells int, m *float64)",
		fmt.Sprintf("%s adds x[j], j in [0, cells), cells a multiple of 8, to lane j mod 8 of m", name),
		"(minimum, maximum, sum, sum of squares, each product rounded on its own).")
	x, m := pointer(c, "x"), pointer(c, "m")
	per := 8 / i.lanes // vectors a group of eight cells
	acc := make([][]reg.VecVirtual, 4)
	for q := range acc {
		for v := range per {
			r := i.reg(c)
			c.VMOVUPD(operand.Mem{Base: m, Disp: 64*q + 8*i.lanes*v}, r)
			acc[q] = append(acc[q], r)
		}
	}
	end := c.Load(c.Param("cells"), c.GP64())
	c.SHLQ(operand.U8(3), end)
	idx := c.GP64()
	c.XORQ(idx, idx)
	loop, done := name+"_loop", name+"_done"
	c.Label(loop)
	c.CMPQ(idx, end)
	c.JAE(operand.LabelRef(done))
	for v := range per {
		t, sq := i.reg(c), i.reg(c)
		c.VMOVUPD(operand.Mem{Base: x, Index: idx, Scale: 1, Disp: 8 * i.lanes * v}, t)
		c.VMINPD(acc[0][v], t, acc[0][v])
		c.VMAXPD(acc[1][v], t, acc[1][v])
		c.VADDPD(t, acc[2][v], acc[2][v])
		c.VMULPD(t, t, sq)
		c.VADDPD(sq, acc[3][v], acc[3][v])
	}
	c.ADDQ(operand.U32(64), idx)
	c.JMP(operand.LabelRef(loop))
	c.Label(done)
	for q := range acc {
		for v := range per {
			c.VMOVUPD(acc[q][v], operand.Mem{Base: m, Disp: 64*q + 8*i.lanes*v})
		}
	}
	c.VZEROUPPER()
	c.RET()
}

// emitRestrict writes the full-weighting restriction of a coarse row whose
// cells each have two children along x, y (and z in 3D): for j in [0,
// cells),
//
//	d[j] = ((a[2j] + a[2j+1]) + (b[2j] + b[2j+1])) · w                    (2D)
//	d[j] = (((a[2j] + a[2j+1]) + (b[2j] + b[2j+1])) + ((c… ) + (e… ))) · w (3D)
//
// a, b the fine rows of the children in one plane, c, e in the next. The
// pair sums of two vectors of fine cells come out interleaved, (P0, P4, P1,
// P5, …) with AVX-512 and (P0, P2, P1, P3) with AVX2; every later operation
// is lane by lane, so one permutation before the store puts them in order.
func emitRestrict(c *build.Context, i isa, dims int) {
	name := fmt.Sprintf("restrict%dD%s", dims, i.name)
	rows := []string{"a", "b"}
	if dims == 3 {
		rows = append(rows, "c", "e")
	}
	function(c, name, fmt.Sprintf("func(d, %s *float64, cells int, w float64)", strings.Join(rows, ", ")),
		fmt.Sprintf("%s sets d[j], j in [0, cells), cells a multiple of %d, to the mean of its", name, i.lanes),
		fmt.Sprintf("%d children (pairs in rows %s, summed as restrict's generic loop, times w).", 1<<dims, strings.Join(rows, ", ")))
	d := pointer(c, "d")
	src := map[string]reg.GPVirtual{}
	for _, r := range rows {
		src[r] = pointer(c, r)
	}
	w := broadcast(c, i, "w")
	step := 8 * i.lanes
	twofold(c, i, name, func(coarse, fine func(reg.GPVirtual, int) operand.Mem) {
		pair := func(r string) reg.VecVirtual {
			x, lo := i.reg(c), i.reg(c)
			c.VMOVUPD(fine(src[r], 0), x)
			c.VMOVUPD(fine(src[r], step), lo)
			c.VUNPCKLPD(lo, x, lo)
			c.VUNPCKHPD(fine(src[r], step), x, x)
			c.VADDPD(x, lo, lo)
			return lo
		}
		v := pair("a")
		c.VADDPD(pair("b"), v, v)
		if dims == 3 {
			u := pair("c")
			c.VADDPD(pair("e"), u, u)
			c.VADDPD(u, v, v)
		}
		c.VMULPD(w, v, v)
		c.VPERMPD(operand.U8(0xD8), v, v) // lanes (0, 2, 1, 3) of each 256 bits
		if i.lanes == 8 {
			c.VSHUFF64X2(operand.U8(0xD8), v, v, v) // 128-bit lanes (0, 2, 1, 3)
		}
		c.VMOVUPD(v, coarse(d, 0))
	})
	c.VZEROUPPER()
	c.RET()
}

// emitInterp writes the linear interpolation of a coarse row to the fine
// row between its cells' centres: for j in [0, cells), p = s + 1 + j,
//
//	d[2j]   = near·p[0] + far·p[−1]
//	d[2j+1] = near·p[0] + far·p[+1]
//
// (the two children of coarse cell p), each product rounded on its own. The
// even and odd children are computed a vector each, then interleaved.
func emitInterp(c *build.Context, i isa) {
	name := "interp" + i.name
	function(c, name, "func(d, s *float64, cells int, near, far float64)",
		fmt.Sprintf("%s sets d[2j] = near·s[j+1] + far·s[j] and d[2j+1] = near·s[j+1] + far·s[j+2]", name),
		fmt.Sprintf("for j in [0, cells), cells a multiple of %d.", i.lanes))
	d, src := pointer(c, "d"), pointer(c, "s")
	near, far := broadcast(c, i, "near"), broadcast(c, i, "far")
	step := 8 * i.lanes
	twofold(c, i, name, func(coarse, fine func(reg.GPVirtual, int) operand.Mem) {
		mid, ev, od := i.reg(c), i.reg(c), i.reg(c)
		c.VMULPD(coarse(src, 8), near, mid)
		c.VMULPD(coarse(src, 0), far, ev)
		c.VADDPD(ev, mid, ev)
		c.VMULPD(coarse(src, 16), far, od)
		c.VADDPD(od, mid, od)
		lo, hi := i.reg(c), i.reg(c)
		c.VUNPCKLPD(od, ev, lo) // (e0, o0, e2, o2, …)
		c.VUNPCKHPD(od, ev, hi) // (e1, o1, e3, o3, …)
		if i.lanes == 4 {
			c.VPERM2F128(operand.U8(0x20), hi, lo, ev)
			c.VPERM2F128(operand.U8(0x31), hi, lo, od)
		} else {
			// 128-bit lanes L0..L3 of lo and H0..H3 of hi to (L0, H0, L1,
			// H1) and (L2, H2, L3, H3).
			c.VSHUFF64X2(operand.U8(0x44), hi, lo, ev)
			c.VSHUFF64X2(operand.U8(0xD8), ev, ev, ev)
			c.VSHUFF64X2(operand.U8(0xEE), hi, lo, od)
			c.VSHUFF64X2(operand.U8(0xD8), od, od, od)
		}
		c.VMOVUPD(ev, fine(d, 0))
		c.VMOVUPD(od, fine(d, step))
	})
	c.VZEROUPPER()
	c.RET()
}

// emitBackward writes the componentwise backward error's pass of i over
// rows of a dims-D grid (stencil's Backward): for each cell the residual r
// as the residual kernel computes it, the denominator
//
//	den = (c0·|m| + (cx·(|w| + |e|) + cy·(|s| + |n|) [+ cz·(|l| + |u|)])) + max(|f|, data)
//
// and q = |r|/den where den > 0 (ordered), else |r|; it returns the bits
// (sign cleared) of the largest q, |r| and |m| over all rows. The cells
// after a row's whole vectors are done by one more vector ending at the
// row's end: a cell seen twice changes no maximum. The row c is read three
// times unaligned, not shuffled as emit does: AVX2 has no registers to
// spare, and the division, not the loads, bounds a vector.
func emitBackward(c *build.Context, i isa, dims int) {
	name := fmt.Sprintf("backward%dD%s", dims, i.name)
	ops, weights, z, zabs := []string{"s", "n"}, []string{"c0", "cx", "cy"}, "", ""
	if dims == 3 {
		ops, weights = append(ops, "l", "u"), append(weights, "cz")
		z, zabs = " + cz·(l[j] + u[j])", " + cz·(|l[j]| + |u[j]|)"
	}
	ops = append(ops, "f")
	function(c, name, fmt.Sprintf("func(c, %s *float64, cells, rows, stride int, %s, data float64) (omega, res, big uint64)",
		strings.Join(ops, ", "), strings.Join(weights, ", ")),
		fmt.Sprintf("%s returns, over j in [0, cells), cells >= %d (%s; c one cell before the row),", name, i.lanes, i.name),
		"and over rows rows, every operand stride cells after the last, the bits (sign",
		"cleared) of the largest q, |r| and |c[j+1]|, where",
		"",
		fmt.Sprintf("\tr   = f[j] − (c0·c[j+1] − (cx·(c[j] + c[j+2]) + cy·(s[j] + n[j])%s))", z),
		fmt.Sprintf("\tden = (c0·|c[j+1]| + (cx·(|c[j]| + |c[j+2]|) + cy·(|s[j]| + |n[j]|)%s)) + max(|f[j]|, data)", zabs),
		"\tq   = |r|/den where den > 0, else |r|",
		"",
		"each product rounded on its own; a NaN sorts above every number. data must not",
		"be NaN (VMAXPD would drop it).")
	src := pointer(c, "c")
	p := map[string]reg.GPVirtual{}
	for _, o := range ops {
		p[o] = pointer(c, o)
	}
	cells := c.Load(c.Param("cells"), c.GP64())
	c.SHLQ(operand.U8(3), cells)
	rows := c.Load(c.Param("rows"), c.GP64())
	stride := c.Load(c.Param("stride"), c.GP64())
	c.SHLQ(operand.U8(3), stride)
	w := map[string]reg.VecVirtual{}
	for _, name := range append(weights, "data") {
		w[name] = broadcast(c, i, name)
	}
	mask, zero, mq, mr, mm := backwardRegs(c, i)
	step := 8 * i.lanes
	idx, end := c.GP64(), c.GP64()
	c.MOVQ(cells, end)
	c.ANDQ(operand.I32(-int32(step)), end)
	at := func(b reg.GPVirtual, disp int) operand.Mem { return mem(b, idx, disp) }
	body := func() {
		// x = cx·(w + e) and t = cx·(|w| + |e|).
		we, ee, x, t := i.reg(c), i.reg(c), i.reg(c), i.reg(c)
		c.VMOVUPD(at(src, 0), we)
		c.VMOVUPD(at(src, 16), ee)
		c.VADDPD(ee, we, x)
		c.VMULPD(x, w["cx"], x)
		i.and(c, we, mask, we)
		i.and(c, ee, mask, ee)
		c.VADDPD(ee, we, t)
		c.VMULPD(t, w["cx"], t)
		// x += wt·(a + b), t += wt·(|a| + |b|).
		axis := func(a, b, wt string) {
			y, v, z := i.reg(c), i.reg(c), i.reg(c)
			c.VMOVUPD(at(p[a], 0), y)
			c.VMOVUPD(at(p[b], 0), v)
			c.VADDPD(v, y, z)
			c.VMULPD(z, w[wt], z)
			c.VADDPD(z, x, x)
			i.and(c, y, mask, y)
			i.and(c, v, mask, v)
			c.VADDPD(v, y, y)
			c.VMULPD(y, w[wt], y)
			c.VADDPD(y, t, t)
		}
		axis("s", "n", "cy")
		if dims == 3 {
			axis("l", "u", "cz")
		}
		// x = c0·m − x; |m| into its maximum; den = c0·|m| + t.
		m, acc := i.reg(c), i.reg(c)
		c.VMOVUPD(at(src, 8), m)
		c.VMULPD(m, w["c0"], acc)
		c.VSUBPD(x, acc, x)
		i.and(c, m, mask, m)
		i.umax(c, m, mm, acc)
		c.VMULPD(m, w["c0"], m)
		c.VADDPD(m, t, t)
		// r = f − x; den += max(|f|, data) (VMAXPD gives its first operand
		// here where either is NaN: |f|); |r| into its maximum.
		f := i.reg(c)
		c.VMOVUPD(at(p["f"], 0), f)
		c.VSUBPD(x, f, x)
		i.and(c, f, mask, f)
		c.VMAXPD(f, w["data"], f)
		c.VADDPD(f, t, t)
		i.and(c, x, mask, x)
		i.umax(c, x, mr, f)
		// q = |r|/den where den > 0 (_CMP_GT_OQ: false for NaN), else |r|;
		// its sign cleared again (∞/∞ is a NaN with the sign set).
		if i.lanes == 8 {
			k := c.K()
			c.VCMPPD(operand.U8(0x1e), zero, t, k)
			c.VDIVPD(t, x, k, x)
		} else {
			gt, q := i.reg(c), i.reg(c)
			c.VCMPPD(operand.U8(0x1e), zero, t, gt)
			c.VDIVPD(t, x, q)
			c.VBLENDVPD(gt, q, x, x)
		}
		i.and(c, x, mask, x)
		i.umax(c, x, mq, f)
	}
	row, vec, next, done := name+"_row", name+"_vec", name+"_next", name+"_done"
	c.Label(row)
	c.XORQ(idx, idx)
	c.Label(vec)
	c.CMPQ(idx, end)
	c.JAE(operand.LabelRef(next))
	body()
	c.ADDQ(operand.U32(step), idx)
	c.JMP(operand.LabelRef(vec))
	c.Label(next)
	// The overlapping tail vector, where the cells are not whole vectors.
	c.CMPQ(idx, cells)
	c.JE(operand.LabelRef(done))
	c.LEAQ(operand.Mem{Base: cells, Disp: -step}, idx)
	body()
	c.Label(done)
	c.DECQ(rows)
	c.JZ(operand.LabelRef(name + "_end"))
	c.ADDQ(stride, src)
	for _, o := range ops {
		c.ADDQ(stride, p[o])
	}
	c.JMP(operand.LabelRef(row))
	c.Label(name + "_end")
	for r, m := range []reg.VecVirtual{mq, mr, mm} {
		c.Store(i.fold(c, m), c.ReturnIndex(r))
	}
	c.VZEROUPPER()
	c.RET()
}

// backwardRegs are a backward pass's constants, the sign mask 0x7fff… and
// zero (for den > 0), and its maxima, cleared.
func backwardRegs(c *build.Context, i isa) (mask, zero, mq, mr, mm reg.VecVirtual) {
	mask, zero = i.reg(c), i.reg(c)
	bits, low := c.GP64(), c.XMM()
	c.MOVQ(operand.U64(1<<63-1), bits)
	c.VMOVQ(bits, low)
	c.VPBROADCASTQ(low, mask)
	i.zero(c, zero)
	mq, mr, mm = i.reg(c), i.reg(c), i.reg(c)
	for _, m := range []reg.VecVirtual{mq, mr, mm} {
		i.zero(c, m)
	}
	return mask, zero, mq, mr, mm
}

// emitPrefetch writes prefetch: a PREFETCHT0 for each 64-byte line of
// cells float64s from p (a hint: it never faults, and changes no value).
func emitPrefetch(c *build.Context) {
	function(c, "prefetch", "func(p *float64, cells int)",
		"prefetch asks for the cache lines of the cells float64s from p into every cache level.")
	p := pointer(c, "p")
	end := c.Load(c.Param("cells"), c.GP64())
	c.SHLQ(operand.U8(3), end)
	c.ADDQ(p, end)
	c.Label("prefetch_loop")
	c.CMPQ(p, end)
	c.JAE(operand.LabelRef("prefetch_done"))
	c.PREFETCHT0(operand.Mem{Base: p})
	c.ADDQ(operand.U32(64), p)
	c.JMP(operand.LabelRef("prefetch_loop"))
	c.Label("prefetch_done")
	c.RET()
}

// Stencil is the assembly of stencil's kernels and the Go declarations of
// them.
func Stencil() (asm, stubs []byte, err error) {
	c := build.NewContext()
	c.ConstraintExpr("amd64,!purego")
	for _, k := range kernels() {
		for _, i := range isas {
			emit(c, k, i)
		}
	}
	for _, k := range varKernels() {
		for _, i := range isas {
			emitVar(c, k, i)
		}
	}
	for _, dims := range []int{2, 3} {
		for _, i := range isas {
			emitBackward(c, i, dims)
			emitVarBackward(c, i, dims, false)
			emitVarBackward(c, i, dims, true)
		}
	}
	for _, diff := range []bool{true, false} {
		for _, i := range isas {
			emitMax(c, i, diff)
		}
	}
	for _, keep := range []bool{false, true} {
		for _, i := range isas {
			emitStepError(c, i, keep)
		}
	}
	for _, add := range []bool{false, true} {
		for _, i := range isas {
			emitMix(c, i, add)
		}
	}
	for _, i := range isas {
		emitReflect(c, i)
		emitMoments(c, i)
		emitInterp(c, i)
		for _, dims := range []int{2, 3} {
			emitRestrict(c, i, dims)
		}
	}
	emitPrefetch(c)
	c.Function("sfence")
	c.Attributes(attr.NOSPLIT)
	c.Doc("sfence orders the non-temporal stores before it before every store after it.")
	c.SignatureExpr("func()")
	c.SFENCE()
	c.RET()
	f, err := c.Result()
	if err != nil {
		return nil, nil, err
	}
	if err := pass.Compile.Execute(f); err != nil {
		return nil, nil, err
	}
	cfg := printer.Config{Name: "internal/asmgen (go generate ./stencil)", Pkg: "stencil"}
	if asm, err = printer.NewGoAsm(cfg).Print(f); err != nil {
		return nil, nil, err
	}
	if stubs, err = printer.NewStubs(cfg).Print(f); err != nil {
		return nil, nil, err
	}
	return asm, stubs, nil
}
