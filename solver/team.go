package solver

import "sync"

// team is a rank's persistent worker goroutines: they are started once and
// reused every step, because spawning goroutines per step costs more than a
// small grid's update. The calling goroutine works as worker 0.
type team struct {
	n    int
	work []chan func(int)
	wg   sync.WaitGroup
}

func newTeam(n int) *team {
	t := &team{n: n, work: make([]chan func(int), n)}
	for w := 1; w < n; w++ {
		ch := make(chan func(int))
		t.work[w] = ch
		go func() {
			for f := range ch {
				f(w)
				t.wg.Done()
			}
		}()
	}
	return t
}

// run calls f(w) for every worker w in parallel and returns when all are done.
func (t *team) run(f func(w int)) {
	t.wg.Add(t.n - 1)
	for w := 1; w < t.n; w++ {
		t.work[w] <- f
	}
	f(0)
	t.wg.Wait()
}

// close stops the workers.
func (t *team) close() {
	for w := 1; w < t.n; w++ {
		close(t.work[w])
	}
}
