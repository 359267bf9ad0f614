package benchmarks

import (
	"fmt"
	"io"
	"strings"
	"time"

	"heat/decomp"
)

// ModelFormula is the model of Model.Predict as summary.md states it.
const ModelFormula = "T_step(P) = N_box·t_cell + Σ_faces (α + 8 B·A_face·β) + c·⌈log2 P⌉·α"

// WriteSummary writes the study as Markdown: what was run where, one table
// row per point, the model's predictions, and the plots.
func WriteSummary(w io.Writer, st *Study) error {
	r := st.Record
	var b strings.Builder
	fmt.Fprintf(&b, "# heat bench %s\n\n", r.Kind)
	fmt.Fprintf(&b, "Command: `%s`  \n", shellJoin(r.Command))
	fmt.Fprintf(&b, "Started %s; %d runs in %s.\n\n", r.Start.Format(time.RFC3339), len(st.Runs), r.End.Sub(r.Start).Round(time.Second))
	grid := "the same grid at every point"
	if r.Kind == Weak {
		grid = "cells per core; each point's grid is this one with every axis times the factor of its cores that " +
			"the process grid over it would have (shape column)"
	}
	fmt.Fprintf(&b, "Problem: `heat run %s`: %s, %s; %d steps; transport %s", shellJoin(r.RunArgs), decomp.FormatDims(r.Shape), grid, r.Steps, r.Transport)
	if r.Launcher != "" {
		fmt.Fprintf(&b, " (launcher `%s`)", r.Launcher)
	}
	fmt.Fprintf(&b, "; %d repetitions per point.  \n", r.Reps)
	rev := r.Version
	if r.Revision != "" {
		rev += " (" + r.Revision + ")"
	}
	cpu := r.CPUModel
	if cpu == "" {
		cpu = "unknown CPU"
	}
	fmt.Fprintf(&b, "Machine: %s, %d CPUs, host %s (ranks ran on %s); heat %s, %s %s/%s.\n\n", cpu, r.NumCPU, r.Host,
		strings.Join(r.Hosts, ", "), rev, r.GoVersion, r.OS, r.Arch)

	checks := st.Checks()
	head, rule := "| point | ranks | threads | shape | t/step median (ms) | min | max | spread |", "|---:|---:|---:|---|---:|---:|---:|---:|"
	if st.Model != nil {
		head, rule = head+" model (ms) | model error |", rule+"---:|---:|"
	}
	b.WriteString(head + " Mupdates/s | speedup | efficiency | compute % | halo % | reduce % | io % | other % | msgs/step | bytes/step | imbalance | slowest rank |\n")
	b.WriteString(rule + "---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for i, p := range st.Points {
		m, pc, c := p.Rep, p.pct(), checks[i]
		fmt.Fprintf(&b, "| %d | %d | %d | %s | %.4g | %.4g | %.4g | %s |", p.Point, p.Ranks, p.Threads, decomp.FormatDims(m.Shape),
			p.StepMedianS*1e3, p.StepMinS*1e3, p.StepMaxS*1e3, flagged(c.Spread, pct, c.Noisy, noisyMark))
		if st.Model != nil {
			fmt.Fprintf(&b, " %s | %s |", flagged(c.ModelS*1e3, func(x float64) string { return fmt.Sprintf("%.4g", x) }, false, ""),
				flagged(c.ModelErr, signedPct, c.ModelMiss, missMark))
		}
		fmt.Fprintf(&b, " %.1f | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | %.3g | %s | %.3f | %d (+%.1f%%) |\n",
			p.MUpdatesS, p.Speedup, p.Efficiency, pc.Compute, pc.HaloWait, pc.Reduce, pc.IO(), pc.Other,
			m.MessagesPerStep, humanBytes(m.BytesPerStep), m.Imbalance, m.Slowest, m.SlowestExcessPct)
	}
	speedup := "t_base/t"
	if r.Kind == Weak {
		speedup = "(cells/cells_base)·t_base/t, the scaled speedup"
	}
	fmt.Fprintf(&b, "\nTimes per step (wall_s/steps) are over all repetitions; the split of wall time (mean over ranks, %%), "+
		"traffic and balance come from each point's median repetition. Speedup = %s against the point with the fewest cores; "+
		"efficiency = speedup/(cores/cores_base). Imbalance = max/mean compute time over ranks; the slowest rank has the most "+
		"compute time, +%% over the median rank.\n", speedup)
	writeChecks(&b, st, checks)

	if st.Model != nil {
		writeModelSummary(&b, st)
	}
	b.WriteString("\n![speedup](speedup.png) ![efficiency](efficiency.png)\n\n![breakdown](breakdown.png)")
	if st.Model != nil {
		b.WriteString(" ![model](model.png)")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeModelSummary(b *strings.Builder, st *Study) {
	m := st.Model
	fmt.Fprintf(b, "\n## Performance model\n\n`%s`\n\n", ModelFormula)
	fmt.Fprintf(b, "Measured network (ping-pong through the %s transport, %s): %s.  \n", st.Network.Transport, sizeRange(st.Network.Samples), m.Network)
	if st.Target != nil {
		fmt.Fprintf(b, "Target network: %s.  \n", *st.Target)
	}
	fmt.Fprintf(b, "t_cell = %.3g ns per cell and step (the slowest rank of the smallest point, with %d thread(s) per rank); "+
		"c = %.3g collectives per step. N_box: the largest box of the process grid decomp picks for P ranks; faces: "+
		"the busiest rank's neighbours, 8 B per face cell (A_face), one exchange per step; nothing overlapped.\n\n",
		m.TCell*1e9, m.Threads, m.CollectivesPerStep)
	measured := map[int]float64{}
	for _, p := range st.Points {
		if p.Threads == m.Threads {
			measured[p.Ranks] = p.StepMedianS
		}
	}
	most := st.measuredRanks()
	fmt.Fprintf(b, "Every figure below is the model's; the last column is the measured median beside it where a point with "+
		"%d thread(s) per rank ran. Rows past %d ranks, the most measured, are the model extrapolated, not measurements.\n\n",
		m.Threads, most)
	head := "| row | ranks | cores | shape | dims | compute (ms) | halo (ms) | collectives (ms) | T_step (ms) | speedup | efficiency | measured (ms) |"
	rule := "|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"
	if st.Target != nil {
		head += " target T_step (ms) | target speedup | target efficiency |"
		rule += "---:|---:|---:|"
	}
	b.WriteString(head + "\n" + rule + "\n")
	for i, p := range st.Predicted {
		row, meas := "model", ""
		if t, ok := measured[p.Ranks]; ok {
			row, meas = "model vs measured", fmt.Sprintf("%.4g", t*1e3)
		} else if p.Ranks > most {
			row = "model (extrapolated)"
		}
		fmt.Fprintf(b, "| %s | %d | %d | %s | %s | %.4g | %.4g | %.4g | %.4g | %.4g | %.3f | %s |", row, p.Ranks, p.Cores,
			decomp.FormatDims(p.Shape), decomp.FormatDims(p.Dims), p.ComputeS*1e3, p.HaloS*1e3, p.CollectS*1e3,
			p.StepS*1e3, p.Speedup, p.Efficiency, meas)
		if st.Target != nil {
			if i < len(st.TargetPredicted) {
				t := st.TargetPredicted[i]
				fmt.Fprintf(b, " %.4g | %.4g | %.3f |", t.StepS*1e3, t.Speedup, t.Efficiency)
			} else {
				b.WriteString(" | | |")
			}
		}
		b.WriteString("\n")
	}
}

// sizeRange says which message sizes a sweep covered: "8 B – 8.0 MiB, 8 sizes".
func sizeRange(s []PingPongSample) string {
	if len(s) == 0 {
		return "no sizes"
	}
	return fmt.Sprintf("%s – %s, %d sizes", humanBytes(float64(s[0].Bytes)), humanBytes(float64(s[len(s)-1].Bytes)), len(s))
}

// humanBytes writes a byte count with a binary unit: "512 B", "64.0 KiB".
func humanBytes(x float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for x >= 1024 && i < len(units)-1 {
		x /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", x)
	}
	return fmt.Sprintf("%.1f %s", x, units[i])
}

// shellJoin writes args as a shell would need them typed, quoting any word
// with characters the shell treats specially ([, *, spaces, quotes).
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		safe := a != ""
		for _, c := range a {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=:,+@%", c)) {
				safe = false
				break
			}
		}
		if safe {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
