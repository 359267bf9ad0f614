package asmgen

import (
	"fmt"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The variable-coefficient kernels (stencil/varkernel.go): the flux sum
//
//	φ = bx[i]·(u[i+1]−u[i]) − bx[i−1]·(u[i]−u[i−1])
//	  + by[i]·(u[i+sy]−u[i]) − by[i−sy]·(u[i]−u[i−sy])
//	 [+ bz[i]·(u[i+sz]−u[i]) − bz[i−sz]·(u[i]−u[i−sz])]
//
// of each cell, left to right, each product rounded on its own, and then the
// kernel's finish from it. A row's whole vectors come first, two a pass
// while two are left (measured faster than one a pass on a 2D 256² box in
// the caches, though by as much as runs varied by with the fields'
// placement), then
// the cells after them one at a time in VEX scalar code (the same
// operations on lane 0), so that no cell is computed twice: d may be f or a
// cell coefficient (each cell reads its own before it is written), though
// not u nor a face coefficient.
//
// The streaming update (stream) differs only in its stores: each row's
// whole vectors go past the caches (VMOVNTPD), which needs the destination
// aligned to a vector, so a row first does its cells before the first
// aligned one in the scalar code, then the aligned whole vectors streamed,
// then the rest in the scalar code, plainly stored (again no cell twice).

// varOp is what a variable-coefficient kernel computes from φ, in
// stencil's order.
type varOp int

const (
	varUpdate varOp = iota
	varCheck
	varResidual
	varApply
	varSmooth
)

var varOpNames = [...]string{"Update", "Check", "Residual", "Apply", "Smooth"}

// varKernel is one variable-coefficient kernel.
type varKernel struct {
	dims int
	op   varOp
	// opt is the optional operand: the source f of the update and check,
	// the cell coefficient A of the others.
	opt bool
	// stream stores the whole vectors with non-temporal stores (the
	// update only; the file's comment). The caller fences (SFENCE) once
	// its share of a sweep is done, before another core reads the rows.
	stream bool
}

func (k varKernel) name(i isa) string {
	opt := ""
	if k.opt {
		opt = "A"
		if k.op <= varCheck {
			opt = "Src"
		}
	}
	if k.stream {
		opt += "NT"
	}
	return fmt.Sprintf("var%dD%s%s%s", k.dims, varOpNames[k.op], opt, i.name)
}

// varSignature is every variable-coefficient kernel's: the pointers are to
// cell i of the first row of each field (bz, f, a nil where unused; c the
// kernel's cell coefficient S, M or W), sy and sz the strides in cells.
const varSignature = "func(d, u, bx, by, bz, c, f, a *float64, sy, sz, cells, rows, stride int, w float64) uint64"

// usesF and usesA report whether the kernel reads f and a.
func (k varKernel) usesF() bool {
	return k.op == varResidual || k.op == varSmooth || (k.op <= varCheck && k.opt)
}

func (k varKernel) usesA() bool { return k.op >= varResidual && k.opt }

func (k varKernel) doc(i isa) []string {
	au := "0"
	if k.usesA() {
		au = "a[j]·u[j]"
	}
	var formula string
	switch k.op {
	case varUpdate, varCheck:
		formula = "d[j] = u[j] + c[j]·φ"
		if k.opt {
			formula = "d[j] = u[j] + c[j]·(φ + f[j])"
		}
	case varResidual:
		formula = fmt.Sprintf("d[j] = c[j]·(f[j] − (%s − φ))", au)
	case varApply:
		formula = fmt.Sprintf("d[j] = c[j]·(%s − φ)", au)
	case varSmooth:
		formula = fmt.Sprintf("d[j] = u[j] + w·(c[j]·(f[j] − (%s − φ)))", au)
	}
	z := ""
	if k.dims == 3 {
		z = " and z (sz)"
	}
	how := []string{fmt.Sprintf("%s sets, for j in [0, cells), %d cells a vector (%s), the rest one", k.name(i), i.lanes, i.name),
		"at a time:"}
	if k.stream {
		how = []string{fmt.Sprintf("%s sets, for j in [0, cells), d's whole %d-byte-aligned vectors", k.name(i), 8*i.lanes),
			fmt.Sprintf("%d cells a vector (%s) with non-temporal stores, the cells before and", i.lanes, i.name),
			"after them one at a time with plain stores:"}
	}
	doc := append(how,
		"",
		"\t"+formula,
		"",
		fmt.Sprintf("with φ the flux sum of cell j over x, y (sy)%s, each product rounded on its", z),
		"own, summed left to right (stencil/varkernel.go); then the same for each of",
		"rows−1 more rows, every operand stride cells further on (rows ≥ 1, cells ≥ 1).",
	)
	if k.op == varCheck {
		doc = append(doc, "It returns the bits of the largest |d[j] − u[j]| (sign bit cleared).")
	}
	return doc
}

// varKernels are every variable-coefficient kernel stencil uses.
func varKernels() []varKernel {
	var ks []varKernel
	for _, dims := range []int{2, 3} {
		for op := varUpdate; op <= varSmooth; op++ {
			ks = append(ks, varKernel{dims: dims, op: op}, varKernel{dims: dims, op: op, opt: true})
		}
	}
	// Only 2D streams: 3D 256³ on 2 threads was no faster streamed (AVX2
	// 13–17% slower, AVX-512 within the noise), as with the uniform update.
	return append(ks, varKernel{dims: 2, op: varUpdate, stream: true}, varKernel{dims: 2, op: varUpdate, opt: true, stream: true})
}

// width is the instructions of one width of cells: a vector's, or a single
// cell's (the scalar forms, on lane 0 of an XMM register); store writes
// the result to d.
type width struct {
	bytes                     int
	reg                       func() reg.VecVirtual
	mov, add, sub, mul, store func(...operand.Op)
}

// vectorWidth is i's vector; with stream its stores are non-temporal.
func vectorWidth(c *build.Context, i isa, stream bool) width {
	w := width{bytes: 8 * i.lanes, reg: func() reg.VecVirtual { return i.reg(c) },
		mov: c.VMOVUPD, add: c.VADDPD, sub: c.VSUBPD, mul: c.VMULPD, store: c.VMOVUPD}
	if stream {
		w.store = func(ops ...operand.Op) { c.VMOVNTPD(ops[0], ops[1]) }
	}
	return w
}

func scalarWidth(c *build.Context) width {
	return width{bytes: 8, reg: c.XMM, mov: c.VMOVSD, add: c.VADDSD, sub: c.VSUBSD, mul: c.VMULSD, store: c.VMOVSD}
}

// varStreams are the base and index registers a kernel addresses its
// operands with. One index register per distinct neighbour offset (i, i−sy,
// i−sz: three, not the fourteen pointers a 3D smooth would need) and one
// extra base for u (at +sy+sz: u[i+sy] = up + (i−sz), u[i+sz] = up + (i−sy))
// keep every operand of a 3D kernel in 13 general registers.
type varStreams struct {
	d, u, up, bx, by, bz, c, f, a reg.GPVirtual
	i0, is, iz                    reg.GPVirtual
}

func mem(base, index reg.GPVirtual, disp int) operand.Mem {
	return operand.Mem{Base: base, Index: index, Scale: 1, Disp: disp}
}

// neighbourBases loads u and sets up, u's second base (at +sy, and +sz in
// 3D), and the index registers' start values −8·sy and −8·sz into the
// locals negSY and negSZ (varStreams).
func neighbourBases(c *build.Context, three bool, negSY, negSZ operand.Mem) (u, up reg.GPVirtual) {
	u = pointer(c, "u")
	up = c.GP64()
	t := c.GP64()
	c.Load(c.Param("sy"), t)
	c.SHLQ(operand.U8(3), t)
	c.LEAQ(mem(u, t, 0), up)
	c.NEGQ(t)
	c.MOVQ(t, negSY)
	if three {
		t = c.GP64()
		c.Load(c.Param("sz"), t)
		c.SHLQ(operand.U8(3), t)
		c.ADDQ(t, up)
		c.NEGQ(t)
		c.MOVQ(t, negSZ)
	}
	return u, up
}

// rowStart is a row's label and the index registers set to its first cell
// (iz only in 3D, where it was allocated).
func (s varStreams) rowStart(c *build.Context, row string, negSY, negSZ operand.Mem) {
	c.Label(row)
	c.XORQ(s.i0, s.i0)
	c.MOVQ(negSY, s.is)
	if s.iz != nil {
		c.MOVQ(negSZ, s.iz)
	}
}

// emitVar writes one variable-coefficient kernel.
func emitVar(c *build.Context, k varKernel, i isa) {
	name := k.name(i)
	function(c, name, varSignature, k.doc(i)...)
	three := k.dims == 3
	// Locals: the index registers' start values, the row's end in bytes,
	// the rows left; streaming, the end of the row's cells before its
	// first aligned vector.
	negSY, negSZ, cellEnd, rowsLeft := c.AllocLocal(8), c.AllocLocal(8), c.AllocLocal(8), c.AllocLocal(8)
	var headEnd operand.Mem
	if k.stream {
		headEnd = c.AllocLocal(8)
	}
	var s varStreams
	s.u, s.up = neighbourBases(c, three, negSY, negSZ)
	rows := c.Load(c.Param("rows"), c.GP64())
	c.MOVQ(rows, rowsLeft)
	cells := c.Load(c.Param("cells"), c.GP64())
	c.SHLQ(operand.U8(3), cells)
	c.MOVQ(cells, cellEnd)
	// vecEnd: the byte offset after the row's last whole vector (the
	// streaming kernel's: its last aligned one, set at each row).
	vecEnd := cells
	c.ANDQ(operand.I32(-int32(8*i.lanes)), vecEnd)
	vw := vectorWidth(c, i, k.stream)
	s.d, s.bx, s.by, s.c = pointer(c, "d"), pointer(c, "bx"), pointer(c, "by"), pointer(c, "c")
	if three {
		s.bz = pointer(c, "bz")
	}
	if k.usesF() {
		s.f = pointer(c, "f")
	}
	if k.usesA() {
		s.a = pointer(c, "a")
	}
	var wt, zero, macc, sacc reg.VecVirtual
	if k.op == varSmooth {
		wt = broadcast(c, i, "w")
	}
	if k.op >= varResidual && !k.opt {
		zero = i.reg(c)
		i.zero(c, zero)
	}
	if k.op == varCheck {
		macc, sacc = i.reg(c), c.XMM()
		i.zero(c, macc)
		c.VPXOR(sacc, sacc, sacc)
	}
	s.i0, s.is = c.GP64(), c.GP64()
	if three {
		s.iz = c.GP64()
	}
	row, vec, tail, next, end := name+"_row", name+"_vec", name+"_tail", name+"_next", name+"_end"
	s.rowStart(c, row, negSY, negSZ)
	// step moves the index registers on by n bytes.
	step := func(n int) {
		c.ADDQ(operand.U32(n), s.i0)
		c.ADDQ(operand.U32(n), s.is)
		if three {
			c.ADDQ(operand.U32(n), s.iz)
		}
	}
	vcheck := func(d reg.VecVirtual, mid reg.VecVirtual) {
		c.VSUBPD(mid, d, d)
		i.maxAbs(c, d, macc, i.reg(c))
	}
	sw := scalarWidth(c)
	// The scalar values' upper lane is 0 throughout (each chain starts
	// from a VMOVSD load, which clears it, and every result takes its
	// upper lane from such a value), so the check's compare and blend on
	// the whole XMM register keep that lane of sacc 0.
	var x reg.VecVirtual
	if wt != nil {
		x = wt.AsX().(reg.VecVirtual)
	}
	var z reg.VecVirtual
	if zero != nil {
		z = zero.AsX().(reg.VecVirtual)
	}
	scalar := func() {
		varBody(c, k, sw, s, 0, x, z, func(d reg.VecVirtual, mid reg.VecVirtual) {
			c.VSUBSD(mid, d, d)
			isas[0].maxAbs(c, d, sacc, c.XMM()) // compare and blend: plain AVX on XMM
		})
		step(8)
	}
	vec2, head := name+"_vec2", name+"_head"
	if k.stream {
		// The row's cells before d's first aligned vector, headEnd bytes
		// (at most the row's), are done one at a time first; the aligned
		// vectors after them end at vecEnd.
		h := c.GP64()
		c.MOVQ(s.d, h)
		c.NEGQ(h)
		c.ANDQ(operand.U32(vw.bytes-1), h)
		c.CMPQ(h, cellEnd)
		c.CMOVQGT(cellEnd, h)
		c.MOVQ(h, headEnd)
		c.MOVQ(cellEnd, vecEnd)
		c.SUBQ(h, vecEnd)
		c.ANDQ(operand.I32(-int32(vw.bytes)), vecEnd)
		c.ADDQ(h, vecEnd)
	}
	// Two vectors a pass while two are left, then one.
	lim2 := c.GP64()
	c.MOVQ(vecEnd, lim2)
	c.SUBQ(operand.U32(vw.bytes), lim2)
	if k.stream {
		c.Label(head)
		c.CMPQ(s.i0, headEnd)
		c.JAE(operand.LabelRef(vec2))
		scalar()
		c.JMP(operand.LabelRef(head))
	}
	c.Label(vec2)
	c.CMPQ(s.i0, lim2)
	c.JGE(operand.LabelRef(vec))
	varBody(c, k, vw, s, 0, wt, zero, vcheck)
	varBody(c, k, vw, s, vw.bytes, wt, zero, vcheck)
	step(2 * vw.bytes)
	c.JMP(operand.LabelRef(vec2))
	c.Label(vec)
	c.CMPQ(s.i0, vecEnd)
	c.JAE(operand.LabelRef(tail))
	varBody(c, k, vw, s, 0, wt, zero, vcheck)
	step(vw.bytes)
	c.JMP(operand.LabelRef(vec))
	c.Label(tail)
	c.CMPQ(s.i0, cellEnd)
	c.JAE(operand.LabelRef(next))
	scalar()
	c.JMP(operand.LabelRef(tail))
	c.Label(next)
	c.DECQ(rowsLeft)
	c.JZ(operand.LabelRef(end))
	stride := c.Load(c.Param("stride"), c.GP64())
	c.SHLQ(operand.U8(3), stride)
	for _, b := range []reg.GPVirtual{s.d, s.u, s.up, s.bx, s.by, s.bz, s.c, s.f, s.a} {
		if b != nil {
			c.ADDQ(stride, b)
		}
	}
	c.JMP(operand.LabelRef(row))
	c.Label(end)
	if k.op == varCheck {
		m := i.fold(c, macc)
		u := c.GP64()
		c.VMOVQ(sacc, u)
		c.CMPQ(u, m)
		c.CMOVQHI(u, m)
		c.Store(m, c.ReturnIndex(0))
	} else {
		r := c.GP64()
		c.XORQ(r, r)
		c.Store(r, c.ReturnIndex(0))
	}
	c.VZEROUPPER()
	c.RET()
}

// varBody computes one width of cells at the index registers plus off
// bytes: φ, then the kernel's finish, stored to d; check, for the check
// kernel, folds the change (it gets the new value, to overwrite, and u).
func varBody(c *build.Context, k varKernel, v width, s varStreams, off int, wt, zero reg.VecVirtual, check func(d, mid reg.VecVirtual)) {
	// m is an operand at the index register plus off and disp bytes.
	m := func(base, index reg.GPVirtual, disp int) operand.Mem { return mem(base, index, off+disp) }
	mid, t, phi := v.reg(), v.reg(), v.reg()
	v.mov(m(s.u, s.i0, 0), mid)
	// φ = bx[i]·(u[i+1] − mid) − bx[i−1]·(mid − u[i−1])
	v.mov(m(s.u, s.i0, 8), t)
	v.sub(mid, t, t)
	v.mul(m(s.bx, s.i0, 0), t, t)
	v.sub(m(s.u, s.i0, -8), mid, phi)
	v.mul(m(s.bx, s.i0, -8), phi, phi)
	v.sub(phi, t, phi)
	// + b[i]·(u[i+s] − mid) − b[i−s]·(mid − u[i−s]) for y, then z.
	axis := func(b reg.GPVirtual, plus, minus operand.Mem, below reg.GPVirtual) {
		v.mov(plus, t)
		v.sub(mid, t, t)
		v.mul(m(b, s.i0, 0), t, t)
		v.add(t, phi, phi)
		v.sub(minus, mid, t)
		v.mul(m(b, below, 0), t, t)
		v.sub(t, phi, phi)
	}
	if k.dims == 2 {
		axis(s.by, m(s.up, s.i0, 0), m(s.u, s.is, 0), s.is)
	} else {
		axis(s.by, m(s.up, s.iz, 0), m(s.u, s.is, 0), s.is)
		axis(s.bz, m(s.up, s.is, 0), m(s.u, s.iz, 0), s.iz)
	}
	at := func(b reg.GPVirtual) operand.Mem { return m(b, s.i0, 0) }
	switch k.op {
	case varUpdate, varCheck:
		// d = mid + c·(φ [+ f])
		if k.opt {
			v.add(at(s.f), phi, phi)
		}
		v.mul(at(s.c), phi, phi)
		v.add(phi, mid, phi)
		v.store(phi, at(s.d))
		if k.op == varCheck {
			check(phi, mid)
		}
		return
	}
	// t = a·mid − φ, or 0 − φ without a.
	if k.opt {
		v.mul(at(s.a), mid, t)
		v.sub(phi, t, t)
	} else {
		v.sub(phi, zero, t)
	}
	switch k.op {
	case varApply:
		v.mul(at(s.c), t, t)
	case varResidual, varSmooth:
		// f − t
		v.mov(at(s.f), phi)
		v.sub(t, phi, t)
		v.mul(at(s.c), t, t)
		if k.op == varSmooth {
			v.mul(wt, t, t)
			v.add(t, mid, t)
		}
	}
	v.store(t, at(s.d))
}

// varBackwardSignature is the variable-coefficient backward error's pass:
// pointers to cell i of the first row of u, the face coefficients, the
// mask M, f and A (bz nil in 2D, a nil without A), the strides, the cells
// of a row (at least a vector's), the rows and the stride between them in
// cells, and the data scale.
const varBackwardSignature = "func(u, bx, by, bz, m, f, a *float64, sy, sz, cells, rows, stride int, data float64) (omega, res, big uint64)"

// emitVarBackward writes the backward error's pass of variable
// coefficients (stencil/varbackward.go): per cell φ as the other kernels
// compute it, the residual r = M·(f − (a·u − φ)) of the residual kernel,
// t = |a·u| + Σ b·(|u'| + |u|) over the faces in the generic's order, and
// the maxima of |r|/(t + max(|f|, data)) over the cells with M ≠ 0, of |r|
// and of |u|. It stores nothing, so a row's cells after its whole vectors
// are one more vector ending at the row's end, computed again from the same
// operands (a maximum does not mind a cell seen twice).
func emitVarBackward(c *build.Context, i isa, dims int, withA bool) {
	opt := ""
	au := "0"
	if withA {
		opt, au = "A", "a[j]·u[j]"
	}
	name := fmt.Sprintf("var%dDBackward%s%s", dims, opt, i.name)
	z, zt := "", ""
	if dims == 3 {
		z, zt = " and z (sz)", " + bz[j]·(|u[j+sz]| + |u[j]|) + bz[j−sz]·(|u[j]| + |u[j−sz]|)"
	}
	first := ""
	if withA {
		first = "|a[j]·u[j]| + "
	}
	function(c, name, varBackwardSignature,
		fmt.Sprintf("%s returns, over j in [0, cells), cells >= %d (%s), and over rows rows,", name, i.lanes, i.name),
		"every operand stride cells after the last, the bits (sign cleared) of the largest",
		"q over the cells with m[j] ≠ 0, of the largest |r| and of the largest |u[j]|, where",
		"",
		fmt.Sprintf("\tr   = m[j]·(f[j] − (%s − φ))", au),
		fmt.Sprintf("\tt   = %sbx[j]·(|u[j+1]| + |u[j]|) + bx[j−1]·(|u[j]| + |u[j−1]|)", first),
		fmt.Sprintf("\t      + by[j]·(|u[j+sy]| + |u[j]|) + by[j−sy]·(|u[j]| + |u[j−sy]|)%s", zt),
		"\tq   = |r|/(t + max(|f[j]|, data)) where that is > 0, else |r|",
		"",
		fmt.Sprintf("with φ the flux sum of cell j over x, y (sy)%s (stencil/varkernel.go),", z),
		"each product rounded on its own, summed left to right; a NaN sorts above every",
		"number. data must not be NaN (VMAXPD would drop it).")
	three := dims == 3
	var s varStreams
	negSY, negSZ := c.AllocLocal(8), c.AllocLocal(8)
	s.u, s.up = neighbourBases(c, three, negSY, negSZ)
	rowsLeft, cellEnd, vecEnd := c.AllocLocal(8), c.AllocLocal(8), c.AllocLocal(8)
	rows := c.Load(c.Param("rows"), c.GP64())
	c.MOVQ(rows, rowsLeft)
	cells := c.Load(c.Param("cells"), c.GP64())
	c.SHLQ(operand.U8(3), cells)
	c.MOVQ(cells, cellEnd)
	step := 8 * i.lanes
	c.ANDQ(operand.I32(-int32(step)), cells)
	c.MOVQ(cells, vecEnd)
	s.bx, s.by, s.c, s.f = pointer(c, "bx"), pointer(c, "by"), pointer(c, "m"), pointer(c, "f")
	if three {
		s.bz = pointer(c, "bz")
	}
	if withA {
		s.a = pointer(c, "a")
	}
	data := broadcast(c, i, "data")
	mask, zero, mq, mr, mm := backwardRegs(c, i)
	s.i0, s.is = c.GP64(), c.GP64()
	if three {
		s.iz = c.GP64()
	}
	// abs sets dst = |x| (x a register or memory).
	abs := func(x operand.Op, dst reg.VecVirtual) { i.and(c, x, mask, dst) }
	body := func() {
		m := func(base, index reg.GPVirtual, disp int) operand.Mem { return mem(base, index, disp) }
		at := func(b reg.GPVirtual) operand.Mem { return m(b, s.i0, 0) }
		mid, am, phi, tt, x, y := i.reg(c), i.reg(c), i.reg(c), i.reg(c), i.reg(c), i.reg(c)
		c.VMOVUPD(at(s.u), mid)
		abs(mid, am)
		// φ = bx[i]·(u[i+1] − mid) − bx[i−1]·(mid − u[i−1]), as varBody.
		c.VMOVUPD(m(s.u, s.i0, 8), x)
		c.VSUBPD(mid, x, y)
		c.VMULPD(at(s.bx), y, y)
		c.VSUBPD(m(s.u, s.i0, -8), mid, phi)
		c.VMULPD(m(s.bx, s.i0, -8), phi, phi)
		c.VSUBPD(phi, y, phi)
		// t = [|a·mid| +] bx[i]·(|u[i+1]| + |mid|) + bx[i−1]·(|mid| + |u[i−1]|).
		abs(x, x)
		c.VADDPD(am, x, x)
		c.VMULPD(at(s.bx), x, tt)
		var au reg.VecVirtual
		if withA {
			au = i.reg(c)
			c.VMULPD(at(s.a), mid, au)
			abs(au, y)
			c.VADDPD(tt, y, tt)
		}
		c.VMOVUPD(m(s.u, s.i0, -8), x)
		abs(x, x)
		c.VADDPD(x, am, x)
		c.VMULPD(m(s.bx, s.i0, -8), x, x)
		c.VADDPD(x, tt, tt)
		// The y and z axes: φ += b[i]·(u[i+s] − mid) − b[i−s]·(mid − u[i−s]),
		// t += b[i]·(|u[i+s]| + |mid|) + b[i−s]·(|mid| + |u[i−s]|).
		axis := func(b reg.GPVirtual, plus, minus operand.Mem, below reg.GPVirtual) {
			c.VMOVUPD(plus, x)
			c.VSUBPD(mid, x, y)
			c.VMULPD(at(b), y, y)
			c.VADDPD(y, phi, phi)
			c.VMOVUPD(minus, y)
			// y is u[i−s]; φ −= b[i−s]·(mid − y) after t's first term.
			abs(x, x)
			c.VADDPD(am, x, x)
			c.VMULPD(at(b), x, x)
			c.VADDPD(x, tt, tt)
			c.VSUBPD(y, mid, x)
			c.VMULPD(m(b, below, 0), x, x)
			c.VSUBPD(x, phi, phi)
			abs(y, y)
			c.VADDPD(y, am, y)
			c.VMULPD(m(b, below, 0), y, y)
			c.VADDPD(y, tt, tt)
		}
		if three {
			axis(s.by, m(s.up, s.iz, 0), m(s.u, s.is, 0), s.is)
			axis(s.bz, m(s.up, s.is, 0), m(s.u, s.iz, 0), s.iz)
		} else {
			axis(s.by, m(s.up, s.i0, 0), m(s.u, s.is, 0), s.is)
		}
		// |mid| into its maximum.
		i.umax(c, am, mm, x)
		// r = m·(f − (a·mid − φ)), or m·(f − (0 − φ)).
		if withA {
			c.VSUBPD(phi, au, phi)
		} else {
			c.VSUBPD(phi, zero, phi)
		}
		f := i.reg(c)
		c.VMOVUPD(at(s.f), f)
		c.VSUBPD(phi, f, phi)
		c.VMULPD(at(s.c), phi, phi)
		// den = t + max(|f|, data) (VMAXPD gives its second source, |f|,
		// where either is NaN); |r| into its maximum.
		abs(f, f)
		c.VMAXPD(f, data, f)
		c.VADDPD(f, tt, tt)
		abs(phi, phi)
		c.VMOVAPD(phi, y)
		i.umax(c, y, mr, x)
		// q = |r|/den where den > 0 (_CMP_GT_OQ: false for NaN), else |r|,
		// its sign cleared again (∞/∞ is a NaN with the sign set), into its
		// maximum where m ≠ 0 (_CMP_NEQ_UQ).
		if i.lanes == 8 {
			k, free := c.K(), c.K()
			c.VCMPPD(operand.U8(0x1e), zero, tt, k)
			c.VDIVPD(tt, phi, k, phi)
			abs(phi, phi)
			c.VCMPPD(operand.U8(0x04), at(s.c), zero, free)
			c.VPMAXUQ(phi, mq, free, mq)
		} else {
			gt, q := i.reg(c), i.reg(c)
			c.VCMPPD(operand.U8(0x1e), zero, tt, gt)
			c.VDIVPD(tt, phi, q)
			c.VBLENDVPD(gt, q, phi, phi)
			abs(phi, phi)
			c.VMOVUPD(at(s.c), q)
			c.VCMPPD(operand.U8(0x04), zero, q, gt)
			c.VANDPD(gt, phi, phi)
			i.umax(c, phi, mq, q)
		}
	}
	row, vec, next, done, end := name+"_row", name+"_vec", name+"_next", name+"_done", name+"_end"
	s.rowStart(c, row, negSY, negSZ)
	c.Label(vec)
	c.CMPQ(s.i0, vecEnd)
	c.JAE(operand.LabelRef(next))
	body()
	for _, r := range []reg.GPVirtual{s.i0, s.is, s.iz} {
		if r != nil {
			c.ADDQ(operand.U32(step), r)
		}
	}
	c.JMP(operand.LabelRef(vec))
	c.Label(next)
	// The overlapping tail vector, where the cells are not whole vectors:
	// the index registers moved back to cellEnd − a vector.
	d := c.GP64()
	c.MOVQ(cellEnd, d)
	c.SUBQ(s.i0, d)
	c.JZ(operand.LabelRef(done))
	c.SUBQ(operand.U32(step), d)
	for _, r := range []reg.GPVirtual{s.i0, s.is, s.iz} {
		if r != nil {
			c.ADDQ(d, r)
		}
	}
	body()
	c.Label(done)
	c.DECQ(rowsLeft)
	c.JZ(operand.LabelRef(end))
	stride := c.Load(c.Param("stride"), c.GP64())
	c.SHLQ(operand.U8(3), stride)
	for _, b := range []reg.GPVirtual{s.u, s.up, s.bx, s.by, s.bz, s.c, s.f, s.a} {
		if b != nil {
			c.ADDQ(stride, b)
		}
	}
	c.JMP(operand.LabelRef(row))
	c.Label(end)
	for r, m := range []reg.VecVirtual{mq, mr, mm} {
		c.Store(i.fold(c, m), c.ReturnIndex(r))
	}
	c.VZEROUPPER()
	c.RET()
}
