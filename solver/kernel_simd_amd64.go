//go:build goexperiment.simd && amd64

package solver

import "simd/archsimd"

// The SIMD kernels are their portable twins of kernel_generic.go evaluated
// on whole vectors of cells: 8 per Float64x8 (AVX-512) or 4 per Float64x4
// (AVX2). They are the reference loop of kernel.go (both equations use
// it). Every lane does the twin's operations in its order, each Mul and Add
// rounded on its own (never MulAdd; the compiler fuses no separate vector
// Mul and Add), so it equals the generic kernel's result bit for bit:
//
//	d = ((c0·c + cx·(w + e)) + cy·(s + n)) [+ cz·(l + u)] [+ f]
//
// The cells after the last whole vector (fewer than one vector) go to the
// generic kernel on the tail of the row; a row shorter than one vector (the
// rim's columns are rows of one cell) goes to it at once, without touching
// a vector register. ClearAVXUpperBits runs after the vector loop, before
// any scalar float code (the tail, the caller): after an asynchronous
// preemption the upper halves of the vector registers can stay dirty, and
// scalar SSE code then runs many times slower (shared/refbench/README.md).
//
// Loads and stores take subslices of exactly one vector, x[j:j+V], of
// operands resliced to the row's length, so the compiler proves them in
// bounds. Unrolling by two vectors was measured slower (register spills).
// The tail's operands are built in one composite literal per case: setting
// a field after the literal cost ~10 ns a row.

// bestKernels is the widest set this CPU runs, chosen once at start:
// AVX-512, else AVX2, else generic.
func bestKernels() kernels {
	ks := availableKernels()
	return ks[len(ks)-1]
}

// availableKernels are the sets this build and CPU run, generic first and
// the fastest last.
func availableKernels() []kernels {
	ks := []kernels{generic}
	if archsimd.X86.AVX2() {
		ks = append(ks, avx2)
	}
	if archsimd.X86.AVX512() {
		ks = append(ks, avx512)
	}
	return ks
}

// avx512 is the 8-wide set (Float64x8).
var avx512 = kernels{name: "avx512", heat2D: heat2DAVX512, heat3D: heat3DAVX512}

// avx2 is the 4-wide set (Float64x4).
var avx2 = kernels{name: "avx2", heat2D: heat2DAVX2, heat3D: heat3DAVX2}

// heat2DAVX512 is heat2DGeneric, 8 cells at a time (AVX-512).
func heat2DAVX512(k *stencil, r *rowArgs) {
	const V = 8
	n := len(r.d)
	if n < V {
		heat2DGeneric(k, r)
		return
	}
	d, c := r.d[:n:n], r.c[:n+2:n+2]
	w, m, e := c[0:n:n], c[1:n+1:n+1], c[2:n+2:n+2]
	s, no := r.s[:n:n], r.n[:n:n]
	g := r.f
	if g != nil {
		g = g[:n:n]
	}
	c0 := archsimd.BroadcastFloat64x8(k.c0)
	cx := archsimd.BroadcastFloat64x8(k.cx)
	cy := archsimd.BroadcastFloat64x8(k.cy)
	j := 0
	if g == nil {
		for ; j+V <= n; j += V {
			wv := archsimd.LoadFloat64x8Slice(w[j : j+V])
			mv := archsimd.LoadFloat64x8Slice(m[j : j+V])
			ev := archsimd.LoadFloat64x8Slice(e[j : j+V])
			sv := archsimd.LoadFloat64x8Slice(s[j : j+V])
			nv := archsimd.LoadFloat64x8Slice(no[j : j+V])
			c0.Mul(mv).Add(cx.Mul(wv.Add(ev))).Add(cy.Mul(sv.Add(nv))).StoreSlice(d[j : j+V])
		}
	} else {
		for ; j+V <= n; j += V {
			wv := archsimd.LoadFloat64x8Slice(w[j : j+V])
			mv := archsimd.LoadFloat64x8Slice(m[j : j+V])
			ev := archsimd.LoadFloat64x8Slice(e[j : j+V])
			sv := archsimd.LoadFloat64x8Slice(s[j : j+V])
			nv := archsimd.LoadFloat64x8Slice(no[j : j+V])
			c0.Mul(mv).Add(cx.Mul(wv.Add(ev))).Add(cy.Mul(sv.Add(nv))).Add(archsimd.LoadFloat64x8Slice(g[j : j+V])).StoreSlice(d[j : j+V])
		}
	}
	archsimd.ClearAVXUpperBits()
	if j < n {
		if g == nil {
			heat2DGeneric(k, &rowArgs{d: d[j:], c: c[j:], s: s[j:], n: no[j:]})
		} else {
			heat2DGeneric(k, &rowArgs{d: d[j:], c: c[j:], s: s[j:], n: no[j:], f: g[j:]})
		}
	}
}

