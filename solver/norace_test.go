//go:build !race

package solver

// raceEnabled says the tests run under the race detector.
const raceEnabled = false
