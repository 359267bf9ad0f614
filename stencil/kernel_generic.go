package stencil

// The generic Set are plain Go loops the compiler proves in bounds. The
// heat Set carry the west and centre values in registers from one cell
// to the next and do two cells per iteration; the arithmetic per cell is the
// reference loop's (kernel.go).

func heat2DGeneric(k *Coeffs, r *Row) {
	d := r.D
	c := r.C[:len(d)+2]
	e := c[2:]
	e = e[:len(d)]
	s, no := r.S[:len(d)], r.N[:len(d)]
	c0, cx, cy := k.C0, k.CX, k.CY
	west, mid := c[0], c[1]
	if r.F == nil {
		j := 0
		for ; j < len(d)-1; j += 2 {
			e0, e1 := e[j], e[j+1]
			d[j] = float64(c0*mid) + float64(cx*(west+e0)) + float64(cy*(s[j]+no[j]))
			d[j+1] = float64(c0*e0) + float64(cx*(mid+e1)) + float64(cy*(s[j+1]+no[j+1]))
			west, mid = e0, e1
		}
		for ; j < len(d); j++ {
			east := e[j]
			d[j] = float64(c0*mid) + float64(cx*(west+east)) + float64(cy*(s[j]+no[j]))
			west, mid = mid, east
		}
		return
	}
	g, cf := r.F[:len(d)], k.CF
	for j := range d {
		east := e[j]
		d[j] = float64(c0*mid) + float64(cx*(west+east)) + float64(cy*(s[j]+no[j])) + float64(cf*g[j])
		west, mid = mid, east
	}
}

func heat3DGeneric(k *Coeffs, r *Row) {
	d := r.D
	c := r.C[:len(d)+2]
	e := c[2:]
	e = e[:len(d)]
	s, no, lo, up := r.S[:len(d)], r.N[:len(d)], r.L[:len(d)], r.U[:len(d)]
	c0, cx, cy, cz := k.C0, k.CX, k.CY, k.CZ
	west, mid := c[0], c[1]
	if r.F == nil {
		j := 0
		for ; j < len(d)-1; j += 2 {
			e0, e1 := e[j], e[j+1]
			d[j] = float64(c0*mid) + float64(cx*(west+e0)) + float64(cy*(s[j]+no[j])) + float64(cz*(lo[j]+up[j]))
			d[j+1] = float64(c0*e0) + float64(cx*(mid+e1)) + float64(cy*(s[j+1]+no[j+1])) + float64(cz*(lo[j+1]+up[j+1]))
			west, mid = e0, e1
		}
		for ; j < len(d); j++ {
			east := e[j]
			d[j] = float64(c0*mid) + float64(cx*(west+east)) + float64(cy*(s[j]+no[j])) + float64(cz*(lo[j]+up[j]))
			west, mid = mid, east
		}
		return
	}
	g, cf := r.F[:len(d)], k.CF
	for j := range d {
		east := e[j]
		d[j] = float64(c0*mid) + float64(cx*(west+east)) + float64(cy*(s[j]+no[j])) + float64(cz*(lo[j]+up[j])) + float64(cf*g[j])
		west, mid = mid, east
	}
}

func residual2DGeneric(k *Coeffs, r *Row) {
	d := r.D
	c, s, n, f := r.C[:len(d)+2], r.S[:len(d)], r.N[:len(d)], r.F[:len(d)]
	for j := range d {
		d[j] = f[j] - (float64(k.C0*c[j+1]) - (float64(k.CX*(c[j]+c[j+2])) + float64(k.CY*(s[j]+n[j]))))
	}
}

func residual3DGeneric(k *Coeffs, r *Row) {
	d := r.D
	c, s, n, f := r.C[:len(d)+2], r.S[:len(d)], r.N[:len(d)], r.F[:len(d)]
	lo, up := r.L[:len(d)], r.U[:len(d)]
	for j := range d {
		d[j] = f[j] - (float64(k.C0*c[j+1]) - (float64(k.CX*(c[j]+c[j+2])) + float64(k.CY*(s[j]+n[j])) + float64(k.CZ*(lo[j]+up[j]))))
	}
}