// heat3DAVX512 is heat3DGeneric, 8 cells at a time (AVX-512).
func heat3DAVX512(k *stencil, r *rowArgs) {
	const V = 8
	n := len(r.d)
	if n < V {
		heat3DGeneric(k, r)
		return
	}
	d, c := r.d[:n:n], r.c[:n+2:n+2]
	w, m, e := c[0:n:n], c[1:n+1:n+1], c[2:n+2:n+2]
	s, no, lo, up := r.s[:n:n], r.n[:n:n], r.l[:n:n], r.u[:n:n]
	g := r.f
	if g != nil {
		g = g[:n:n]
	}
	c0 := archsimd.BroadcastFloat64x8(k.c0)
	cx := archsimd.BroadcastFloat64x8(k.cx)
	cy := archsimd.BroadcastFloat64x8(k.cy)
	cz := archsimd.BroadcastFloat64x8(k.cz)
	j := 0
	if g == nil {
		for ; j+V <= n; j += V {
			wv := archsimd.LoadFloat64x8Slice(w[j : j+V])
			mv := archsimd.LoadFloat64x8Slice(m[j : j+V])
			ev := archsimd.LoadFloat64x8Slice(e[j : j+V])
			sv := archsimd.LoadFloat64x8Slice(s[j : j+V])
			nv := archsimd.LoadFloat64x8Slice(no[j : j+V])
			lv := archsimd.LoadFloat64x8Slice(lo[j : j+V])
			uv := archsimd.LoadFloat64x8Slice(up[j : j+V])
			c0.Mul(mv).Add(cx.Mul(wv.Add(ev))).Add(cy.Mul(sv.Add(nv))).Add(cz.Mul(lv.Add(uv))).StoreSlice(d[j : j+V])
		}
	} else {
		for ; j+V <= n; j += V {
			wv := archsimd.LoadFloat64x8Slice(w[j : j+V])
			mv := archsimd.LoadFloat64x8Slice(m[j : j+V])
			ev := archsimd.LoadFloat64x8Slice(e[j : j+V])
			sv := archsimd.LoadFloat64x8Slice(s[j : j+V])
			nv := archsimd.LoadFloat64x8Slice(no[j : j+V])
			lv := archsimd.LoadFloat64x8Slice(lo[j : j+V])
			uv := archsimd.LoadFloat64x8Slice(up[j : j+V])
			c0.Mul(mv).Add(cx.Mul(wv.Add(ev))).Add(cy.Mul(sv.Add(nv))).Add(cz.Mul(lv.Add(uv))).Add(archsimd.LoadFloat64x8Slice(g[j : j+V])).StoreSlice(d[j : j+V])
		}
	}
	archsimd.ClearAVXUpperBits()
	if j < n {
		if g == nil {
			heat3DGeneric(k, &rowArgs{d: d[j:], c: c[j:], s: s[j:], n: no[j:], l: lo[j:], u: up[j:]})
		} else {
			heat3DGeneric(k, &rowArgs{d: d[j:], c: c[j:], s: s[j:], n: no[j:], l: lo[j:], u: up[j:], f: g[j:]})
		}
	}
}

