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
	s.u = pointer(c, "u")
	s.up = c.GP64()
	t := c.GP64()
	c.Load(c.Param("sy"), t)
	c.SHLQ(operand.U8(3), t)
	c.LEAQ(mem(s.u, t, 0), s.up)
	c.NEGQ(t)
	c.MOVQ(t, negSY)
	if three {
		t = c.GP64()
		c.Load(c.Param("sz"), t)
		c.SHLQ(operand.U8(3), t)
		c.ADDQ(t, s.up)
		c.NEGQ(t)
		c.MOVQ(t, negSZ)
	}
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
	c.Label(row)
	c.XORQ(s.i0, s.i0)
	c.MOVQ(negSY, s.is)
	if three {
		c.MOVQ(negSZ, s.iz)
	}
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
