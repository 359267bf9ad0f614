package decomp

// Span is a run of cells along the last axis: flat index of the first, count.
type Span struct{ Start, N int }

// Run is Count rows of N cells, the first at flat index Start, each the
// next row (SY cells on) of the last: one call of a RowsKernel.
type Run struct{ Start, N, Count int }

// Runs groups rows into runs of equal rows one y-stride sy apart, in order.
func Runs(rows []Span, sy int) []Run {
	var out []Run
	for _, r := range rows {
		if k := len(out) - 1; k >= 0 && out[k].N == r.N && out[k].Start+out[k].Count*sy == r.Start {
			out[k].Count++
			continue
		}
		out = append(out, Run{Start: r.Start, N: r.N, Count: 1})
	}
	return out
}

// Shares splits rows among t workers by cell count: worker w takes
// rows[share[w]:share[w+1]].
func Shares(rows []Span, t int) []int {
	total := 0
	for _, r := range rows {
		total += r.N
	}
	share := make([]int, t+1)
	acc, w := 0, 1
	for i, r := range rows {
		acc += r.N
		for w < t && acc*t >= w*total {
			share[w] = i + 1
			w++
		}
	}
	for ; w <= t; w++ {
		share[w] = len(rows)
	}
	return share
}