// heat2DAVX2 is heat2DGeneric, 4 cells at a time (AVX2).
func heat2DAVX2(k *stencil, r *rowArgs) {
	const V = 4
	n := len(r.d)
	if n < V {
		heat2DGeneric(k, r)
		return
	}
	d, c := r.d[:n:n], r.c[:n+2:n+2]
	w, m, e := c[0:n:n], c[1:n+1:n+1], c[2:n+2:n+2]
	s, no := r.s[:n:n], r.n[:n:n]
	g := r.f
	if g != nil {
		g = g[:n:n]
	}
	c0 := archsimd.BroadcastFloat64x4(k.c0)
	cx := archsimd.BroadcastFloat64x4(k.cx)
	cy := archsimd.BroadcastFloat64x4(k.cy)
	j := 0
	if g == nil {
		for ; j+V <= n; j += V {
			wv := archsimd.LoadFloat64x4Slice(w[j : j+V])
			mv := archsimd.LoadFloat64x4Slice(m[j : j+V])
			ev := archsimd.LoadFloat64x4Slice(e[j : j+V])
			sv := archsimd.LoadFloat64x4Slice(s[j : j+V])
			nv := archsimd.LoadFloat64x4Slice(no[j : j+V])
			c0.Mul(mv).Add(cx.Mul(wv.Add(ev))).Add(cy.Mul(sv.Add(nv))).StoreSlice(d[j : j+V])
		}
	} else {
		for ; j+V <= n; j += V {
			wv := archsimd.LoadFloat64x4Slice(w[j : j+V])
			mv := archsimd.LoadFloat64x4Slice(m[j : j+V])
			ev := archsimd.LoadFloat64x4Slice(e[j : j+V])
			sv := archsimd.LoadFloat64x4Slice(s[j : j+V])
			nv := archsimd.LoadFloat64x4Slice(no[j : j+V])
			c0.Mul(mv).Add(cx.Mul(wv.Add(ev))).Add(cy.Mul(sv.Add(nv))).Add(archsimd.LoadFloat64x4Slice(g[j : j+V])).StoreSlice(d[j : j+V])
		}
	}
	archsimd.ClearAVXUpperBits()
	if j < n {
		if g == nil {
			heat2DGeneric(k, &rowArgs{d: d[j:], c: c[j:], s: s[j:], n: no[j:]})
		} else {
			heat2DGeneric(k, &rowArgs{d: d[j:], c: c[j:], s: s[j:], n: no[j:], f: g[j:]})
		}
	}
}

// heat3DAVX2 is heat3DGeneric, 4 cells at a time (AVX2).
func heat3DAVX2(k *stencil, r *rowArgs) {
	const V = 4
	n := len(r.d)
	if n < V {
		heat3DGeneric(k, r)
		return
	}
	d, c := r.d[:n:n], r.c[:n+2:n+2]
	w, m, e := c[0:n:n], c[1:n+1:n+1], c[2:n+2:n+2]
	s, no, lo, up := r.s[:n:n], r.n[:n:n], r.l[:n:n], r.u[:n:n]
	g := r.f
	if g != nil {
		g = g[:n:n]
	}
	c0 := archsimd.BroadcastFloat64x4(k.c0)
	cx := archsimd.BroadcastFloat64x4(k.cx)
	cy := archsimd.BroadcastFloat64x4(k.cy)
	cz := archsimd.BroadcastFloat64x4(k.cz)
	j := 0
	if g == nil {
		for ; j+V <= n; j += V {
			wv := archsimd.LoadFloat64x4Slice(w[j : j+V])
			mv := archsimd.LoadFloat64x4Slice(m[j : j+V])
			ev := archsimd.LoadFloat64x4Slice(e[j : j+V])
			sv := archsimd.LoadFloat64x4Slice(s[j : j+V])
			nv := archsimd.LoadFloat64x4Slice(no[j : j+V])
			lv := archsimd.LoadFloat64x4Slice(lo[j : j+V])
			uv := archsimd.LoadFloat64x4Slice(up[j : j+V])
			c0.Mul(mv).Add(cx.Mul(wv.Add(ev))).Add(cy.Mul(sv.Add(nv))).Add(cz.Mul(lv.Add(uv))).StoreSlice(d[j : j+V])
		}
	} else {
		for ; j+V <= n; j += V {
			wv := archsimd.LoadFloat64x4Slice(w[j : j+V])
			mv := archsimd.LoadFloat64x4Slice(m[j : j+V])
			ev := archsimd.LoadFloat64x4Slice(e[j : j+V])
			sv := archsimd.LoadFloat64x4Slice(s[j : j+V])
			nv := archsimd.LoadFloat64x4Slice(no[j : j+V])
			lv := archsimd.LoadFloat64x4Slice(lo[j : j+V])
			uv := archsimd.LoadFloat64x4Slice(up[j : j+V])
			c0.Mul(mv).Add(cx.Mul(wv.Add(ev))).Add(cy.Mul(sv.Add(nv))).Add(cz.Mul(lv.Add(uv))).Add(archsimd.LoadFloat64x4Slice(g[j : j+V])).StoreSlice(d[j : j+V])
		}
	}
	archsimd.ClearAVXUpperBits()
	if j < n {
		if g == nil {
			heat3DGeneric(k, &rowArgs{d: d[j:], c: c[j:], s: s[j:], n: no[j:], l: lo[j:], u: up[j:]})
		} else {
			heat3DGeneric(k, &rowArgs{d: d[j:], c: c[j:], s: s[j:], n: no[j:], l: lo[j:], u: up[j:], f: g[j:]})
		}
	}
}
