// Package benchmarks measures heat on the machine it runs on: the kernel's
// speed against the memory-bandwidth ceiling (a roofline point per grid
// size, thread count and temporal-blocking depth). `heat bench` drives it.
package benchmarks
